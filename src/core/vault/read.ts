import { open } from 'node:fs/promises';
import { PassThrough } from 'node:stream';

import {
  BLOB_HEADER_BYTES,
  blobLayout,
  ChunkCipher,
  parseBlobHeader,
  type BlobLayout,
  type ContentBinding,
} from '../crypto/content.js';
import { blobPlaintextSize, PADDING_TRAILER_BYTES, trailerSize } from '../crypto/padding.js';
import { sharedCryptoPool } from '../crypto/pool.js';
import { CancelledError, IntegrityError, InvalidArgumentError } from '../errors.js';
import {
  bufferSource,
  fileSource,
  openBlob,
  type ByteSource,
  type CryptoPlace,
  type PlaintextSink,
} from './blob-io.js';
import type { BlobLocation } from './index-db.js';
import { asIoError } from './durable.js';
import { blobPath, requireRegularFile, VAULT_READ_FLAGS } from './layout.js';
import type { Session } from './session.js';
import type { TreeNode } from './tree.js';

/** Blobs of more chunks than this go to the worker pool (see pool.ts for the batch size). */
const POOL_MIN_CHUNKS = 16;

function binding(session: Session, node: TreeNode): ContentBinding {
  return {
    vaultId: session.keys.vaultId,
    fileId: Buffer.from(node.fileId ?? '', 'hex'),
    label: `contents of "${session.tree.pathOf(node)}"`,
  };
}

/** A file's stored blob, opened and checked: its header belongs to this file and its size to its index record. */
export interface StoredBlob {
  readonly source: ByteSource;
  readonly cipher: ChunkCipher;
  readonly layout: BlobLayout;
  /** Where the blob is stored. */
  readonly location: BlobLocation;
  /** Wipes the content subkey and closes the blob file. */
  close(): Promise<void>;
}

/**
 * The error for a blob that holds another size than its file's record (FORMAT.md 5.4, 5.7), with both sizes when
 * the blob's is known (a padded blob's is in its last chunk).
 */
function sizeDiffers(bind: ContentBinding, node: TreeNode, stored?: number): IntegrityError {
  const held = stored === undefined ? '' : `, its stored contents hold ${stored}`;
  return new IntegrityError('malformed', {
    subject: `${bind.label ?? ''} (its size differs from the index: the index says ${node.size} bytes${held})`,
    fileId: node.fileId ?? '',
    advice:
      'One of the two was damaged or modified, so this file is not restored or shown. Restore it from a backup, ' +
      'or delete it from the vault; "coffer verify" lists every file affected.',
  });
}

/**
 * A failed read of a file's stored contents, said as the vault's side (an EIO on a pack, say), so that a restore
 * does not blame the file it was writing.
 */
function unreadable(session: Session, node: TreeNode, error: unknown): unknown {
  return asIoError(error, `Could not read the stored contents of "${session.tree.pathOf(node)}"`);
}

/**
 * What failing to open a file's pack or blob file is: damage to that file when it is missing or not a regular file
 * (see {@link Session.missingBlob}), else the vault's side too ({@link unreadable}).
 */
export function unopenedBlob(session: Session, node: TreeNode, error: unknown): unknown {
  const missing = session.missingBlob(node, error);
  return missing instanceof IntegrityError ? missing : unreadable(session, node, missing);
}

/**
 * Opens a file's blob (in a pack, in a blob file, or inline in a schema 1 index) for decryption. With `proveSize`,
 * a padded blob's size (in its last chunk, FORMAT.md 5.7) is also checked against the record's before anything is
 * read: for readers that do not open every chunk, such as a range read.
 * @throws {@link IntegrityError} when it is missing, belongs to another file, names an unknown key, or its size
 * does not match the size the index records.
 * @throws {@link IoError} when its pack or blob file cannot be opened or read for another reason (its reads, later,
 * fail the same way).
 */
export async function openStoredBlob(
  session: Session,
  node: TreeNode,
  options: { proveSize?: boolean } = {},
): Promise<StoredBlob> {
  const bind = binding(session, node);
  const location = session.blobOf(bind.fileId);
  if (location === undefined) throw session.missingContents(node);
  const readError = (error: unknown): unknown => unreadable(session, node, error);
  const unopened = (error: unknown): unknown => unopenedBlob(session, node, error);
  let source: ByteSource;
  let size: number;
  let closeFile = (): Promise<void> => Promise.resolve();
  if (location.kind === 'inline') {
    source = bufferSource(location.bytes);
    size = location.bytes.length;
  } else if (location.kind === 'pack') {
    try {
      let release: () => void;
      ({ source, size, release } = session.packs.source(location, readError));
      closeFile = () => {
        release();
        return Promise.resolve();
      };
    } catch (error) {
      throw unopened(error);
    }
    if (size < location.length) {
      await closeFile();
      throw new IntegrityError('truncated', { subject: bind.label ?? '', fileId: node.fileId ?? '' });
    }
  } else {
    const path = blobPath(session.dir, bind.fileId);
    const handle = await open(path, VAULT_READ_FLAGS).catch((error: unknown) => {
      throw unopened(error);
    });
    try {
      const stats = await handle.stat();
      requireRegularFile(stats, path);
      size = stats.size;
    } catch (error) {
      await handle.close();
      throw unopened(error);
    }
    source = fileSource(handle, readError);
    closeFile = () => handle.close();
  }
  try {
    const { cipher, layout } = await openBlobFrom(session, source, size, bind);
    // A padded blob (section 5.7) holds exactly the plaintext a writer pads this size to; anything else is damage.
    const expected = blobPlaintextSize(node.size, cipher.header.padded);
    if (layout.plaintextSize < expected) {
      cipher.wipe();
      throw new IntegrityError('truncated', { subject: bind.label ?? '', fileId: node.fileId ?? '' });
    }
    if (layout.plaintextSize !== expected) {
      cipher.wipe();
      throw sizeDiffers(bind, node, cipher.header.padded ? undefined : layout.plaintextSize);
    }
    if (options.proveSize === true && cipher.header.padded) {
      try {
        const stored = await contentSizeOf({ source, cipher, layout });
        if (stored !== node.size) throw sizeDiffers(bind, node, stored);
      } catch (error) {
        cipher.wipe();
        throw error;
      }
    }
    return {
      source,
      cipher,
      layout,
      location,
      close: async () => {
        cipher.wipe();
        await closeFile();
      },
    };
  } catch (error) {
    await closeFile();
    throw error;
  }
}

/**
 * Opens the `size` bytes `source` holds as the blob of `bind`'s file: checks its header and its size, and finds
 * its key. The caller wipes the cipher.
 * @throws {@link IntegrityError} when it is malformed, truncated, another file's or under a key the vault lacks.
 */
export async function openBlobFrom(
  session: Session,
  source: ByteSource,
  size: number,
  bind: ContentBinding,
): Promise<{ cipher: ChunkCipher; layout: BlobLayout }> {
  const headerBytes = new Uint8Array(BLOB_HEADER_BYTES);
  const got = await source.readv([headerBytes], 0);
  const header = parseBlobHeader(Buffer.from(headerBytes.subarray(0, got)), bind);
  const layout = blobLayout(size, header.chunkSize, bind);
  const dek = session.keys.keyring.find(header.keyId);
  if (!dek) {
    throw new IntegrityError('unknown-key', {
      subject: bind.label ?? '',
      fileId: bind.fileId.toString('hex'),
    });
  }
  return { cipher: new ChunkCipher(session.sodium, dek, bind, header), layout };
}

/**
 * Where to run a blob's crypto: the shared worker pool when the blob spans several batches, else this thread
 * (for one batch a round trip to a worker costs more than it saves).
 */
export async function cryptoPlace(session: Session, chunkCount: number): Promise<CryptoPlace> {
  const pool = chunkCount > POOL_MIN_CHUNKS ? await sharedCryptoPool() : undefined;
  return { sodium: session.sodium, executor: pool };
}

/**
 * Decrypts a whole file into `sink`: a function gets the authenticated plaintext batch by batch, in order; a file
 * gets it written at its offsets, in any order (by the worker threads, when a pool runs), so it must be a staging
 * file until this returns. `onBytes` gets the plaintext bytes of each batch once it authenticated.
 * @throws {@link IntegrityError} at the first damaged chunk; nothing of its batch reaches the sink.
 * @throws {@link IoError} when the stored file cannot be read (see {@link openStoredBlob}).
 * @throws {@link CancelledError} when `signal` aborts.
 */
export async function decryptFile(
  session: Session,
  node: TreeNode,
  sink: PlaintextSink,
  options: { signal?: AbortSignal; onBytes?: (bytes: number) => void } = {},
): Promise<void> {
  const blob = await openStoredBlob(session, node);
  try {
    await openBlob({
      place: await cryptoPlace(session, blob.layout.chunkCount),
      cipher: blob.cipher,
      source: blob.source,
      chunkCount: blob.layout.chunkCount,
      plaintextSize: blob.layout.plaintextSize,
      contentSize: node.size,
      sink,
      ...options,
    });
  } catch (error) {
    throw error instanceof IntegrityError ? await explainDamage(session, node, error) : error;
  } finally {
    await blob.close();
  }
}

/**
 * The error to report for a read of a whole file that failed: a padding check that failed (`malformed`) because
 * the padded blob ends with another size than the record's is said as that (see {@link sizeDiffers}). Readers of
 * every chunk find the mismatch as they go, so only this failure, not every read, pays for opening the last chunk
 * again.
 */
export async function explainDamage(
  session: Session,
  node: TreeNode,
  error: IntegrityError,
): Promise<IntegrityError> {
  if (error.reason !== 'malformed') return error;
  try {
    await (await openStoredBlob(session, node, { proveSize: true })).close();
  } catch (sizeError) {
    if (sizeError instanceof IntegrityError) return sizeError;
  }
  return error;
}

/**
 * A small file's whole plaintext in memory. (Up to one batch, so {@link decryptFile} runs it in this thread.)
 * @throws {@link IntegrityError} when its contents are missing or damaged.
 */
export async function decryptSmallFile(session: Session, node: TreeNode): Promise<Buffer> {
  const plaintext = Buffer.alloc(node.size);
  await decryptFile(session, node, (views, position) => {
    let at = position;
    for (const view of views) {
      plaintext.set(view, at);
      at += view.byteLength;
    }
    return Promise.resolve();
  });
  return plaintext;
}

/**
 * Settles when `out` wants more, closes, or `signal` aborts: a reader that stops reading must not keep the
 * decryption (and its key) waiting past a lock.
 */
function drained(out: PassThrough, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      out.off('drain', done);
      out.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
    signal.addEventListener('abort', done);
  });
}

/** The whole file as a stream, with backpressure; errors (damage) end the stream with the error. */
function wholeFile(session: Session, node: TreeNode, signal: AbortSignal): PassThrough {
  const out = new PassThrough({ highWaterMark: 1024 * 1024 });
  const stopped = new AbortController();
  const stop = (): void => {
    stopped.abort();
  };
  out.once('close', stop);
  signal.addEventListener('abort', stop, { once: true });
  const sink = async (views: Uint8Array[]): Promise<void> => {
    for (const view of views) {
      if (out.destroyed || stopped.signal.aborted) throw new CancelledError();
      // A copy: the stream may hold it after the sink returns, when the batch's memory is reused.
      if (!out.write(Buffer.from(view))) await drained(out, stopped.signal);
    }
  };
  decryptFile(session, node, sink, { signal: stopped.signal })
    .then(
      () => out.end(),
      (error: unknown) => out.destroy(error as Error),
    )
    .finally(() => {
      signal.removeEventListener('abort', stop);
    });
  return out;
}

/**
 * Opens the chunks of an opened blob that cover its plaintext bytes [start, end] (inclusive), yielding each one's
 * part of the range and where that part starts in the blob's plaintext.
 */
async function* blobRange(
  blob: Pick<StoredBlob, 'source' | 'cipher' | 'layout'>,
  start: number,
  end: number,
  signal?: AbortSignal,
): AsyncGenerator<{ bytes: Buffer; at: number }> {
  const { chunkSize } = blob.cipher.header;
  const record = blob.cipher.recordSize;
  for (let index = Math.floor(start / chunkSize); index <= Math.floor(end / chunkSize); index++) {
    if (signal?.aborted) throw new CancelledError();
    const final = index === blob.layout.chunkCount - 1;
    const bytes = new Uint8Array(
      final ? blob.layout.plaintextSize - index * chunkSize + record - chunkSize : record,
    );
    await blob.source.readv([bytes], BLOB_HEADER_BYTES + index * record);
    const plaintext = blob.cipher.open(index, bytes, final);
    const chunkStart = index * chunkSize;
    const from = Math.max(0, start - chunkStart);
    yield {
      bytes: plaintext.subarray(from, Math.min(plaintext.length, end - chunkStart + 1)),
      at: chunkStart + from,
    };
  }
}

/** Decrypts only the chunks that cover a file's bytes [start, end] (inclusive, within the file), for previews. */
async function* rangeChunks(
  session: Session,
  node: TreeNode,
  start: number,
  end: number,
  signal?: AbortSignal,
): AsyncGenerator<Buffer> {
  // A range may not reach the padding, yet bytes the record claims past the blob's own size must never be returned.
  const blob = await openStoredBlob(session, node, { proveSize: true });
  try {
    for await (const { bytes } of blobRange(blob, start, end, signal)) yield bytes;
  } finally {
    await blob.close();
  }
}

/**
 * Authenticates the chunk that holds a blob's last byte, which proves the blob exists, belongs to this file and
 * has the size its record claims, without reading the rest; for a padded blob, the chunks holding the size at its
 * end, which must be the record's. (No stream: verify calls it for every file.)
 * @throws {@link IntegrityError} when it does not.
 */
export async function authenticateLastChunk(session: Session, node: TreeNode): Promise<void> {
  // A padded blob's size was proven from the chunks holding its end as it was opened.
  const blob = await openStoredBlob(session, node, { proveSize: true });
  try {
    if (blob.cipher.header.padded) return;
    const last = Math.max(0, blob.layout.plaintextSize - 1);
    // The range is one chunk: opening it authenticates it; its bytes are not needed.
    await blobRange(blob, last, last).next();
  } finally {
    await blob.close();
  }
}

/**
 * The size of the file a blob with no row holds (for recovery): its plaintext size, or for a padded blob the size
 * its padding ends with, which must be one that pads to that plaintext size. The caller wipes `blob.cipher`.
 * @throws {@link IntegrityError} when the chunks holding it fail, or the size does not fit the blob (`malformed`).
 */
export async function contentSizeOf(blob: Pick<StoredBlob, 'source' | 'cipher' | 'layout'>): Promise<number> {
  const total = blob.layout.plaintextSize;
  if (!blob.cipher.header.padded) return total;
  const pieces: Buffer[] = [];
  for await (const { bytes } of blobRange(blob, total - PADDING_TRAILER_BYTES, total - 1)) pieces.push(bytes);
  const size = trailerSize(Buffer.concat(pieces));
  if (blobPlaintextSize(size, true) !== total) {
    throw blob.cipher.damaged({
      index: blob.layout.chunkCount - 1,
      reason: 'malformed',
    });
  }
  return size;
}

/** A byte range of a file: bytes [start, end] inclusive. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/**
 * Checks a range against a file before anything is read.
 * @throws {@link InvalidArgumentError} for a range outside the file.
 */
export function checkRange(node: TreeNode, range: ByteRange): void {
  const { start, end } = range;
  if (
    !Number.isSafeInteger(start) ||
    !Number.isSafeInteger(end) ||
    start < 0 ||
    end < start ||
    end >= node.size
  ) {
    throw new InvalidArgumentError(`Byte range ${start}-${end} is outside the file (${node.size} bytes).`);
  }
}

/**
 * A file's plaintext, the whole file or a range checked with {@link checkRange}, chunk by chunk. Only
 * authenticated bytes are yielded; damage ends the sequence with an {@link IntegrityError}, `signal` with a
 * {@link CancelledError}.
 */
export function plaintextChunks(
  session: Session,
  node: TreeNode,
  range: ByteRange | undefined,
  signal: AbortSignal,
): AsyncIterable<Buffer> {
  return range
    ? rangeChunks(session, node, range.start, range.end, signal)
    : (wholeFile(session, node, signal) as AsyncIterable<Buffer>);
}
