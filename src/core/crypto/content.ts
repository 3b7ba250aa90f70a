import { Transform, type TransformCallback } from 'node:stream';

import { IntegrityError, InvalidArgumentError } from '../errors.js';
import { ascii, ByteReader, u16, u32, u8 } from './bytes.js';
import {
  DEFAULT_CHUNK_SIZE,
  FORMAT_VERSION,
  ID_BYTES,
  LABEL,
  MAX_CHUNK_SIZE,
  MIN_CHUNK_SIZE,
  TAG_BYTES,
} from './constants.js';
import { deriveSubkey, type SecretKey } from './keys.js';
import {
  plaintextViews,
  recordsLength,
  runBatch,
  type BatchJob,
  type BatchOutcome,
  type BatchPlan,
  type BlobCrypto,
} from './chunk-batch.js';
import type { SodiumBackend } from './sodium.js';

/** First bytes of every content blob: "COFFERCB". */
export const BLOB_MAGIC = ascii('COFFERCB');
/** magic 8 ‖ version 2 ‖ algorithm 1 ‖ flags 1 ‖ chunk size 4 ‖ key id 4 ‖ file id 16 ‖ nonce prefix 16. */
export const BLOB_HEADER_BYTES = 52;
export const NONCE_PREFIX_BYTES = 16;
const ALG_XCHACHA20POLY1305_CHUNKED = 1;
const FLAG_PADDED = 1;
const SUBJECT = 'file contents';

/** What a blob must belong to: checked on every chunk through the subkey and the header in the AAD. */
export interface ContentBinding {
  readonly vaultId: Buffer;
  readonly fileId: Buffer;
  /** What to call this blob in error messages, e.g. `contents of "/Photos/a.jpg"`; not authenticated. */
  readonly label?: string;
}

/** A content blob's parsed header. `bytes` is the exact 52 bytes, which every chunk authenticates. */
export interface BlobHeader {
  /** Flag bit 0: the plaintext is the file's bytes followed by padding (section 5.7). */
  readonly padded: boolean;
  readonly chunkSize: number;
  readonly keyId: number;
  readonly fileId: Buffer;
  readonly noncePrefix: Buffer;
  readonly bytes: Buffer;
}

/** Receives output bytes; the buffer is the receiver's to keep. */
export type Emit = (bytes: Buffer) => void;

/** Looks a DEK up by key id; `undefined` when the vault has no such key. */
export type KeyResolver = (keyId: number) => SecretKey | undefined;

function checkChunkSize(chunkSize: number): boolean {
  return Number.isInteger(chunkSize) && chunkSize >= MIN_CHUNK_SIZE && chunkSize <= MAX_CHUNK_SIZE;
}

/** @internal Serialises a blob header; writers get random nonce prefixes from {@link ContentEncryptor.create}. */
export function encodeBlobHeader(
  fields: Omit<BlobHeader, 'bytes' | 'padded'> & { readonly padded?: boolean },
): BlobHeader {
  const bytes = Buffer.concat([
    BLOB_MAGIC,
    u16(FORMAT_VERSION),
    u8(ALG_XCHACHA20POLY1305_CHUNKED),
    u8(fields.padded === true ? FLAG_PADDED : 0),
    u32(fields.chunkSize),
    u32(fields.keyId),
    fields.fileId,
    fields.noncePrefix,
  ]);
  return { ...fields, padded: fields.padded === true, bytes };
}

/** Where a blob header keeps its file id (section 5.1): after the magic, version, algorithm, flags, chunk size, key id. */
const HEADER_FILE_ID_AT = BLOB_MAGIC.length + 2 + 1 + 1 + 4 + 4;

/**
 * The file id a blob header claims, not yet checked: what to bind it to before {@link parseBlobHeader} checks it (a
 * blob found with no row naming it, in an unreferenced or compacted pack).
 */
export function claimedFileId(header: Uint8Array): Buffer {
  return Buffer.from(header.subarray(HEADER_FILE_ID_AT, HEADER_FILE_ID_AT + ID_BYTES));
}

/**
 * Parses and checks a blob header against the file it is expected to hold.
 * @throws {@link IntegrityError} when malformed (`malformed`, including a version or algorithm other than this
 * vault's), or written for another file (`wrong-file`).
 */
export function parseBlobHeader(bytes: Buffer, expected: ContentBinding): BlobHeader {
  const where = { subject: expected.label ?? SUBJECT, fileId: expected.fileId.toString('hex') };
  if (bytes.length < BLOB_HEADER_BYTES) throw new IntegrityError('truncated', where);
  const reader = new ByteReader(bytes.subarray(0, BLOB_HEADER_BYTES), where.subject);
  if (!reader.bytes(BLOB_MAGIC.length).equals(BLOB_MAGIC)) throw new IntegrityError('malformed', where);
  // The vault header's version decides what blobs may contain, and a vault this reader unlocked is one it supports;
  // so a blob claiming another version or algorithm is damaged, not from the future.
  const version = reader.u16();
  const algorithm = reader.u8();
  const flags = reader.u8();
  if (
    version !== FORMAT_VERSION ||
    algorithm !== ALG_XCHACHA20POLY1305_CHUNKED ||
    (flags & ~FLAG_PADDED) !== 0
  ) {
    throw new IntegrityError('malformed', where);
  }
  const chunkSize = reader.u32();
  if (!checkChunkSize(chunkSize)) throw new IntegrityError('malformed', where);
  const keyId = reader.u32();
  const fileId = reader.bytes(ID_BYTES);
  const noncePrefix = reader.bytes(NONCE_PREFIX_BYTES);
  if (!fileId.equals(expected.fileId)) throw new IntegrityError('wrong-file', where);
  return {
    padded: flags === FLAG_PADDED,
    chunkSize,
    keyId,
    fileId,
    noncePrefix,
    bytes: Buffer.from(bytes.subarray(0, BLOB_HEADER_BYTES)),
  };
}

/**
 * The header of a new blob, with a fresh random nonce prefix; `padded` when the vault pads content (section 5.7).
 * @throws {@link InvalidArgumentError} for a chunk size out of range or a file id of the wrong length.
 */
export function newBlobHeader(
  sodium: SodiumBackend,
  keyId: number,
  binding: ContentBinding,
  chunkSize = DEFAULT_CHUNK_SIZE,
  padded = false,
): BlobHeader {
  if (binding.fileId.length !== ID_BYTES) throw new InvalidArgumentError(`A file id is ${ID_BYTES} bytes.`);
  if (!checkChunkSize(chunkSize)) {
    throw new InvalidArgumentError(
      `Chunk size must be between ${MIN_CHUNK_SIZE} and ${MAX_CHUNK_SIZE} bytes.`,
    );
  }
  return encodeBlobHeader({
    padded,
    chunkSize,
    keyId,
    fileId: binding.fileId,
    noncePrefix: sodium.randomBytes(NONCE_PREFIX_BYTES),
  });
}

/** Size of the blob that holds `plaintextSize` bytes: every file has at least one (final) chunk. */
export function blobSize(plaintextSize: number, chunkSize = DEFAULT_CHUNK_SIZE): number {
  const chunks = plaintextSize === 0 ? 1 : Math.ceil(plaintextSize / chunkSize);
  return BLOB_HEADER_BYTES + plaintextSize + chunks * TAG_BYTES;
}

/** Chunk count and plaintext size implied by a blob's size, for random access. */
export interface BlobLayout {
  readonly chunkCount: number;
  readonly plaintextSize: number;
}

/**
 * Derives the layout from the blob size, rejecting sizes no writer produces.
 * @throws {@link IntegrityError} (`truncated` or `malformed`) when the size is impossible.
 */
export function blobLayout(size: number, chunkSize: number, binding?: ContentBinding): BlobLayout {
  const where = {
    subject: binding?.label ?? SUBJECT,
    ...(binding === undefined ? {} : { fileId: binding.fileId.toString('hex') }),
  };
  const body = size - BLOB_HEADER_BYTES;
  if (body < TAG_BYTES) throw new IntegrityError('truncated', where);
  const record = chunkSize + TAG_BYTES;
  const chunkCount = Math.ceil(body / record);
  const lastRecord = body - (chunkCount - 1) * record;
  if (lastRecord < TAG_BYTES) throw new IntegrityError('truncated', where);
  if (lastRecord === TAG_BYTES && chunkCount > 1) throw new IntegrityError('malformed', where);
  return { chunkCount, plaintextSize: body - chunkCount * TAG_BYTES };
}

/** A batch after it ran: how it went, and its records buffer (transferred back when it ran on a worker). */
export interface BatchResult extends BatchOutcome {
  readonly records: Uint8Array;
}

/** Runs a batch somewhere: in this thread, or on a worker of the crypto pool. */
export interface BatchExecutor {
  run(job: BatchJob): Promise<BatchResult>;
  /** Chunks per batch that suit this executor (larger batches amortise a worker round trip). */
  readonly batchChunks: number;
  /** Batches that may be in flight at once before the stream waits (bounds memory). */
  readonly maxInFlight: number;
}

/** Runs a batch in the calling thread. */
export function runHere(sodium: SodiumBackend, job: BatchJob): BatchResult {
  return { ...runBatch(sodium, job), records: job.records };
}

/**
 * Seals and opens the chunks of one blob. Holds the per-file content subkey: call {@link ChunkCipher.wipe} when
 * done. Nonce = the header's 16-byte random prefix ‖ uint64 chunk index; AAD = label ‖ header ‖ uint64 index ‖ final
 * flag (chunk-batch.ts does the per-chunk work).
 */
export class ChunkCipher {
  readonly header: BlobHeader;
  readonly #sodium: SodiumBackend;
  readonly #subkey: SecretKey;
  readonly #aadPrefix: Buffer;
  readonly #fileIdHex: string;
  readonly #subject: string;

  constructor(sodium: SodiumBackend, dek: SecretKey, binding: ContentBinding, header: BlobHeader) {
    this.#sodium = sodium;
    this.header = header;
    this.#subkey = deriveSubkey(sodium, dek, LABEL.contentKey, binding.vaultId, binding.fileId);
    this.#aadPrefix = Buffer.concat([ascii(LABEL.content), header.bytes]);
    this.#fileIdHex = binding.fileId.toString('hex');
    this.#subject = binding.label ?? SUBJECT;
  }

  /** Bytes one chunk record takes: chunk size plus tag. */
  get recordSize(): number {
    return this.header.chunkSize + TAG_BYTES;
  }

  /**
   * What every batch of this blob shares (see {@link BlobCrypto}). `shareKey` copies the subkey for another thread;
   * without it the result borrows this cipher's key and must be used before {@link ChunkCipher.wipe}.
   */
  crypto(op: BlobCrypto['op'], shareKey = false): BlobCrypto {
    const key = this.#subkey.bytes;
    return {
      op,
      key: shareKey ? Uint8Array.from(key) : key,
      noncePrefix: this.header.noncePrefix,
      aadPrefix: this.#aadPrefix,
      chunkSize: this.header.chunkSize,
    };
  }

  /** A batch job over consecutive chunks laid out in `records` (see {@link BatchJob}); `shareKey` as for `crypto`. */
  job(op: BatchJob['op'], chunks: BatchPlan, records: Uint8Array, shareKey = false): BatchJob {
    return { ...this.crypto(op, shareKey), ...chunks, records };
  }

  /** @throws {@link IntegrityError} for a failed chunk, naming the file and the chunk. */
  check(outcome: BatchOutcome): void {
    if (outcome.failure) throw this.damaged(outcome.failure);
  }

  /** The error for a chunk that failed, naming the file and the chunk. */
  damaged(failure: NonNullable<BatchOutcome['failure']>): IntegrityError {
    return new IntegrityError(failure.reason, {
      subject: this.#subject,
      fileId: this.#fileIdHex,
      chunkIndex: failure.index,
    });
  }

  /** Seals one chunk. Only the final chunk may be shorter than the chunk size, and only an empty file's is empty. */
  seal(index: number, plaintext: Uint8Array, final: boolean): Buffer {
    const records = Buffer.alloc(plaintext.byteLength + TAG_BYTES);
    records.set(plaintext);
    const chunks = { firstIndex: index, count: 1, lastLength: plaintext.byteLength, endsWithFinal: final };
    this.check(runBatch(this.#sodium, this.job('seal', chunks, records)));
    return records;
  }

  /**
   * Opens one chunk record (ciphertext and tag), for random access. `record` is not modified.
   * @throws {@link IntegrityError} with reason `truncated` (a non-final chunk where the final one was expected, or a
   * record too short), `trailing-data` (the final chunk where more was expected), `malformed` (an empty final chunk
   * after others) or `tampered`.
   */
  open(index: number, record: Uint8Array, final: boolean): Buffer {
    if (record.byteLength < TAG_BYTES || (!final && record.byteLength !== this.recordSize)) {
      throw new IntegrityError('truncated', {
        subject: this.#subject,
        fileId: this.#fileIdHex,
        chunkIndex: index,
      });
    }
    const records = Buffer.from(Uint8Array.from(record).buffer);
    const chunks = {
      firstIndex: index,
      count: 1,
      lastLength: record.byteLength - TAG_BYTES,
      endsWithFinal: final,
    };
    this.check(runBatch(this.#sodium, this.job('open', chunks, records)));
    return records.subarray(0, chunks.lastLength);
  }

  wipe(): void {
    this.#subkey.wipe();
  }
}

/** Accumulates incoming buffers so fixed-size pieces can be taken off the front without rescanning. */
class ByteQueue {
  #buffers: Buffer[] = [];
  #length = 0;

  get length(): number {
    return this.#length;
  }

  push(data: Uint8Array): void {
    if (data.byteLength === 0) return;
    this.#buffers.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    this.#length += data.byteLength;
  }

  take(length: number): Buffer {
    const first = this.#buffers[0];
    let out: Buffer;
    if (first && first.length >= length) {
      out = first.subarray(0, length);
      if (first.length === length) this.#buffers.shift();
      else this.#buffers[0] = first.subarray(length);
    } else {
      const joined = Buffer.concat(this.#buffers, this.#length);
      out = joined.subarray(0, length);
      this.#buffers = joined.length > length ? [joined.subarray(length)] : [];
    }
    this.#length -= length;
    return out;
  }
}

/** Output that needs no crypto (the blob header), or a batch of chunks to run. */
type PlannedStep =
  | { readonly kind: 'bytes'; readonly bytes: Buffer }
  | { readonly kind: 'batch'; readonly job: BatchJob; readonly cipher: ChunkCipher };

/**
 * Cuts a blob's stream into batches of whole chunks. The last chunk is always held back until more input arrives
 * or the input ends, because only then is it known whether it is the final chunk. Errors are sticky.
 */
abstract class ChunkStream {
  #error: Error | undefined;
  #closed = false;
  #index = 0;
  protected readonly pending = new ByteQueue();

  protected abstract readonly op: BatchJob['op'];
  protected abstract sodium(): SodiumBackend;
  protected abstract cipher(): ChunkCipher | undefined;
  /** Bytes of input per chunk: the chunk size to seal, the record size to open. */
  protected abstract unit(cipher: ChunkCipher): number;
  /** Steps to take before the first batch (emit or parse the blob header). */
  protected abstract start(steps: PlannedStep[]): void;
  /** Checks the end of input before the final batch; may throw. */
  protected abstract beforeFinal(cipher: ChunkCipher | undefined): ChunkCipher;

  #guard<T>(step: () => T): T {
    if (this.#error !== undefined) throw this.#error;
    if (this.#closed) throw new InvalidArgumentError('This content stream has already finished.');
    try {
      return step();
    } catch (error) {
      this.fail(error);
    }
  }

  /** Records the first error (every later call rethrows it), wipes the key, and throws it. */
  protected fail(error: unknown): never {
    this.#error ??= error instanceof Error ? error : new Error(String(error));
    this.cipher()?.wipe();
    throw this.#error;
  }

  /** Copies `input` into a records buffer of its own, the layout {@link BatchJob} works in place on. */
  #batch(cipher: ChunkCipher, input: Buffer, final: boolean): PlannedStep {
    const unit = this.unit(cipher);
    const count = final ? Math.max(1, Math.ceil(input.length / unit)) : input.length / unit;
    const lastUnit = input.length - (count - 1) * unit;
    const chunks = {
      firstIndex: this.#index,
      count,
      lastLength: this.op === 'seal' ? lastUnit : lastUnit - TAG_BYTES,
      endsWithFinal: final,
    };
    this.#index += count;
    let records: Uint8Array;
    if (this.op === 'open') records = Uint8Array.from(input);
    else {
      records = new Uint8Array(recordsLength({ ...chunks, chunkSize: cipher.header.chunkSize }));
      for (let i = 0; i < count; i++) {
        records.set(input.subarray(i * unit, (i + 1) * unit), i * cipher.recordSize);
      }
    }
    return { kind: 'batch', job: cipher.job(this.op, chunks, records), cipher };
  }

  /** Takes input and plans the batches it makes possible: all whole chunks but the held-back last one. */
  #plan(data: Uint8Array): PlannedStep[] {
    return this.#guard(() => {
      const steps: PlannedStep[] = [];
      this.pending.push(data);
      this.start(steps);
      const cipher = this.cipher();
      if (!cipher) return steps;
      const unit = this.unit(cipher);
      const chunks = Math.floor((this.pending.length - 1) / unit);
      if (chunks > 0) steps.push(this.#batch(cipher, this.pending.take(chunks * unit), false));
      return steps;
    });
  }

  /** Plans the final batch: the held-back last chunk. */
  #planFinish(): PlannedStep[] {
    const steps = this.#guard(() => {
      const steps: PlannedStep[] = [];
      this.start(steps);
      const cipher = this.beforeFinal(this.cipher());
      steps.push(this.#batch(cipher, this.pending.take(this.pending.length), true));
      return steps;
    });
    this.#closed = true;
    return steps;
  }

  /**
   * Runs planned steps in this thread and emits their output: the header, sealed records, or the plaintext of each
   * chunk that authenticated.
   * @throws {@link IntegrityError} for a failed chunk (after which the stream stays failed).
   */
  #run(steps: PlannedStep[], emit: Emit): void {
    for (const step of steps) {
      if (step.kind === 'bytes') {
        emit(step.bytes);
        continue;
      }
      const { job } = step;
      const outcome = runBatch(this.sodium(), job);
      if (job.op === 'seal')
        emit(Buffer.from(job.records.buffer, job.records.byteOffset, job.records.byteLength));
      else {
        const opened = outcome.failure ? outcome.failure.index - job.firstIndex : job.count;
        for (const view of plaintextViews(job, opened))
          emit(Buffer.from(view.buffer, view.byteOffset, view.byteLength));
      }
      try {
        step.cipher.check(outcome);
      } catch (error) {
        this.fail(error);
      }
      if (job.endsWithFinal) step.cipher.wipe();
    }
  }

  /** Feeds input and emits whatever it completes, in this thread. */
  push(data: Uint8Array, emit: Emit): void {
    this.#run(this.#plan(data), emit);
  }

  /** Ends the input, emitting the rest, in this thread; wipes the key. */
  finish(emit: Emit): void {
    this.#run(this.#planFinish(), emit);
  }

  /** Abandons the stream (on cancellation or a failure elsewhere) and wipes its key. */
  abort(): void {
    this.#closed = true;
    this.cipher()?.wipe();
  }

  get failed(): boolean {
    return this.#error !== undefined;
  }
}
/**
 * Encrypts one file's contents chunk by chunk with constant memory. Output is the blob: header, then sealed
 * chunks, the last flagged final.
 */
export class ContentEncryptor extends ChunkStream {
  protected readonly op = 'seal';
  readonly #sodium: SodiumBackend;
  readonly #cipher: ChunkCipher;
  #headerSent = false;

  /** @internal Use {@link ContentEncryptor.create}; this takes a fixed header for known-answer tests. */
  constructor(sodium: SodiumBackend, dek: SecretKey, binding: ContentBinding, header: BlobHeader) {
    super();
    if (!checkChunkSize(header.chunkSize)) {
      throw new InvalidArgumentError(
        `Chunk size must be between ${MIN_CHUNK_SIZE} and ${MAX_CHUNK_SIZE} bytes.`,
      );
    }
    this.#sodium = sodium;
    this.#cipher = new ChunkCipher(sodium, dek, binding, header);
  }

  /**
   * An encryptor with a fresh random nonce prefix.
   * @throws {@link InvalidArgumentError} for a chunk size out of range or a file id of the wrong length.
   */
  static create(
    sodium: SodiumBackend,
    dek: SecretKey,
    keyId: number,
    binding: ContentBinding,
    chunkSize = DEFAULT_CHUNK_SIZE,
  ): ContentEncryptor {
    return new ContentEncryptor(sodium, dek, binding, newBlobHeader(sodium, keyId, binding, chunkSize));
  }

  protected sodium(): SodiumBackend {
    return this.#sodium;
  }

  protected cipher(): ChunkCipher {
    return this.#cipher;
  }

  protected unit(cipher: ChunkCipher): number {
    return cipher.header.chunkSize;
  }

  protected start(steps: PlannedStep[]): void {
    if (!this.#headerSent) {
      steps.push({ kind: 'bytes', bytes: this.#cipher.header.bytes });
      this.#headerSent = true;
    }
  }

  protected beforeFinal(cipher: ChunkCipher | undefined): ChunkCipher {
    return cipher ?? this.#cipher;
  }
}

/**
 * Decrypts a blob read front to back with constant memory. A chunk's plaintext is released only after that chunk
 * authenticated, and only once it is known whether it is the final chunk; the end of input is accepted only after
 * the final chunk authenticated. Errors are sticky: after the first, every call rethrows it.
 */
export class ContentDecryptor extends ChunkStream {
  protected readonly op = 'open';
  readonly #sodium: SodiumBackend;
  readonly #resolveKey: KeyResolver;
  readonly #binding: ContentBinding;
  #cipher: ChunkCipher | undefined;

  constructor(sodium: SodiumBackend, resolveKey: KeyResolver, binding: ContentBinding) {
    super();
    this.#sodium = sodium;
    this.#resolveKey = resolveKey;
    this.#binding = binding;
  }

  protected sodium(): SodiumBackend {
    return this.#sodium;
  }

  protected cipher(): ChunkCipher | undefined {
    return this.#cipher;
  }

  protected unit(cipher: ChunkCipher): number {
    return cipher.header.chunkSize + TAG_BYTES;
  }

  #where(): { subject: string; fileId: string } {
    return { subject: this.#binding.label ?? SUBJECT, fileId: this.#binding.fileId.toString('hex') };
  }

  protected start(): void {
    if (this.#cipher || this.pending.length < BLOB_HEADER_BYTES) return;
    const header = parseBlobHeader(this.pending.take(BLOB_HEADER_BYTES), this.#binding);
    const dek = this.#resolveKey(header.keyId);
    if (!dek) throw new IntegrityError('unknown-key', this.#where());
    this.#cipher = new ChunkCipher(this.#sodium, dek, this.#binding, header);
  }

  protected beforeFinal(cipher: ChunkCipher | undefined): ChunkCipher {
    if (!cipher || this.pending.length < TAG_BYTES) throw new IntegrityError('truncated', this.#where());
    return cipher;
  }
}

/**
 * Wraps an encryptor or decryptor as a Node Transform for `stream.pipeline`, running the crypto in this thread.
 * (Large files in the vault go through blob-io.ts and the worker pool instead.) Destroying the stream
 * (cancellation, or a failure elsewhere in the pipeline) wipes the key.
 */
export function chunkTransform(stream: ContentEncryptor | ContentDecryptor): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      try {
        stream.push(chunk, (out) => this.push(out));
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback: TransformCallback) {
      try {
        stream.finish((out) => this.push(out));
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
    destroy(error: Error | null, callback: (error: Error | null) => void) {
      stream.abort();
      callback(error);
    },
  });
}
