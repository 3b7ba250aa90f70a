import { VaultLockedError } from '../errors.js';
import { KEY_BYTES } from './constants.js';
import type { SodiumBackend } from './sodium.js';

/**
 * A 256-bit key in memory that can be wiped. Owns its buffer: callers must not keep references to `bytes` beyond a
 * single call, so that {@link SecretKey.wipe} really removes the last copy Coffer controls.
 * Never log or serialise a SecretKey; it is key material.
 */
export class SecretKey {
  #bytes: Buffer | null;
  readonly #sodium: SodiumBackend;

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

  /** Overwrites the key with zeros and forgets it. Idempotent. */
  wipe(): void {
    if (this.#bytes !== null) {
      this.#sodium.memzero(this.#bytes);
      this.#bytes = null;
    }
  }
}

/** Data-encryption keys by their uint32 key id, as unwrapped at unlock. */
export class Keyring {
  readonly #keys = new Map<number, SecretKey>();
  #activeKeyId: number | undefined;

  /** Adds a key; the key added last becomes the one new data is written with. */
  add(keyId: number, key: SecretKey): void {
    this.#keys.set(keyId, key);
    this.#activeKeyId = keyId;
  }

  /** The key with this id, or `undefined` if the vault has none (or it is locked). */
  find(keyId: number): SecretKey | undefined {
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

  /** Wipes every key and empties the ring. */
  wipe(): void {
    for (const key of this.#keys.values()) key.wipe();
    this.#keys.clear();
    this.#activeKeyId = undefined;
  }
}

/**
 * Derives a purpose-bound subkey: BLAKE2b-256 keyed with `key` over `label ‖ context…`. One subkey per purpose keeps
 * a key from ever serving two roles (the gocryptfs audit's lesson).
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
  const subkey = SecretKey.ephemeral(sodium, derived);
  sodium.memzero(derived);
  return subkey;
}
