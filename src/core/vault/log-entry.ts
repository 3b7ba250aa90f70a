import { ascii } from '../crypto/bytes.js';
import { LABEL, NONCE_BYTES, TAG_BYTES } from '../crypto/constants.js';
import { deriveSubkey, type Keyring, type SecretKey } from '../crypto/keys.js';
import type { SodiumBackend } from '../crypto/sodium.js';
import { IntegrityError } from '../errors.js';

/**
 * One entry of the activity log (FORMAT.md section 10): a fixed-size sealed record of one operation. Every entry
 * seals to the same length, so the log shows how many operations there were and nothing about which.
 */

/** What an entry records, by its stored kind number, with the names of its counts in stored order. */
export const ACTIVITY_KINDS = {
  unlock: { code: 1, counts: ['failedAttempts'] },
  add: { code: 2, counts: ['files', 'folders', 'bytes', 'problems'] },
  restore: { code: 3, counts: ['files', 'folders', 'bytes', 'problems'] },
  delete: { code: 4, counts: ['entries'] },
  move: { code: 5, counts: ['entries'] },
  rename: { code: 6, counts: ['entries'] },
  'create-folder': { code: 7, counts: ['folders'] },
  verify: { code: 8, counts: ['files', 'problems', 'unreferenced', 'recovered'] },
  rotate: { code: 9, counts: ['keyId', 'previousKeyId'] },
  'passphrase-changed': { code: 10, counts: ['slots'] },
  'slot-added': { code: 11, counts: ['slots'] },
  'slot-removed': { code: 12, counts: ['slots'] },
  'recovery-key-made': { code: 13, counts: ['slots'] },
  'header-imported': { code: 14, counts: ['slots'] },
  'log-trimmed': { code: 15, counts: ['firstKept', 'dropped'] },
  'log-repaired': { code: 16, counts: ['tornBytes', 'discardedEntries'] },
  reencrypt: { code: 17, counts: ['keyId', 'files', 'records', 'keysRemoved'] },
} as const satisfies Record<string, { code: number; counts: readonly string[] }>;

export type ActivityKind = keyof typeof ACTIVITY_KINDS;

/** How the operation ended; stored as 0–3. */
export const ACTIVITY_OUTCOMES = ['done', 'problems', 'cancelled', 'failed'] as const;
export type ActivityOutcome = (typeof ACTIVITY_OUTCOMES)[number];

/** Kind-specific flags, by bit (only `verify` has any). */
const ACTIVITY_FLAGS: Partial<Record<ActivityKind, readonly string[]>> = {
  verify: ['readData', 'repair', 'deleteUnreferenced'],
};

/** An operation to record. Counts not given are 0; flags not given are off. */
export interface ActivityEvent {
  readonly kind: ActivityKind;
  readonly outcome?: ActivityOutcome;
  readonly counts?: Readonly<Record<string, number>>;
  readonly flags?: readonly string[];
  /** Milliseconds since the epoch; now when not given. */
  readonly time?: number;
}

/** A decoded entry. Plain data: safe to print or send over IPC. */
export interface ActivityEntry {
  /** The entry's sequence number: 0 for the first entry the log ever had, one more for each after it. */
  readonly seq: number;
  /** Milliseconds since the epoch. */
  readonly time: number;
  /** What happened; `unknown-<n>` for a kind this build does not know (written by a newer Coffer). */
  readonly kind: ActivityKind | `unknown-${number}`;
  readonly outcome: ActivityOutcome;
  /** The kind's counts by name (see {@link ACTIVITY_KINDS}); `c0`…`c3` for an unknown kind. */
  readonly counts: Readonly<Record<string, number>>;
  readonly flags: readonly string[];
  /** The DEK the entry is sealed under. */
  readonly keyId: number;
}

/** Plaintext: kind u8 ‖ outcome u8 ‖ reserved u16 ‖ flags u32 ‖ time u64 ‖ four counts u64. */
const ENTRY_PLAINTEXT_BYTES = 48;
/** Stored: seq u64 ‖ key id u32 ‖ nonce[24] ‖ ciphertext[48] ‖ tag[16]. */
const ENTRY_PREFIX_BYTES = 12;
export const LOG_ENTRY_BYTES = ENTRY_PREFIX_BYTES + NONCE_BYTES + ENTRY_PLAINTEXT_BYTES + TAG_BYTES;
const SUBJECT = 'activity log entry';

/** What sealing and opening entries needs from an unlocked vault. */
export interface LogKeys {
  readonly sodium: SodiumBackend;
  readonly keyring: Keyring;
  readonly vaultId: Buffer;
}

function kindByCode(code: number): ActivityKind | undefined {
  return (Object.keys(ACTIVITY_KINDS) as ActivityKind[]).find((kind) => ACTIVITY_KINDS[kind].code === code);
}

function encode(event: ActivityEvent): Buffer {
  const spec = ACTIVITY_KINDS[event.kind];
  const out = Buffer.alloc(ENTRY_PLAINTEXT_BYTES);
  out[0] = spec.code;
  out[1] = ACTIVITY_OUTCOMES.indexOf(event.outcome ?? 'done');
  const flagNames = ACTIVITY_FLAGS[event.kind] ?? [];
  let flags = 0;
  for (const flag of event.flags ?? []) {
    const bit = flagNames.indexOf(flag);
    if (bit < 0) throw new Error(`internal error: ${event.kind} has no flag ${flag}`);
    flags |= 1 << bit;
  }
  out.writeUInt32LE(flags, 4);
  out.writeBigUInt64LE(BigInt(Math.max(0, Math.trunc(event.time ?? Date.now()))), 8);
  const names: readonly string[] = spec.counts;
  for (const [name, value] of Object.entries(event.counts ?? {})) {
    const slot = names.indexOf(name);
    if (slot < 0) throw new Error(`internal error: ${event.kind} has no count ${name}`);
    out.writeBigUInt64LE(BigInt(Math.max(0, Math.trunc(value))), 16 + 8 * slot);
  }
  return out;
}

function decode(plaintext: Buffer, seq: number, keyId: number): ActivityEntry {
  const malformed = (): IntegrityError => new IntegrityError('malformed', { subject: SUBJECT });
  const code = plaintext.readUInt8(0);
  const outcome = ACTIVITY_OUTCOMES[plaintext.readUInt8(1)];
  if (outcome === undefined || plaintext.readUInt16LE(2) !== 0) throw malformed();
  const numbers: number[] = [];
  for (let at = 8; at < ENTRY_PLAINTEXT_BYTES; at += 8) {
    const value = plaintext.readBigUInt64LE(at);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw malformed();
    numbers.push(Number(value));
  }
  const [time = 0, ...values] = numbers;
  const kind = kindByCode(code);
  const flagBits = plaintext.readUInt32LE(4);
  const flagNames = kind === undefined ? [] : (ACTIVITY_FLAGS[kind] ?? []);
  // A known kind's unused flags and counts are zero, as its writer left them.
  if (kind !== undefined && flagBits >>> flagNames.length !== 0) throw malformed();
  const names: readonly string[] =
    kind === undefined ? values.map((_, i) => `c${i}`) : ACTIVITY_KINDS[kind].counts;
  if (values.slice(names.length).some((value) => value !== 0)) throw malformed();
  return {
    seq,
    time,
    kind: kind ?? `unknown-${code}`,
    outcome,
    counts: Object.fromEntries(names.map((name, i) => [name, values[i] ?? 0])),
    flags: flagNames.filter((_, bit) => (flagBits & (1 << bit)) !== 0),
    keyId,
  };
}

function aad(keys: LogKeys, seq: bigint, keyId: number): Buffer {
  const tail = Buffer.alloc(ENTRY_PREFIX_BYTES);
  tail.writeBigUInt64LE(seq, 0);
  tail.writeUInt32LE(keyId, 8);
  return Buffer.concat([ascii(LABEL.log), keys.vaultId, tail]);
}

/**
 * Log subkeys by key id, derived once per vault session and wiped with their DEKs at lock.
 */
export class LogSealer {
  readonly #keys: LogKeys;
  readonly #subkeys = new Map<number, SecretKey>();

  constructor(keys: LogKeys) {
    this.#keys = keys;
  }

  #subkey(keyId: number): SecretKey | undefined {
    let subkey = this.#subkeys.get(keyId);
    if (subkey === undefined || subkey.wiped) {
      const dek = this.#keys.keyring.find(keyId);
      if (!dek) return undefined;
      subkey = deriveSubkey(this.#keys.sodium, dek, LABEL.logKey, this.#keys.vaultId);
      this.#subkeys.set(keyId, subkey);
    }
    return subkey;
  }

  /**
   * Seals `event` as the entry with sequence number `seq`, under the vault's active key.
   * @throws {@link VaultLockedError} when the vault's keys have been wiped.
   */
  seal(seq: number, event: ActivityEvent): Buffer {
    const plaintext = encode(event);
    try {
      return this.#sealPlaintext(BigInt(seq), plaintext);
    } finally {
      plaintext.fill(0);
    }
  }

  #sealPlaintext(seq: bigint, plaintext: Buffer): Buffer {
    const keyId = this.#keys.keyring.activeKeyId;
    const subkey = this.#subkey(keyId);
    if (!subkey) throw new Error('internal error: the active key is not in the keyring');
    const nonce = this.#keys.sodium.randomBytes(NONCE_BYTES);
    const additional = aad(this.#keys, seq, keyId);
    const sealed = this.#keys.sodium.aeadEncrypt(plaintext, additional, nonce, subkey.bytes);
    return Buffer.concat([additional.subarray(-ENTRY_PREFIX_BYTES), nonce, sealed]);
  }

  /**
   * Opens one stored entry ({@link LOG_ENTRY_BYTES} bytes).
   * @throws {@link IntegrityError}: `truncated` (too short), `unknown-key`, `tampered` (fails authentication: edited,
   * moved to another sequence number, or from another vault), `malformed` (non-zero reserved bits or unused counts).
   */
  open(stored: Buffer): ActivityEntry {
    const { seq, keyId, plaintext } = this.#decrypt(stored);
    try {
      return decode(plaintext, Number(seq), keyId);
    } finally {
      plaintext.fill(0);
    }
  }

  /**
   * The same entry (same seq, same plaintext, a fresh nonce) sealed under the active key, for re-encryption
   * (FORMAT.md section 11); an entry already under it is returned as it is.
   * @throws {@link IntegrityError} as {@link LogSealer.open} does when it does not open.
   */
  reseal(stored: Buffer): Buffer {
    const { seq, keyId, plaintext } = this.#decrypt(stored);
    try {
      decode(plaintext, Number(seq), keyId);
      return keyId === this.#keys.keyring.activeKeyId ? stored : this.#sealPlaintext(seq, plaintext);
    } finally {
      plaintext.fill(0);
    }
  }

  /** An entry's authenticated plaintext (the caller wipes it), sequence number and key id. */
  #decrypt(stored: Buffer): { seq: bigint; keyId: number; plaintext: Buffer } {
    if (stored.length !== LOG_ENTRY_BYTES) throw new IntegrityError('truncated', { subject: SUBJECT });
    const seq = stored.readBigUInt64LE(0);
    const keyId = stored.readUInt32LE(8);
    const subkey = this.#subkey(keyId);
    if (!subkey) throw new IntegrityError('unknown-key', { subject: SUBJECT });
    const plaintext = this.#keys.sodium.aeadDecrypt(
      stored.subarray(ENTRY_PREFIX_BYTES + NONCE_BYTES),
      aad(this.#keys, seq, keyId),
      stored.subarray(ENTRY_PREFIX_BYTES, ENTRY_PREFIX_BYTES + NONCE_BYTES),
      subkey.bytes,
    );
    if (!plaintext) throw new IntegrityError('tampered', { subject: SUBJECT });
    if (seq > BigInt(Number.MAX_SAFE_INTEGER)) {
      plaintext.fill(0);
      throw new IntegrityError('malformed', { subject: SUBJECT });
    }
    return { seq, keyId, plaintext };
  }

  /** The sequence number an entry claims (unauthenticated until opened). */
  static claimedSeq(stored: Buffer): bigint {
    return stored.readBigUInt64LE(0);
  }

  wipe(): void {
    for (const subkey of this.#subkeys.values()) subkey.wipe();
    this.#subkeys.clear();
  }
}
