import { IntegrityError } from '../errors.js';
import { ascii } from './bytes.js';
import { HASH_BYTES, LABEL, NONCE_BYTES, TAG_BYTES } from './constants.js';
import { deriveSubkey, type Keyring, type SecretKey } from './keys.js';
import type { SodiumBackend } from './sodium.js';

/**
 * The index commitment of format 1.1 (FORMAT.md section 8.7): a keyed sum, mod 2^256, of one hash per covered index
 * row, sealed with the generation. Incremental: a write subtracts the hashes of the rows it replaces and adds those
 * of the rows it writes, so it costs O(rows changed).
 */

/** A value as SQLite returns it with safe integers on: INTEGER as bigint, REAL as number. */
export type SqlValue = null | bigint | number | string | Buffer;

/** Which table a row is from: the first byte of its encoding. */
export const ROW_TABLE = { nodes: 1, contents: 2, meta: 3 } as const;

const KEY_ID_BYTES = 4;
/** Stored in front of the sealed sum: key id u32 ‖ generation u64. */
const PREFIX_BYTES = KEY_ID_BYTES + 8;
const SEALED_COMMITMENT_BYTES = PREFIX_BYTES + NONCE_BYTES + HASH_BYTES + TAG_BYTES;
/** `meta.contents_sum`: key id u32 ‖ nonce ‖ sealed sum (no generation: see FORMAT.md 8.7). */
const SEALED_CONTENTS_SUM_BYTES = KEY_ID_BYTES + NONCE_BYTES + HASH_BYTES + TAG_BYTES;
const SUBJECT = 'vault index as a whole (its commitment, index.sqlite)';
const CONTENTS_SUM = {
  subject: 'sum of the contents rows kept in the vault index (meta.contents_sum, index.sqlite)',
  advice:
    'The file pointers in the index, or this sum, were changed outside Coffer. Put back a copy of the index you ' +
    'trust, or accept the index as it is now with "coffer verify --repair".',
};

/** `v(x)` of FORMAT.md 8.7: one SQLite value, tagged by storage class. */
function valueBytes(value: SqlValue): number {
  if (value === null) return 1;
  if (typeof value === 'bigint' || typeof value === 'number') return 9;
  return 5 + (typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : value.length);
}

/**
 * Writes `v(value)` at `at` of `out` (`view` spans the same bytes) and returns where the next value goes. Integers
 * go through the DataView and strings straight into `out`: `writeBigInt64LE` and `Buffer.from` per value were a
 * third of the cost of hashing the rows of an add.
 */
function writeValue(out: Buffer, view: DataView, at: number, value: SqlValue): number {
  if (value === null) {
    out[at] = 0;
    return at + 1;
  }
  if (typeof value === 'bigint') {
    out[at] = 1;
    view.setBigInt64(at + 1, value, true);
    return at + 9;
  }
  if (typeof value === 'number') {
    out[at] = 2;
    view.setFloat64(at + 1, value, true);
    return at + 9;
  }
  if (typeof value === 'string') {
    out[at] = 3;
    const length = out.write(value, at + 5, 'utf8');
    view.setUint32(at + 1, length, true);
    return at + 5 + length;
  }
  out[at] = 4;
  view.setUint32(at + 1, value.length, true);
  out.set(value, at + 5);
  return at + 5 + value.length;
}

/** A buffer rows are encoded into, reused from row to row, with a DataView over the same bytes. */
class RowBuffer {
  bytes: Buffer;
  view: DataView;

  constructor(size: number) {
    this.bytes = Buffer.alloc(size);
    this.view = new DataView(this.bytes.buffer, this.bytes.byteOffset, size);
  }

  /** encode(row) in this buffer (grown first when the row does not fit), as a view of it. */
  encode(table: number, values: readonly SqlValue[]): Buffer {
    let length = 1;
    for (const value of values) length += valueBytes(value);
    if (length > this.bytes.length) {
      this.bytes = Buffer.alloc(length);
      this.view = new DataView(this.bytes.buffer, this.bytes.byteOffset, length);
    }
    const { bytes, view } = this;
    bytes[0] = table;
    let at = 1;
    for (const value of values) at = writeValue(bytes, view, at, value);
    return bytes.subarray(0, length);
  }
}

/** encode(row) of FORMAT.md 8.7: the table's tag, then each column's value in table order. */
export function encodeRow(table: number, values: readonly SqlValue[]): Buffer {
  return Buffer.from(new RowBuffer(0).encode(table, values));
}

/** The row buffer's first size: every row but schema 1's inline blobs (up to 64 KiB) fits. */
const ROW_BUFFER_BYTES = 4096;

/** `sum += h` mod 2^256, both little-endian. */
export function addInto(sum: Buffer, h: Uint8Array): void {
  let carry = 0;
  for (let i = 0; i < HASH_BYTES; i++) {
    const total = (sum[i] ?? 0) + (h[i] ?? 0) + carry;
    sum[i] = total & 0xff;
    carry = total >> 8;
  }
}

/** `sum -= h` mod 2^256, both little-endian. */
function subtractFrom(sum: Buffer, h: Uint8Array): void {
  let borrow = 0;
  for (let i = 0; i < HASH_BYTES; i++) {
    const total = (sum[i] ?? 0) - (h[i] ?? 0) - borrow;
    sum[i] = total & 0xff;
    borrow = total < 0 ? 1 : 0;
  }
}

/** The key id a stored commitment was sealed under (unauthenticated until opened), or `undefined` if too short. */
export function commitmentKeyId(stored: Buffer): number | undefined {
  return stored.length >= PREFIX_BYTES ? stored.readUInt32LE(0) : undefined;
}

/**
 * Hashes index rows and seals and opens the commitment, under subkeys of one DEK. Wiped with that DEK (at lock), or
 * by {@link IndexCommitter.wipe}. Never log it: it holds key material.
 */
export class IndexCommitter {
  readonly keyId: number;
  readonly #sodium: SodiumBackend;
  readonly #vaultId: Buffer;
  readonly #rowKey: SecretKey;
  readonly #sealKey: SecretKey;
  // Rows hold nothing secret (sealed records, ids, offsets), so neither buffer needs wiping.
  readonly #rows = new RowBuffer(ROW_BUFFER_BYTES);
  readonly #hash = Buffer.alloc(HASH_BYTES);

  /**
   * @throws {@link IntegrityError} (`unknown-key`) when the vault has no DEK with this key id.
   */
  constructor(sodium: SodiumBackend, keyring: Keyring, vaultId: Buffer, keyId: number) {
    const dek = keyring.find(keyId);
    if (!dek) throw new IntegrityError('unknown-key', { subject: SUBJECT });
    this.keyId = keyId;
    this.#sodium = sodium;
    this.#vaultId = vaultId;
    this.#rowKey = deriveSubkey(sodium, dek, LABEL.indexRowKey, vaultId);
    this.#sealKey = deriveSubkey(sodium, dek, LABEL.indexSealKey, vaultId);
  }

  /** h(row) of FORMAT.md 8.7, in a buffer of its own. */
  hashRow(table: number, values: readonly SqlValue[]): Buffer {
    return Buffer.from(this.#hashOf(table, values));
  }

  /** `sum += h(row)`, mod 2^256: what a row written adds to the commitment. */
  addRow(sum: Buffer, table: number, values: readonly SqlValue[]): void {
    addInto(sum, this.#hashOf(table, values));
  }

  /** `sum -= h(row)`, mod 2^256: what a row deleted or replaced takes away from the commitment. */
  subtractRow(sum: Buffer, table: number, values: readonly SqlValue[]): void {
    subtractFrom(sum, this.#hashOf(table, values));
  }

  /**
   * h(row), in a buffer reused by the next call: an add hashes two rows per file, and encoding and hashing them
   * without an allocation per row halved their cost.
   */
  #hashOf(table: number, values: readonly SqlValue[]): Buffer {
    this.#sodium.blake2bInto(this.#hash, this.#rows.encode(table, values), this.#rowKey.bytes);
    return this.#hash;
  }

  /** label ‖ vault id ‖ u32 key id [‖ u64 generation]: the AAD of what this committer seals. */
  #aad(label: string, generation?: bigint): Buffer {
    const tail = Buffer.alloc(generation === undefined ? KEY_ID_BYTES : PREFIX_BYTES);
    tail.writeUInt32LE(this.keyId, 0);
    if (generation !== undefined) tail.writeBigUInt64LE(generation, KEY_ID_BYTES);
    return Buffer.concat([ascii(label), this.#vaultId, tail]);
  }

  /** The stored form of both sealed values: the AAD's tail (key id [‖ generation]) ‖ nonce ‖ ciphertext ‖ tag. */
  #sealed(sum: Buffer, aad: Buffer, tailBytes: number): Buffer {
    const nonce = this.#sodium.randomBytes(NONCE_BYTES);
    const sealed = this.#sodium.aeadEncrypt(sum, aad, nonce, this.#sealKey.bytes);
    return Buffer.concat([aad.subarray(-tailBytes), nonce, sealed]);
  }

  /** `meta.index_commitment`: the sum sealed at `generation`, with a fresh nonce. */
  seal(sum: Buffer, generation: bigint): Buffer {
    return this.#sealed(sum, this.#aad(LABEL.indexCommitment, generation), PREFIX_BYTES);
  }

  /** `meta.contents_sum`: the contents rows' part of the sum, sealed with a fresh nonce (FORMAT.md 8.7). */
  sealContentsSum(sum: Buffer): Buffer {
    return this.#sealed(sum, this.#aad(LABEL.contentsSum), KEY_ID_BYTES);
  }

  /**
   * Opens a stored `meta.contents_sum`.
   * @returns the contents rows' part of the sum, in a buffer of its own.
   * @throws {@link IntegrityError} when it is of the wrong length (`malformed`), or names another key id than the
   * commitment's or fails authentication (`tampered`).
   */
  openContentsSum(stored: Buffer): Buffer {
    if (stored.length !== SEALED_CONTENTS_SUM_BYTES) throw new IntegrityError('malformed', CONTENTS_SUM);
    // Always written with the commitment's key: another one, even a key the vault holds, was edited in.
    if (stored.readUInt32LE(0) !== this.keyId) throw new IntegrityError('tampered', CONTENTS_SUM);
    const sum = this.#sodium.aeadDecrypt(
      stored.subarray(KEY_ID_BYTES + NONCE_BYTES),
      this.#aad(LABEL.contentsSum),
      stored.subarray(KEY_ID_BYTES, KEY_ID_BYTES + NONCE_BYTES),
      this.#sealKey.bytes,
    );
    if (!sum) throw new IntegrityError('tampered', CONTENTS_SUM);
    return sum;
  }

  /**
   * Opens a stored commitment, which must have been sealed at `generation` (the index's `meta.generation`).
   * @returns the sum, in a buffer of its own.
   * @throws {@link IntegrityError} when it is missing, of the wrong length (`malformed`), sealed under another key id
   * (`unknown-key`), of another generation or fails authentication (`tampered`).
   */
  open(stored: Buffer | undefined, generation: bigint): Buffer {
    if (stored === undefined) throw new IntegrityError('missing', { subject: SUBJECT });
    if (stored.length !== SEALED_COMMITMENT_BYTES)
      throw new IntegrityError('malformed', { subject: SUBJECT });
    if (stored.readUInt32LE(0) !== this.keyId) throw new IntegrityError('unknown-key', { subject: SUBJECT });
    if (stored.readBigUInt64LE(4) !== generation) {
      throw new IntegrityError('tampered', {
        subject: `${SUBJECT}, sealed at generation ${stored.readBigUInt64LE(4)} while the index says ${generation}`,
      });
    }
    const sum = this.#sodium.aeadDecrypt(
      stored.subarray(PREFIX_BYTES + NONCE_BYTES),
      this.#aad(LABEL.indexCommitment, generation),
      stored.subarray(PREFIX_BYTES, PREFIX_BYTES + NONCE_BYTES),
      this.#sealKey.bytes,
    );
    if (!sum) throw new IntegrityError('tampered', { subject: SUBJECT });
    return sum;
  }

  wipe(): void {
    this.#rowKey.wipe();
    this.#sealKey.wipe();
  }
}

/** The error for contents rows that do not add up to `meta.contents_sum`. */
export function contentsSumDoesNotMatch(): IntegrityError {
  return new IntegrityError('tampered', CONTENTS_SUM);
}

/** The error for rows that do not add up to the sealed commitment. */
export function rowsDoNotMatch(): IntegrityError {
  return new IntegrityError('tampered', {
    subject: 'vault index as a whole (index.sqlite: its rows do not match its sealed commitment)',
    advice:
      'Entries were added, removed, edited, swapped or replaced by older copies outside Coffer, so what is listed ' +
      'may be wrong. Run "coffer verify" for details, then put back a copy of the index you trust, or accept the ' +
      'index as it is now with "coffer verify --repair".',
  });
}
