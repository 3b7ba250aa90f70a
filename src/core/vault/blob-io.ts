import type { FileHandle } from 'node:fs/promises';

import {
  batchPlans,
  batchShape,
  plaintextViews,
  recordsLength,
  type BatchPlan,
} from '../crypto/chunk-batch.js';
import {
  BLOB_HEADER_BYTES,
  runHere,
  type BatchExecutor,
  type BatchResult,
  type ChunkCipher,
} from '../crypto/content.js';
import {
  systemError,
  type StripeExecutor,
  type StripeOutcome,
  type StripeRequest,
} from '../crypto/file-stripe.js';
import { badPaddingAt, blobPlaintextSize, contentPart, fillPadding } from '../crypto/padding.js';
import type { SodiumBackend } from '../crypto/sodium.js';
import { CancelledError } from '../errors.js';

/** Chunks per batch when no worker pool runs (in-thread batches need no round trip to amortise). */
const INLINE_BATCH_CHUNKS = 16;
const INLINE_IN_FLIGHT = 1;

/** Where the crypto runs, and the thread's own backend for when there is no pool. */
export interface CryptoPlace {
  readonly sodium: SodiumBackend;
  /** Worker threads that run batches, or whole files as stripes. */
  readonly executor: (BatchExecutor & StripeExecutor) | undefined;
}

/** Reads bytes at a position: a file, a blob in a pack, or a blob held in memory. */
export interface ByteSource {
  readv(views: Uint8Array[], position: number): Promise<number>;
  /**
   * The open file behind the bytes, which worker threads may read themselves, and what a failed read of it
   * becomes; absent for bytes in memory.
   */
  readonly file?: { readonly fd: number; readError(error: unknown): unknown };
}

/** A file as a byte source; `readError` turns a failed read into the error callers should see. */
export function fileSource(
  handle: FileHandle,
  readError: (error: unknown) => unknown = (error) => error,
): ByteSource {
  return {
    readv: async (views, position) => {
      try {
        return (await handle.readv(views, position)).bytesRead;
      } catch (error) {
        throw readError(error);
      }
    },
    file: { fd: handle.fd, readError },
  };
}

/**
 * Where opened plaintext goes: a file, written at each chunk's offset in no particular order (worker threads may
 * write it themselves); a function that receives it batch by batch, in order, whose views are only valid until
 * its promise settles (their memory is reused for later batches, or moved to a worker thread); or nowhere
 * (authenticate only).
 */
export type PlaintextSink =
  FileHandle | ((views: Uint8Array[], position: number) => Promise<void>) | 'discard';

export function bufferSource(bytes: Uint8Array): ByteSource {
  return {
    readv: (views, position) => {
      let at = position;
      for (const view of views) {
        const piece = bytes.subarray(at, at + view.byteLength);
        view.set(piece);
        at += piece.byteLength;
      }
      return Promise.resolve(at - position);
    },
  };
}

/** Bytes that arrive once, front to back (a dropped file with no path on disk), as a source. */
export interface StreamSource extends ByteSource {
  /** Stops the stream if it was not read to its end. */
  close(): Promise<void>;
}

/**
 * Reads `bytes` in order; a read may only start where the previous one ended (sealing reads a blob's plaintext
 * front to back), except that past the end every read gets nothing.
 * @throws the stream's own error, through `readError`; an Error for a read that goes back or skips ahead (a programming error).
 */
export function streamSource(
  bytes: AsyncIterable<Uint8Array> | Uint8Array,
  readError: (error: unknown) => unknown = (error) => error,
): StreamSource {
  if (bytes instanceof Uint8Array) return { ...bufferSource(bytes), close: () => Promise.resolve() };
  const iterator = bytes[Symbol.asyncIterator]();
  let pending: Uint8Array = new Uint8Array(0);
  let consumed = 0;
  let ended = false;
  const fill = async (view: Uint8Array): Promise<number> => {
    let filled = 0;
    while (filled < view.byteLength && !ended) {
      if (pending.byteLength === 0) {
        let next: IteratorResult<Uint8Array>;
        try {
          next = await iterator.next();
        } catch (error) {
          throw readError(error);
        }
        if (next.done === true) ended = true;
        else pending = next.value;
        continue;
      }
      const take = Math.min(pending.byteLength, view.byteLength - filled);
      view.set(pending.subarray(0, take), filled);
      pending = pending.subarray(take);
      filled += take;
    }
    return filled;
  };
  return {
    readv: async (views, position) => {
      if (ended && pending.byteLength === 0 && position >= consumed) return 0;
      if (position !== consumed)
        throw new Error(`A stream is read in order: asked for ${position}, at ${consumed}.`);
      let got = 0;
      for (const view of views) {
        const filled = await fill(view);
        got += filled;
        if (filled < view.byteLength) break;
      }
      consumed += got;
      return got;
    },
    close: async () => {
      if (ended) return;
      ended = true;
      await iterator.return?.();
    },
  };
}

/**
 * Recycles batch buffers: every full batch has the same size, and zero-filling a fresh megabyte per batch cost a
 * measurable share of a tmpfs-speed run.
 */
class BufferRecycler {
  readonly #free: Uint8Array[] = [];

  take(length: number): Uint8Array {
    const index = this.#free.findIndex((buffer) => buffer.byteLength === length);
    if (index < 0) return new Uint8Array(length);
    const [buffer] = this.#free.splice(index, 1);
    return buffer ?? new Uint8Array(length);
  }

  give(buffer: Uint8Array): void {
    if (this.#free.length < 16) this.#free.push(buffer);
  }
}

/**
 * Runs a blob's batches with reading, crypto and writing overlapped: while batch k is written, k+1 is being sealed
 * or opened on a worker and k+2 read. At most the executor's in-flight limit of batches exist at once, fewer and
 * smaller for large chunks (see {@link batchShape}), so memory stays bounded whatever the file or chunk size. Writes happen in order. `read` fills a batch's records buffer.
 */
async function overlapped(
  blob: {
    place: CryptoPlace;
    cipher: ChunkCipher;
    op: 'seal' | 'open';
    chunkCount: number;
    lastLength: number;
  },
  step: {
    read(plan: BatchPlan, buffers: BufferRecycler): Promise<Uint8Array>;
    write(plan: BatchPlan, result: BatchResult): Promise<void>;
  },
  signal: AbortSignal | undefined,
): Promise<void> {
  const { place, cipher, op, chunkCount, lastLength } = blob;
  const executor = place.executor;
  const { batchChunks: perBatch, maxInFlight: limit } = batchShape(
    cipher.header.chunkSize,
    executor ?? { batchChunks: INLINE_BATCH_CHUNKS, maxInFlight: INLINE_IN_FLIGHT },
  );
  const buffers = new BufferRecycler();
  const window: Promise<void>[] = [];
  let previous: Promise<void> = Promise.resolve();
  for (const plan of batchPlans({ chunkCount, chunkSize: cipher.header.chunkSize, lastLength }, perBatch)) {
    if (signal?.aborted) throw new CancelledError();
    // A job for another thread carries its own copy of the key.
    const job = cipher.job(op, plan, await step.read(plan, buffers), executor !== undefined);
    const result = executor ? executor.run(job) : Promise.resolve(runHere(place.sodium, job));
    const after = previous;
    const written = Promise.all([after, result]).then(async ([, done]) => {
      await step.write(plan, done);
      buffers.give(done.records);
    });
    written.catch(() => undefined); // surfaced through the window or the final await
    previous = written;
    window.push(written);
    if (window.length >= limit) await window.shift();
  }
  await previous;
}

/**
 * Runs a whole blob file as stripes on worker threads, which read, run and write it themselves; this thread only
 * waits, and relays progress.
 * @returns false when the source ended before its expected size (sealing).
 * @throws {@link IntegrityError} at the first chunk that fails; {@link CancelledError} when `signal` aborts; the
 * source's read error or the target's write error.
 */
async function inStripes(
  executor: StripeExecutor,
  job: StripeRequest,
  cipher: ChunkCipher,
  source: NonNullable<ByteSource['file']>,
  options: { signal?: AbortSignal; onBytes?: (bytes: number) => void },
): Promise<boolean> {
  const outcome: StripeOutcome = await executor.runStripes(job, options);
  switch (outcome.kind) {
    case 'done':
      return true;
    case 'source-ended':
      return false;
    case 'stopped':
      throw new CancelledError();
    case 'damaged':
      throw cipher.damaged(outcome.failure);
    case 'io-error': {
      const error = systemError(outcome.error);
      throw outcome.side === 'source' ? source.readError(error) : error;
    }
  }
}

/**
 * Encrypts `size` bytes of `source` into `target` as a complete blob (header, then chunks). With a worker pool and
 * a source file, the workers read and write the files themselves; otherwise this thread reads and writes.
 * @returns false when the source did not hold exactly `size` bytes (it changed while being read).
 * @throws {@link CancelledError} when `signal` aborts.
 */
export async function sealIntoBlob(options: {
  place: CryptoPlace;
  cipher: ChunkCipher;
  source: ByteSource;
  size: number;
  target: FileHandle;
  signal?: AbortSignal;
  onBytes?: (bytes: number) => void;
}): Promise<boolean> {
  const { place, cipher, source, size, target } = options;
  const chunkSize = cipher.header.chunkSize;
  const total = blobPlaintextSize(size, cipher.header.padded);
  const chunkCount = Math.max(1, Math.ceil(total / chunkSize));
  const lastLength = total - (chunkCount - 1) * chunkSize;
  await target.write(cipher.header.bytes, 0, BLOB_HEADER_BYTES, 0);
  let complete = true;
  if (place.executor && source.file) {
    const job = {
      ...cipher.crypto('seal'),
      chunkCount,
      lastLength,
      sourceFd: source.file.fd,
      targetFd: target.fd,
      contentSize: size,
    };
    complete = await inStripes(place.executor, job, cipher, source.file, options);
  } else {
    await overlapped(
      { place, cipher, op: 'seal', chunkCount, lastLength },
      {
        read: async (plan, buffers) => {
          const records = buffers.take(recordsLength({ ...plan, chunkSize }));
          const views = plaintextViews({ ...plan, chunkSize, records });
          const at = plan.firstIndex * chunkSize;
          const content = contentPart(views, at, size);
          const expected = content.reduce((sum, view) => sum + view.byteLength, 0);
          const got = expected === 0 ? 0 : await source.readv(content, at);
          if (got !== expected) complete = false;
          for (const [i, view] of views.entries()) fillPadding(view, at + i * chunkSize, size, total);
          options.onBytes?.(got);
          return records;
        },
        write: async (plan, result) => {
          const position = BLOB_HEADER_BYTES + plan.firstIndex * cipher.recordSize;
          await target.write(result.records, 0, result.records.byteLength, position);
        },
      },
      options.signal,
    );
  }
  // One more byte past the end means the file grew while it was read.
  const probe = new Uint8Array(1);
  if ((await source.readv([probe], size)) !== 0) complete = false;
  return complete;
}

/**
 * Decrypts a whole blob into `sink`. Nothing of a batch reaches the sink unless every chunk in it authenticated;
 * a function sink gets the batches in order, a file sink in any order (worker threads write it when a pool runs).
 * @throws {@link IntegrityError} at the first chunk that fails, naming the file and chunk.
 * @throws {@link CancelledError} when `signal` aborts.
 */
export async function openBlob(options: {
  place: CryptoPlace;
  cipher: ChunkCipher;
  source: ByteSource;
  chunkCount: number;
  plaintextSize: number;
  /** The file's size, when the blob is padded (section 5.7): the sink gets only the bytes before it. */
  contentSize?: number;
  sink: PlaintextSink;
  signal?: AbortSignal;
  onBytes?: (bytes: number) => void;
}): Promise<void> {
  const { place, cipher, source, chunkCount, plaintextSize, sink } = options;
  const contentSize = options.contentSize ?? plaintextSize;
  const chunkSize = cipher.header.chunkSize;
  const lastLength = plaintextSize - (chunkCount - 1) * chunkSize;
  if (place.executor && source.file && typeof sink !== 'function') {
    const job = {
      ...cipher.crypto('open'),
      chunkCount,
      lastLength,
      contentSize,
      sourceFd: source.file.fd,
      ...(sink === 'discard' ? {} : { targetFd: sink.fd }),
    };
    await inStripes(place.executor, job, cipher, source.file, options);
    return;
  }
  const write =
    typeof sink === 'function'
      ? sink
      : sink === 'discard'
        ? () => Promise.resolve()
        : async (views: Uint8Array[], position: number) => {
            await sink.writev(views, position);
          };
  await overlapped(
    { place, cipher, op: 'open', chunkCount, lastLength },
    {
      read: async (plan, buffers) => {
        const records = buffers.take(recordsLength({ ...plan, chunkSize }));
        const position = BLOB_HEADER_BYTES + plan.firstIndex * cipher.recordSize;
        const got = await source.readv([records], position);
        // The size was checked against the layout before; a short read means the blob changed under us. Zeros
        // (never stale bytes from a recycled buffer) then fail authentication like any other damage.
        if (got !== records.byteLength) records.fill(0, got);
        return records;
      },
      write: async (plan, result) => {
        cipher.check(result);
        const at = plan.firstIndex * chunkSize;
        const opened = plaintextViews({ ...plan, chunkSize, records: result.records });
        const bad = badPaddingAt(opened, at, contentSize, plaintextSize);
        if (bad !== undefined)
          cipher.check({ failure: { index: plan.firstIndex + bad, reason: 'malformed' } });
        const views = contentPart(opened, at, contentSize);
        await write(views, at);
        options.onBytes?.(views.reduce((sum, view) => sum + view.byteLength, 0));
      },
    },
    options.signal,
  );
}
