import { Transform, type TransformCallback } from 'node:stream';

import { IntegrityError, InvalidArgumentError } from '../errors.js';
import { ascii, ByteReader, u16, u32, u64, u8 } from './bytes.js';
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
import type { SodiumBackend } from './sodium.js';

/** First bytes of every content blob: "COFFERCB". */
export const BLOB_MAGIC = ascii('COFFERCB');
/** magic 8 ‖ version 2 ‖ algorithm 1 ‖ flags 1 ‖ chunk size 4 ‖ key id 4 ‖ file id 16 ‖ nonce prefix 16. */
export const BLOB_HEADER_BYTES = 52;
const NONCE_PREFIX_BYTES = 16;
const ALG_XCHACHA20POLY1305_CHUNKED = 1;
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
export function encodeBlobHeader(fields: Omit<BlobHeader, 'bytes'>): BlobHeader {
  const bytes = Buffer.concat([
    BLOB_MAGIC,
    u16(FORMAT_VERSION),
    u8(ALG_XCHACHA20POLY1305_CHUNKED),
    u8(0),
    u32(fields.chunkSize),
    u32(fields.keyId),
    fields.fileId,
    fields.noncePrefix,
  ]);
  return { ...fields, bytes };
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
  if (version !== FORMAT_VERSION || algorithm !== ALG_XCHACHA20POLY1305_CHUNKED || flags !== 0) {
    throw new IntegrityError('malformed', where);
  }
  const chunkSize = reader.u32();
  if (!checkChunkSize(chunkSize)) throw new IntegrityError('malformed', where);
  const keyId = reader.u32();
  const fileId = reader.bytes(ID_BYTES);
  const noncePrefix = reader.bytes(NONCE_PREFIX_BYTES);
  if (!fileId.equals(expected.fileId)) throw new IntegrityError('wrong-file', where);
  return { chunkSize, keyId, fileId, noncePrefix, bytes: Buffer.from(bytes.subarray(0, BLOB_HEADER_BYTES)) };
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

/**
 * Seals and opens the chunks of one blob. Holds the per-file content subkey: call {@link ChunkCipher.wipe} when done.
 * Nonce = the header's 16-byte random prefix ‖ uint64 chunk index; AAD = label ‖ header ‖ uint64 index ‖ final flag.
 */
export class ChunkCipher {
  readonly header: BlobHeader;
  readonly #sodium: SodiumBackend;
  readonly #subkey: SecretKey;
  readonly #fileIdHex: string;
  readonly #subject: string;

  constructor(sodium: SodiumBackend, dek: SecretKey, binding: ContentBinding, header: BlobHeader) {
    this.#sodium = sodium;
    this.header = header;
    this.#subkey = deriveSubkey(sodium, dek, LABEL.contentKey, binding.vaultId, binding.fileId);
    this.#fileIdHex = binding.fileId.toString('hex');
    this.#subject = binding.label ?? SUBJECT;
  }

  #nonce(index: number): Buffer {
    return Buffer.concat([this.header.noncePrefix, u64(index)]);
  }

  #aad(index: number, final: boolean): Buffer {
    return Buffer.concat([ascii(LABEL.content), this.header.bytes, u64(index), u8(final ? 1 : 0)]);
  }

  /** Seals one chunk. Only the final chunk may be shorter than the chunk size, and only an empty file's is empty. */
  seal(index: number, plaintext: Uint8Array, final: boolean): Buffer {
    return this.#sodium.aeadEncrypt(
      plaintext,
      this.#aad(index, final),
      this.#nonce(index),
      this.#subkey.bytes,
    );
  }

  /**
   * Opens one chunk record (ciphertext and tag).
   * @throws {@link IntegrityError} with reason `truncated` (a non-final chunk where the final one was expected),
   * `trailing-data` (the final chunk where more was expected), `malformed` (an empty final chunk after others) or
   * `tampered`.
   */
  open(index: number, record: Uint8Array, final: boolean): Buffer {
    const where = { subject: this.#subject, fileId: this.#fileIdHex, chunkIndex: index };
    const key = this.#subkey.bytes;
    const plaintext = this.#sodium.aeadDecrypt(record, this.#aad(index, final), this.#nonce(index), key);
    if (plaintext) {
      if (final && plaintext.length === 0 && index > 0) throw new IntegrityError('malformed', where);
      if (!final && plaintext.length !== this.header.chunkSize) throw new IntegrityError('malformed', where);
      return plaintext;
    }
    // Only on failure: try the other flag to tell a cut-off or extended blob from a damaged one.
    const other = this.#sodium.aeadDecrypt(record, this.#aad(index, !final), this.#nonce(index), key);
    if (other) {
      this.#sodium.memzero(other);
      throw new IntegrityError(final ? 'truncated' : 'trailing-data', where);
    }
    throw new IntegrityError('tampered', where);
  }

  wipe(): void {
    this.#subkey.wipe();
  }
}

/** Shared sticky-failure bookkeeping: after the first error every call rethrows it and the key is wiped. */
abstract class StickyChunkStream {
  #error: Error | undefined;
  #closed = false;
  protected abstract wipeKeys(): void;

  protected guard<T>(step: () => T): T {
    if (this.#error !== undefined) throw this.#error;
    if (this.#closed) throw new InvalidArgumentError('This content stream has already finished.');
    try {
      return step();
    } catch (error) {
      this.#error = error instanceof Error ? error : new Error(String(error));
      this.wipeKeys();
      throw this.#error;
    }
  }

  protected close(): void {
    this.#closed = true;
    this.wipeKeys();
  }

  /** Abandons the stream (on cancellation or a failure elsewhere) and wipes its key. */
  abort(): void {
    this.#closed = true;
    this.wipeKeys();
  }

  get failed(): boolean {
    return this.#error !== undefined;
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

/**
 * Encrypts one file's contents chunk by chunk with constant memory (at most about two chunks buffered).
 * Output is the blob: header, then sealed chunks, the last flagged final.
 */
export class ContentEncryptor extends StickyChunkStream {
  readonly #cipher: ChunkCipher;
  readonly #pending = new ByteQueue();
  #index = 0;
  #headerSent = false;

  /** @internal Use {@link ContentEncryptor.create}; this takes a fixed header for known-answer tests. */
  constructor(sodium: SodiumBackend, dek: SecretKey, binding: ContentBinding, header: BlobHeader) {
    super();
    if (!checkChunkSize(header.chunkSize)) {
      throw new InvalidArgumentError(
        `Chunk size must be between ${MIN_CHUNK_SIZE} and ${MAX_CHUNK_SIZE} bytes.`,
      );
    }
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
    if (binding.fileId.length !== ID_BYTES) throw new InvalidArgumentError(`A file id is ${ID_BYTES} bytes.`);
    const header = encodeBlobHeader({
      chunkSize,
      keyId,
      fileId: binding.fileId,
      noncePrefix: sodium.randomBytes(NONCE_PREFIX_BYTES),
    });
    return new ContentEncryptor(sodium, dek, binding, header);
  }

  protected wipeKeys(): void {
    this.#cipher.wipe();
  }

  #start(emit: Emit): void {
    if (!this.#headerSent) {
      emit(this.#cipher.header.bytes);
      this.#headerSent = true;
    }
  }

  /** Feeds plaintext; emits the blob bytes that are ready. */
  push(plaintext: Uint8Array, emit: Emit): void {
    this.guard(() => {
      this.#start(emit);
      this.#pending.push(plaintext);
      const chunkSize = this.#cipher.header.chunkSize;
      // Strictly more than a chunk: only then is it certain this chunk is not the final one.
      while (this.#pending.length > chunkSize) {
        emit(this.#cipher.seal(this.#index++, this.#pending.take(chunkSize), false));
      }
    });
  }

  /** Seals the final chunk, emits the last blob bytes, and wipes the key. */
  finish(emit: Emit): void {
    this.guard(() => {
      this.#start(emit);
      emit(this.#cipher.seal(this.#index++, this.#pending.take(this.#pending.length), true));
    });
    this.close();
  }
}

/**
 * Decrypts a blob read front to back with constant memory. A chunk's plaintext is released only after that chunk
 * authenticated, and only once it is known whether it is the final chunk; the end of input is accepted only after
 * the final chunk authenticated. Errors are sticky.
 */
export class ContentDecryptor extends StickyChunkStream {
  readonly #sodium: SodiumBackend;
  readonly #resolveKey: KeyResolver;
  readonly #binding: ContentBinding;
  readonly #pending = new ByteQueue();
  #cipher: ChunkCipher | undefined;
  #index = 0;

  constructor(sodium: SodiumBackend, resolveKey: KeyResolver, binding: ContentBinding) {
    super();
    this.#sodium = sodium;
    this.#resolveKey = resolveKey;
    this.#binding = binding;
  }

  protected wipeKeys(): void {
    this.#cipher?.wipe();
  }

  #where(): { subject: string; fileId: string } {
    return { subject: this.#binding.label ?? SUBJECT, fileId: this.#binding.fileId.toString('hex') };
  }

  #startIfReady(): ChunkCipher | undefined {
    if (this.#cipher) return this.#cipher;
    if (this.#pending.length < BLOB_HEADER_BYTES) return undefined;
    const header = parseBlobHeader(this.#pending.take(BLOB_HEADER_BYTES), this.#binding);
    const dek = this.#resolveKey(header.keyId);
    if (!dek) throw new IntegrityError('unknown-key', this.#where());
    this.#cipher = new ChunkCipher(this.#sodium, dek, this.#binding, header);
    return this.#cipher;
  }

  /**
   * Feeds blob bytes; emits, in order, the plaintext of each chunk as soon as it authenticated as a non-final chunk.
   * @throws {@link IntegrityError} at the first bad chunk; earlier chunks were
   * already emitted, later ones never are.
   */
  push(data: Uint8Array, emit: Emit): void {
    this.guard(() => {
      this.#pending.push(data);
      const cipher = this.#startIfReady();
      if (!cipher) return;
      const record = cipher.header.chunkSize + TAG_BYTES;
      while (this.#pending.length > record) {
        emit(cipher.open(this.#index++, this.#pending.take(record), false));
      }
    });
  }

  /**
   * Ends the input: authenticates the final chunk and emits its plaintext.
   * @throws {@link IntegrityError} when the blob ends without an authenticated final chunk.
   */
  finish(emit: Emit): void {
    this.guard(() => {
      const cipher = this.#startIfReady();
      if (!cipher || this.#pending.length < TAG_BYTES) throw new IntegrityError('truncated', this.#where());
      emit(cipher.open(this.#index++, this.#pending.take(this.#pending.length), true));
    });
    this.close();
  }
}

/**
 * Wraps an encryptor or decryptor as a Node Transform for `stream.pipeline`. Destroying the stream (cancellation,
 * or a failure elsewhere in the pipeline) wipes the key.
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
