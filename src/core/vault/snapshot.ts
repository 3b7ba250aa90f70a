import { ascii } from '../crypto/bytes.js';
import { HASH_BYTES, LABEL, NONCE_BYTES, TAG_BYTES } from '../crypto/constants.js';
import { deriveSubkey, type Keyring } from '../crypto/keys.js';
import { padme } from '../crypto/padding.js';
import type { SodiumBackend } from '../crypto/sodium.js';
import { IntegrityError } from '../errors.js';
import { nameKey } from '../../shared/name-key.js';
import { isStorableName } from '../names.js';
import { hasDuplicate, hashId, hashNameKey } from './find-duplicate.js';
import type { TreeNode } from './tree.js';

/**
 * The tree snapshot (FORMAT.md section 8.6): every decrypted record of the index in one sealed blob, so unlocking a
 * large vault opens one AEAD message instead of one per row. A cache: it is used only when it was sealed at the
 * index's current generation and holds as many entries as the index has rows; otherwise the rows are read.
 */

/**
 * Plaintext version 1 (format 1.0) ended with the names, so its length gave their total length to the byte.
 * Version 2 (format 1.1) carries the index commitment's sum and is padded: the names' length, the names, zeros.
 */
const FORMAT = 1;
const FORMAT_WITH_SUM = 2;
const HEAD_BYTES = 5;
const NAMES_LENGTH_BYTES = 4;
/** Version 2 is padded to Padmé of its length, and to at least a multiple of this. */
const BUCKET_FLOOR = 4096;
/** id 16 ‖ key id u32 ‖ type u8 ‖ parent index u32 ‖ size f64 ‖ mtime f64 ‖ file id 16. */
const ENTRY_BYTES = 57;
/** Where entry `i` starts, counted from the entry count's byte (version 2: after the sum). */
const entryAt = (i: number): number => HEAD_BYTES + i * ENTRY_BYTES;
const ROOT_INDEX = 0xffffffff;
const TYPE_FILE = 0;
const TYPE_FOLDER = 1;
/** Stored in front of the sealed bytes: key id u32 ‖ generation u64. */
const PREFIX_BYTES = 12;
const SUBJECT = 'tree snapshot in the index';
// Fatal: a name that is not valid UTF-8 is refused, not read as U+FFFD.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function isZero(bytes: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (bytes[i] !== 0) return false;
  return true;
}

/** What sealing and opening a snapshot needs from an unlocked vault. */
export interface SnapshotKeys {
  readonly sodium: SodiumBackend;
  readonly keyring: Keyring;
  readonly vaultId: Buffer;
}

/** An opened snapshot: the tree, and in format 1.1 the index commitment's sum it was sealed with. */
export interface OpenedSnapshot {
  readonly nodes: TreeNode[];
  readonly sum: Buffer | undefined;
}

/**
 * Plaintext bytes of a snapshot of `count` entries whose names, joined by "/", take `namesBytes` bytes: version 2
 * (`padded`) is padded to max(Padmé(L), L rounded up to 4 KiB), so one rename moves it only when it crosses a bucket.
 */
export function snapshotPlaintextSize(count: number, namesBytes: number, padded = true): number {
  const entries = HEAD_BYTES + count * ENTRY_BYTES;
  if (!padded) return entries + namesBytes;
  const length = HASH_BYTES + entries + NAMES_LENGTH_BYTES + namesBytes;
  return Math.max(padme(length), Math.ceil(length / BUCKET_FLOOR) * BUCKET_FLOOR);
}

/**
 * The snapshot's plaintext for these nodes, in this order: version 1, or with `sum` version 2 (the sum after the
 * version byte). Exported for tests that forge snapshots.
 */
export function encodeSnapshot(nodes: readonly TreeNode[], sum?: Buffer): Buffer {
  const position = new Map<string, number>();
  nodes.forEach((node, i) => position.set(node.id, i));
  // Names never contain "/", so one separator-joined string holds them all, decoded with one call.
  const names = Buffer.from(nodes.map((node) => node.name).join('/'), 'utf8');
  const whole = Buffer.alloc(snapshotPlaintextSize(nodes.length, names.length, sum !== undefined));
  whole[0] = sum ? FORMAT_WITH_SUM : FORMAT;
  sum?.copy(whole, 1);
  // From here on laid out as version 1, shifted by the sum.
  const out = whole.subarray(sum?.length ?? 0);
  out.writeUInt32LE(nodes.length, 1);
  nodes.forEach((node, i) => {
    const at = entryAt(i);
    const parent = node.parent === null ? ROOT_INDEX : position.get(node.parent);
    if (parent === undefined) throw new Error(`internal error: ${node.id} has a parent outside the tree`);
    out.write(node.id, at, 16, 'hex');
    out.writeUInt32LE(node.keyId, at + 16);
    out[at + 20] = node.type === 'file' ? TYPE_FILE : TYPE_FOLDER;
    out.writeUInt32LE(parent, at + 21);
    out.writeDoubleLE(node.size, at + 25);
    out.writeDoubleLE(node.mtime, at + 33);
    if (node.fileId !== undefined) out.write(node.fileId, at + 41, 16, 'hex');
  });
  const namesAt = HEAD_BYTES + nodes.length * ENTRY_BYTES;
  if (sum) {
    out.writeUInt32LE(names.length, namesAt);
    names.copy(out, namesAt + NAMES_LENGTH_BYTES);
  } else names.copy(out, namesAt);
  return whole;
}

/** The names of a snapshot of `count` entries, after checking (version 2) its padding. */
function namesOf(
  plaintext: Buffer,
  bytes: Buffer,
  count: number,
  padded: boolean,
  malformed: () => IntegrityError,
): string[] {
  const namesStart = HEAD_BYTES + count * ENTRY_BYTES;
  let names: Buffer;
  if (!padded) {
    if (namesStart > bytes.length) throw malformed();
    names = bytes.subarray(namesStart);
  } else {
    if (namesStart + NAMES_LENGTH_BYTES > bytes.length) throw malformed();
    const length = bytes.readUInt32LE(namesStart);
    const end = namesStart + NAMES_LENGTH_BYTES + length;
    if (plaintext.length !== snapshotPlaintextSize(count, length) || !isZero(bytes, end, bytes.length))
      throw malformed();
    names = bytes.subarray(namesStart + NAMES_LENGTH_BYTES, end);
  }
  try {
    return count === 0 ? [] : UTF8.decode(names).split('/');
  } catch {
    throw malformed();
  }
}

/**
 * Whether every entry reaches the root through folders only (FORMAT.md 8.6), by parent index: no loop and no parent
 * that is a file. By index, in typed arrays, it costs a few milliseconds for 100,000 entries; the same walk over the
 * built tree (by hex id, through a set) took about a sixth of an unlock.
 */
function allReachRoot(parents: Uint32Array, types: Uint8Array): boolean {
  const UNSEEN = 0;
  const ON_PATH = 1;
  const REACHES = 2;
  const state = new Uint8Array(parents.length);
  for (let i = 0; i < parents.length; i++) {
    let at = i;
    while (at !== ROOT_INDEX && state[at] === UNSEEN) {
      state[at] = ON_PATH;
      at = parents[at] as number;
      if (at !== ROOT_INDEX && types[at] !== TYPE_FOLDER) return false;
    }
    if (at !== ROOT_INDEX && state[at] === ON_PATH) return false;
    for (let j = i; j !== at; j = parents[j] as number) state[j] = REACHES;
  }
  return true;
}

/**
 * An opened snapshot's entries, checked field by field (FORMAT.md 8.6) but not yet made into nodes: an unlock needs
 * the root's entries at once and the rest only when something asks for them, and making 100,000 nodes (hex ids,
 * objects, then the tree's maps) was most of an unlock. Owns the decrypted bytes until {@link SnapshotEntries.wipe}.
 */
export class SnapshotEntries {
  readonly #plaintext: Buffer;
  /** The plaintext from the entry count on (version 2 is shifted by the sum). */
  readonly #bytes: Buffer;
  /**
   * The same bytes, for the entries' numbers: DataView's getters are built into V8, where Buffer's readUInt32LE and
   * readDoubleLE are JavaScript that runs interpreted the first time, a third of a first unlock's reading.
   */
  readonly #view: DataView;
  #names: string[];
  readonly #parents: Uint32Array;
  readonly #ids: (string | undefined)[];

  /** @throws {@link IntegrityError} (`malformed`) for an entry or layout a writer does not produce. */
  constructor(plaintext: Buffer) {
    const malformed = (): IntegrityError => new IntegrityError('malformed', { subject: SUBJECT });
    this.#plaintext = plaintext;
    let bytes = plaintext;
    if (plaintext[0] === FORMAT_WITH_SUM) {
      if (plaintext.length < HASH_BYTES + HEAD_BYTES) throw malformed();
      this.sum = Buffer.from(plaintext.subarray(1, 1 + HASH_BYTES));
      bytes = plaintext.subarray(HASH_BYTES);
    } else if (plaintext[0] !== FORMAT) throw malformed();
    if (bytes.length < HEAD_BYTES) throw malformed();
    this.#bytes = bytes;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#view = view;
    const count = view.getUint32(1, true);
    this.count = count;
    this.#names = namesOf(plaintext, bytes, count, this.sum !== undefined, malformed);
    if (this.#names.length !== count) throw malformed();
    this.#ids = new Array<string | undefined>(count);
    const parents = new Uint32Array(count);
    const types = new Uint8Array(count);
    for (let i = 0; i < count; i++) {
      const at = entryAt(i);
      const type = bytes[at + 20] as number;
      const parent = view.getUint32(at + 21, true);
      const size = view.getFloat64(at + 25, true);
      if (parent !== ROOT_INDEX && parent >= count) throw malformed();
      if ((type !== TYPE_FILE && type !== TYPE_FOLDER) || !Number.isSafeInteger(size) || size < 0)
        throw malformed();
      // A folder has no size and no contents, as in its record (FORMAT.md section 8.3).
      if (type === TYPE_FOLDER && (size !== 0 || !isZero(bytes, at + 41, at + 57))) throw malformed();
      if (!Number.isFinite(view.getFloat64(at + 33, true))) throw malformed();
      parents[i] = parent;
      types[i] = type;
    }
    if (!allReachRoot(parents, types)) throw malformed();
    this.#parents = parents;
    this.#checkNamesAndIds(malformed);
  }

  /**
   * Checks what a tree would refuse when the nodes are made (FORMAT.md 8.6): every name passes the name rules, no
   * two entries share a record id, no folder holds two entries whose names clash. All of it at unlock, though the
   * nodes below the root are made later, so what is found is reported at unlock and the rows are read instead.
   */
  #checkNamesAndIds(malformed: () => IntegrityError): void {
    const names = this.#names;
    const parents = this.#parents;
    // A writer only stores checked names; anything else was forged.
    // Indexed: for-of over 100,000 names ran five times slower the first time in a process (interpreted, an
    // iterator result per name).
    for (let i = 0; i < names.length; i++) if (!isStorableName(names[i] as string)) throw malformed();
    const bytes = this.#bytes;
    const sameId = (a: number, b: number): boolean =>
      bytes.compare(bytes, entryAt(b), entryAt(b) + 16, entryAt(a), entryAt(a) + 16) === 0;
    const view = this.#view;
    if (hasDuplicate(this.count, (i) => hashId(view, entryAt(i)), sameId)) throw malformed();
    const sameKey = (a: number, b: number): boolean =>
      parents[a] === parents[b] && nameKey(names[a] as string) === nameKey(names[b] as string);
    if (hasDuplicate(this.count, (i) => hashNameKey(parents[i] as number, names[i] as string), sameKey))
      throw malformed();
  }

  /** How many entries the snapshot holds. */
  readonly count: number;
  /** The index commitment's sum the snapshot was sealed with (format 1.1), or `undefined` (format 1.0). */
  readonly sum: Buffer | undefined;

  /** Whether the entry at position `i` is in the root folder. */
  isAtRoot(i: number): boolean {
    return this.#parents[i] === ROOT_INDEX;
  }

  #id(i: number): string {
    let id = this.#ids[i];
    if (id === undefined) {
      const at = entryAt(i);
      id = this.#bytes.toString('hex', at, at + 16);
      this.#ids[i] = id;
    }
    return id;
  }

  /** The node of the entry at position `i`. */
  node(i: number): TreeNode {
    const bytes = this.#bytes;
    const view = this.#view;
    const at = entryAt(i);
    const parentIndex = this.#parents[i] as number;
    const parent = parentIndex === ROOT_INDEX ? null : this.#id(parentIndex);
    const name = this.#names[i] as string;
    const size = view.getFloat64(at + 25, true);
    const mtime = view.getFloat64(at + 33, true);
    const keyId = view.getUint32(at + 16, true);
    const id = this.#id(i);
    return bytes[at + 20] === TYPE_FILE
      ? {
          type: 'file',
          name,
          parent,
          size,
          mtime,
          fileId: bytes.toString('hex', at + 41, at + 57),
          id,
          keyId,
        }
      : { type: 'folder', name, parent, size, mtime, id, keyId };
  }

  /** Every entry's node, in the snapshot's order. */
  nodes(): TreeNode[] {
    const out = new Array<TreeNode>(this.count);
    for (let i = 0; i < this.count; i++) out[i] = this.node(i);
    return out;
  }

  /** Zeroes the decrypted bytes and drops the names; no entry can be read after. */
  wipe(): void {
    this.#plaintext.fill(0);
    this.#names = [];
  }
}

function aad(keys: SnapshotKeys, keyId: number, generation: bigint): Buffer {
  const tail = Buffer.alloc(PREFIX_BYTES);
  tail.writeUInt32LE(keyId, 0);
  tail.writeBigUInt64LE(generation, 4);
  return Buffer.concat([ascii(LABEL.snapshot), keys.vaultId, tail]);
}

function withSubkey<T>(keys: SnapshotKeys, keyId: number, use: (key: Uint8Array) => T): T | undefined {
  const dek = keys.keyring.find(keyId);
  if (!dek) return undefined;
  const subkey = deriveSubkey(keys.sodium, dek, LABEL.snapshotKey, keys.vaultId);
  try {
    return use(subkey.bytes);
  } finally {
    subkey.wipe();
  }
}

/**
 * Seals the whole tree as of index generation `generation`, under the vault's active key; in format 1.1 with the
 * index commitment's `sum` at that generation (FORMAT.md 8.6).
 */
export function sealSnapshot(
  keys: SnapshotKeys,
  nodes: readonly TreeNode[],
  generation: bigint,
  sum?: Buffer,
): Buffer {
  const keyId = keys.keyring.activeKeyId;
  const plaintext = encodeSnapshot(nodes, sum);
  const nonce = keys.sodium.randomBytes(NONCE_BYTES);
  const additional = aad(keys, keyId, generation);
  try {
    const sealed = withSubkey(keys, keyId, (key) =>
      keys.sodium.aeadEncrypt(plaintext, additional, nonce, key),
    );
    if (!sealed) throw new Error('internal error: the active key is not in the keyring');
    // The stored prefix (key id, generation) is the AAD's tail.
    return Buffer.concat([additional.subarray(-PREFIX_BYTES), nonce, sealed]);
  } finally {
    plaintext.fill(0);
  }
}

/** The key id a stored snapshot names (unauthenticated until opened), or `undefined` if too short to hold one. */
export function snapshotKeyId(stored: Buffer): number | undefined {
  return stored.length >= 4 ? stored.readUInt32LE(0) : undefined;
}

/** The generation a stored snapshot claims to describe (unauthenticated until opened). */
export function snapshotGeneration(stored: Buffer): bigint | undefined {
  return stored.length >= PREFIX_BYTES ? stored.readBigUInt64LE(4) : undefined;
}

/** The plaintext's length of a stored snapshot (prefix, nonce and tag removed), or `undefined` when too short. */
function plaintextLength(stored: Buffer): number | undefined {
  const length = stored.length - PREFIX_BYTES - NONCE_BYTES - TAG_BYTES;
  return length >= 0 ? length : undefined;
}

/**
 * Memory for the plaintext of `stored`, already written to (zeros) so that its pages are mapped: made while the key
 * is derived, it spares the decryption after it the wait for fresh memory (7 MB for 100,000 entries: 28–40 ms on
 * the development VM, where each first touch of a page is a fault the host serves). `undefined` when there is none.
 */
export function snapshotRoom(stored: Buffer | undefined): Buffer | undefined {
  const length = stored && plaintextLength(stored);
  if (length === undefined) return undefined;
  try {
    return Buffer.alloc(length).fill(0);
  } catch {
    // Never throws (an unlock calls it while its key derivation is pending): without memory now, the decryption
    // asks for it again, and fails then if it must.
    return undefined;
  }
}

/**
 * Opens a stored snapshot, its entries checked but not made into nodes; the caller wipes them. With `room` (from
 * {@link snapshotRoom} for the same `stored`) the plaintext is decrypted into it, which then belongs to the entries
 * (their wipe zeroes it, as does a failure here); a room of another length is left untouched.
 * @throws {@link IntegrityError} when it fails authentication (`tampered`), names a key the vault lacks
 * (`unknown-key`), or does not parse (`malformed`, `truncated`).
 */
export function openSnapshotEntries(keys: SnapshotKeys, stored: Buffer, room?: Buffer): SnapshotEntries {
  const length = plaintextLength(stored);
  if (length === undefined) throw new IntegrityError('truncated', { subject: SUBJECT });
  const keyId = stored.readUInt32LE(0);
  const generation = stored.readBigUInt64LE(4);
  const nonce = stored.subarray(PREFIX_BYTES, PREFIX_BYTES + NONCE_BYTES);
  const sealed = stored.subarray(PREFIX_BYTES + NONCE_BYTES);
  const plaintext = room?.length === length ? room : Buffer.alloc(length);
  const opened = withSubkey(keys, keyId, (key) =>
    keys.sodium.aeadDecryptDetached(
      plaintext,
      sealed.subarray(0, length),
      sealed.subarray(length),
      aad(keys, keyId, generation),
      nonce,
      key,
    ),
  );
  if (opened === undefined) throw new IntegrityError('unknown-key', { subject: SUBJECT });
  if (!opened) throw new IntegrityError('tampered', { subject: SUBJECT });
  try {
    return new SnapshotEntries(plaintext);
  } catch (error) {
    plaintext.fill(0);
    throw error;
  }
}

/**
 * Opens a stored snapshot.
 * @returns the tree's nodes, in no particular order, and the commitment's sum when it carries one.
 * @throws {@link IntegrityError} as {@link openSnapshotEntries}.
 */
export function openSnapshot(keys: SnapshotKeys, stored: Buffer): OpenedSnapshot {
  const entries = openSnapshotEntries(keys, stored);
  try {
    return { nodes: entries.nodes(), sum: entries.sum };
  } finally {
    entries.wipe();
  }
}
