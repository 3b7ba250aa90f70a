import { InvalidArgumentError, VaultLockedError } from '../errors.js';
import { KEY_BYTES } from './constants.js';
import type { SodiumBackend } from './sodium.js';

/**
 * A 256-bit key in memory that can be wiped. Owns its buffer: callers must not keep references to `bytes` beyond a
 * single call, so that {@link SecretKey.wipe} really removes the last copy Coffer controls.
 * Keys derived from it ({@link deriveSubkey}) are wiped with it: locking a vault wipes its KEK and DEKs, and with
 * them every subkey an operation still holds (a paused read stream's, say), at once.
 * Never log or serialise a SecretKey; it is key material.
 */
export class SecretKey {
  #bytes: Buffer | null;
  readonly #sodium: SodiumBackend;
  /** Keys derived from this one and not yet wiped. */
  readonly #derived = new Set<SecretKey>();
  #parent: SecretKey | undefined;

  /** Takes ownership of `bytes`, which should come from {@link SodiumBackend.secureAlloc}. */
  constructor(sodium: SodiumBackend, bytes: Buffer) {
    this.#sodium = sodium;
    this.#bytes = bytes;
  }

  /** A fresh random key in secure memory. */
  static generate(sodium: SodiumBackend): SecretKey {
    const bytes = sodium.secureAlloc(KEY_BYTES);
    const random = sodium.randomBytes(KEY_BYTES);
    bytes.set(random);
    sodium.memzero(random);
    return new SecretKey(sodium, bytes);
  }

  /**
   * A long-lived key (KEK, DEK) copied into secure memory from `source`, which the caller still owns and should wipe.
   * Secure allocations are few by design: each costs guard pages, and the kernel caps mappings per process.
   */
  static copyOf(sodium: SodiumBackend, source: Uint8Array): SecretKey {
    const bytes = sodium.secureAlloc(source.byteLength);
    bytes.set(source);
    return new SecretKey(sodium, bytes);
  }

  /**
   * A short-lived key (per-file subkey, passphrase key) in an ordinary zeroed, unpooled buffer: created per file, so
   * secure allocations would exhaust the process's memory mappings. Wiped like any other key.
   */
  static ephemeral(sodium: SodiumBackend, source: Uint8Array): SecretKey {
    const bytes = Buffer.alloc(source.byteLength);
    bytes.set(source);
    return new SecretKey(sodium, bytes);
  }

  /**
   * A short-lived key derived from `parent`, copied from `source` (see {@link SecretKey.ephemeral}), and wiped when
   * `parent` is.
   * @throws {@link VaultLockedError} when `parent` has been wiped.
   */
  static derivedFrom(parent: SecretKey, source: Uint8Array): SecretKey {
    if (parent.#bytes === null) throw new VaultLockedError();
    const key = SecretKey.ephemeral(parent.#sodium, source);
    key.#parent = parent;
    parent.#derived.add(key);
    return key;
  }

  /**
   * The key bytes, for passing straight to a primitive.
   * @throws {@link VaultLockedError} after {@link SecretKey.wipe}.
   */
  get bytes(): Buffer {
    if (this.#bytes === null) throw new VaultLockedError();
    return this.#bytes;
  }

  get wiped(): boolean {
    return this.#bytes === null;
  }

  /** Overwrites the key, and every key derived from it, with zeros and forgets them. Idempotent. */
  wipe(): void {
    if (this.#bytes !== null) {
      this.#sodium.memzero(this.#bytes);
      this.#bytes = null;
    }
    for (const derived of this.#derived) derived.wipe();
    const parent = this.#parent;
    if (parent) parent.#derived.delete(this);
    this.#parent = undefined;
  }
}

/** Data-encryption keys by their uint32 key id, as unwrapped at unlock. */
export class Keyring {
  readonly #keys = new Map<number, SecretKey>();
  #activeKeyId: number | undefined;
  #wiped = false;

  /** Adds a key; the key added last becomes the one new data is written with. */
  add(keyId: number, key: SecretKey): void {
    this.#keys.set(keyId, key);
    this.#activeKeyId = keyId;
  }

  /**
   * The key with this id, or `undefined` if the vault has none.
   * @throws {@link VaultLockedError} after {@link Keyring.wipe}: a locked vault's missing key is no sign of damage.
   */
  find(keyId: number): SecretKey | undefined {
    if (this.#wiped) throw new VaultLockedError();
    return this.#keys.get(keyId);
  }

  /**
   * The id of the key new data is encrypted with.
   * @throws {@link VaultLockedError} when the keyring is empty (locked).
   */
  get activeKeyId(): number {
    if (this.#activeKeyId === undefined) throw new VaultLockedError();
    return this.#activeKeyId;
  }

  /**
   * The key new data is encrypted with, and its id.
   * @throws {@link VaultLockedError} when the keyring is empty (locked).
   */
  active(): { keyId: number; key: SecretKey } {
    const keyId = this.activeKeyId;
    const key = this.#keys.get(keyId);
    if (!key) throw new VaultLockedError();
    return { keyId, key };
  }

  get keyIds(): number[] {
    return [...this.#keys.keys()];
  }

  /**
   * The ids among `keyIds` this keyring holds no key for, each once, ascending.
   * @throws {@link VaultLockedError} after {@link Keyring.wipe}.
   */
  lacking(keyIds: Iterable<number>): number[] {
    return [...new Set(keyIds)].filter((keyId) => this.find(keyId) === undefined).sort((a, b) => a - b);
  }

  /**
   * Of `keyIds`, those above every key id the ring holds (sorted, each once): a newer header's, when an older one
   * was put back (FORMAT.md 4.7, 11).
   * @throws {@link VaultLockedError} after {@link Keyring.wipe}.
   */
  above(keyIds: Iterable<number>): number[] {
    const largest = Math.max(0, ...this.keyIds);
    return [...new Set(keyIds)].filter((keyId) => keyId > largest).sort((a, b) => a - b);
  }

  /**
   * Wipes and forgets a key that nothing names any more (re-encryption retired it, FORMAT.md section 11).
   * @throws {@link InvalidArgumentError} for the active key: new data is written with it.
   */
  remove(keyId: number): void {
    if (keyId === this.#activeKeyId) throw new InvalidArgumentError('The active data key cannot be removed.');
    this.#keys.get(keyId)?.wipe();
    this.#keys.delete(keyId);
  }

  /** Wipes every key (and every key derived from one) and empties the ring for good. */
  wipe(): void {
    for (const key of this.#keys.values()) key.wipe();
    this.#keys.clear();
    this.#activeKeyId = undefined;
    this.#wiped = true;
  }
}

/**
 * Derives a purpose-bound subkey: BLAKE2b-256 keyed with `key` over `label ‖ context…`. One subkey per purpose keeps
 * a key from ever serving two roles (the gocryptfs audit's lesson). The subkey is wiped when `key` is.
 * @throws {@link VaultLockedError} when `key` has been wiped.
 */
export function deriveSubkey(
  sodium: SodiumBackend,
  key: SecretKey,
  label: string,
  ...context: Uint8Array[]
): SecretKey {
  const derived = sodium.blake2b(
    KEY_BYTES,
    Buffer.concat([Buffer.from(label, 'ascii'), ...context]),
    key.bytes,
  );
  const subkey = SecretKey.derivedFrom(key, derived);
  sodium.memzero(derived);
  return subkey;
}
