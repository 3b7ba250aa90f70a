import { createRequire } from 'node:module';

import { hostRuntime } from '../host-runtime.js';

/**
 * The libsodium primitives Coffer uses, behind one interface so the native binding (fast, Argon2id off the main
 * thread) and the WebAssembly build (portable fallback) are interchangeable and can be checked against each other.
 *
 * Every function takes and returns plain bytes; no function here keeps state or logs its arguments, because the
 * arguments are key material.
 */
export interface SodiumBackend {
  readonly name: 'sodium-native' | 'libsodium-wrappers-sumo';
  /** XChaCha20-Poly1305-IETF; returns ciphertext followed by the 16-byte tag. */
  aeadEncrypt(plaintext: Uint8Array, aad: Uint8Array, nonce: Uint8Array, key: Uint8Array): Buffer;
  /** Returns the plaintext, or `null` when the tag does not verify. */
  aeadDecrypt(ciphertext: Uint8Array, aad: Uint8Array, nonce: Uint8Array, key: Uint8Array): Buffer | null;
  /**
   * Detached XChaCha20-Poly1305-IETF: encrypts `message` into `ciphertext` (same length; may be the same memory) and
   * writes the 16-byte tag into `tag`. Lets chunks be sealed in place, with no allocation.
   */
  aeadEncryptDetached(
    ciphertext: Uint8Array,
    tag: Uint8Array,
    message: Uint8Array,
    aad: Uint8Array,
    nonce: Uint8Array,
    key: Uint8Array,
  ): void;
  /**
   * Detached decryption into `message` (same length as `ciphertext`, separate memory); false when the tag fails, in
   * which case `message` holds no plaintext.
   */
  aeadDecryptDetached(
    message: Uint8Array,
    ciphertext: Uint8Array,
    tag: Uint8Array,
    aad: Uint8Array,
    nonce: Uint8Array,
    key: Uint8Array,
  ): boolean;
  /** BLAKE2b (crypto_generichash) with an optional key. */
  blake2b(outLength: number, message: Uint8Array, key?: Uint8Array): Buffer;
  /**
   * Keyed BLAKE2b into `out` (its length is the hash's): no allocation, for hashing many small messages (index rows).
   */
  blake2bInto(out: Uint8Array, message: Uint8Array, key: Uint8Array): void;
  /** Argon2id v1.3 (crypto_pwhash, ALG_ARGON2ID13) into a zeroed, unpooled buffer. `memlimit` is in bytes. */
  argon2id(
    outLength: number,
    passphrase: Uint8Array,
    salt: Uint8Array,
    opslimit: number,
    memlimit: number,
  ): Promise<Buffer>;
  /**
   * Fresh random bytes from the system CSPRNG, in a buffer of exactly `length` bytes that shares its memory with
   * nothing else. A caller that uses them as a secret wipes them after copying them where they belong.
   */
  randomBytes(length: number): Buffer;
  /**
   * A zeroed buffer for long-lived secrets: guarded, locked memory (sodium_malloc) where the backend offers it.
   * Each native allocation maps guard pages and Linux caps a process at ~65k mappings, so this is for the handful
   * of keys an unlocked vault holds, never per file. With the host runtime's `guardedKeyMemory` off (Electron)
   * an ordinary zeroed, unpooled buffer.
   */
  secureAlloc(length: number): Buffer;
  memzero(buffer: Uint8Array): void;
}

const require = createRequire(import.meta.url);

/** The slice of sodium-native's API that Coffer calls (its published types lag behind the package). */
interface NativeSodium {
  crypto_aead_xchacha20poly1305_ietf_encrypt(
    c: Uint8Array,
    m: Uint8Array,
    ad: Uint8Array | null,
    nsec: null,
    npub: Uint8Array,
    k: Uint8Array,
  ): number;
  crypto_aead_xchacha20poly1305_ietf_decrypt(
    m: Uint8Array,
    nsec: null,
    c: Uint8Array,
    ad: Uint8Array | null,
    npub: Uint8Array,
    k: Uint8Array,
  ): number;
  crypto_aead_xchacha20poly1305_ietf_encrypt_detached(
    c: Uint8Array,
    mac: Uint8Array,
    m: Uint8Array,
    ad: Uint8Array | null,
    nsec: null,
    npub: Uint8Array,
    k: Uint8Array,
  ): number;
  crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
    m: Uint8Array,
    nsec: null,
    c: Uint8Array,
    mac: Uint8Array,
    ad: Uint8Array | null,
    npub: Uint8Array,
    k: Uint8Array,
  ): void;
  crypto_generichash(out: Uint8Array, input: Uint8Array, key?: Uint8Array): void;
  crypto_pwhash_async(
    out: Uint8Array,
    passwd: Uint8Array,
    salt: Uint8Array,
    opslimit: number,
    memlimit: number,
    alg: number,
  ): Promise<void>;
  crypto_pwhash_ALG_ARGON2ID13: number;
  randombytes_buf(buf: Uint8Array): void;
  sodium_malloc(size: number): Buffer;
  sodium_memzero(buf: Uint8Array): void;
}

const TAG_BYTES = 16;
const RANDOM_BLOCK_BYTES = 64 * 1024;

/**
 * Serves small random requests from a block filled by one CSPRNG call: a call per 16-byte id cost ~10 us, about a
 * tenth of adding a small file. Every byte is handed out once, as a copy that owns its memory: a view into the block
 * would carry the whole block wherever it went (a structured clone to a worker copies a view's entire buffer), and
 * with it the bytes later drawn as keys. Handed-out bytes are zeroed in the block, so a key drawn from it leaves no
 * copy behind. A failed refill leaves the old block in place, so no call ever hands out unfilled (zero) bytes.
 * @internal Exported for tests.
 */
export function pooledRandom(fill: (buffer: Buffer) => void): (length: number) => Buffer {
  let block = Buffer.alloc(0);
  let used = 0;
  return (length) => {
    const out = Buffer.alloc(length);
    if (length > RANDOM_BLOCK_BYTES / 4) {
      fill(out);
      return out;
    }
    if (used + length > block.length) {
      const next = Buffer.alloc(RANDOM_BLOCK_BYTES);
      fill(next);
      block.fill(0);
      block = next;
      used = 0;
    }
    const drawn = block.subarray(used, used + length);
    out.set(drawn);
    drawn.fill(0);
    used += length;
    return out;
  };
}

function nativeBackend(native: NativeSodium): SodiumBackend {
  return {
    name: 'sodium-native',
    aeadEncrypt(plaintext, aad, nonce, key) {
      const out = Buffer.alloc(plaintext.byteLength + TAG_BYTES);
      native.crypto_aead_xchacha20poly1305_ietf_encrypt(out, plaintext, aad, null, nonce, key);
      return out;
    },
    aeadDecrypt(ciphertext, aad, nonce, key) {
      if (ciphertext.byteLength < TAG_BYTES) return null;
      const out = Buffer.alloc(ciphertext.byteLength - TAG_BYTES);
      try {
        native.crypto_aead_xchacha20poly1305_ietf_decrypt(out, null, ciphertext, aad, nonce, key);
        return out;
      } catch {
        return null;
      }
    },
    aeadEncryptDetached(ciphertext, tag, message, aad, nonce, key) {
      native.crypto_aead_xchacha20poly1305_ietf_encrypt_detached(
        ciphertext,
        tag,
        message,
        aad,
        null,
        nonce,
        key,
      );
    },
    aeadDecryptDetached(message, ciphertext, tag, aad, nonce, key) {
      try {
        native.crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
          message,
          null,
          ciphertext,
          tag,
          aad,
          nonce,
          key,
        );
        return true;
      } catch {
        return false;
      }
    },
    blake2b(outLength, message, key) {
      const out = Buffer.alloc(outLength);
      if (key === undefined) native.crypto_generichash(out, message);
      else native.crypto_generichash(out, message, key);
      return out;
    },
    blake2bInto(out, message, key) {
      native.crypto_generichash(out, message, key);
    },
    async argon2id(outLength, passphrase, salt, opslimit, memlimit) {
      const out = Buffer.alloc(outLength);
      // crypto_pwhash_async runs on libuv's thread pool, so a 1 s derivation never stalls the event loop.
      await native.crypto_pwhash_async(
        out,
        passphrase,
        salt,
        opslimit,
        memlimit,
        native.crypto_pwhash_ALG_ARGON2ID13,
      );
      return out;
    },
    randomBytes: pooledRandom((buffer) => {
      native.randombytes_buf(buffer);
    }),
    secureAlloc(length) {
      if (!hostRuntime().guardedKeyMemory) return Buffer.alloc(length);
      const out = native.sodium_malloc(length);
      native.sodium_memzero(out);
      return out;
    },
    memzero(buffer) {
      native.sodium_memzero(buffer);
    },
  };
}

type Sumo = typeof import('libsodium-wrappers-sumo');

/** Copies WebAssembly-heap output into a Buffer that owns its memory, then wipes the source. */
function ownedBuffer(sumo: Sumo, bytes: Uint8Array): Buffer {
  const out = Buffer.alloc(bytes.byteLength);
  out.set(bytes);
  sumo.memzero(bytes);
  return out;
}

function wasmBackend(sumo: Sumo): SodiumBackend {
  return {
    name: 'libsodium-wrappers-sumo',
    aeadEncrypt(plaintext, aad, nonce, key) {
      return ownedBuffer(
        sumo,
        sumo.crypto_aead_xchacha20poly1305_ietf_encrypt(plaintext, aad, null, nonce, key),
      );
    },
    aeadDecrypt(ciphertext, aad, nonce, key) {
      if (ciphertext.byteLength < TAG_BYTES) return null;
      try {
        return ownedBuffer(
          sumo,
          sumo.crypto_aead_xchacha20poly1305_ietf_decrypt(null, ciphertext, aad, nonce, key),
        );
      } catch {
        return null;
      }
    },
    aeadEncryptDetached(ciphertext, tag, message, aad, nonce, key) {
      const sealed = sumo.crypto_aead_xchacha20poly1305_ietf_encrypt_detached(message, aad, null, nonce, key);
      ciphertext.set(sealed.ciphertext);
      tag.set(sealed.mac);
    },
    aeadDecryptDetached(message, ciphertext, tag, aad, nonce, key) {
      try {
        const plaintext = sumo.crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
          null,
          ciphertext,
          tag,
          aad,
          nonce,
          key,
        );
        message.set(plaintext);
        sumo.memzero(plaintext);
        return true;
      } catch {
        return false;
      }
    },
    blake2b(outLength, message, key) {
      return ownedBuffer(sumo, sumo.crypto_generichash(outLength, message, key ?? null));
    },
    blake2bInto(out, message, key) {
      const hash = sumo.crypto_generichash(out.byteLength, message, key);
      out.set(hash);
      sumo.memzero(hash);
    },
    argon2id(outLength, passphrase, salt, opslimit, memlimit) {
      // The WebAssembly build has no asynchronous variant; this blocks the calling thread for the derivation.
      return Promise.resolve(
        ownedBuffer(
          sumo,
          sumo.crypto_pwhash(
            outLength,
            passphrase,
            salt,
            opslimit,
            memlimit,
            sumo.crypto_pwhash_ALG_ARGON2ID13,
          ),
        ),
      );
    },
    randomBytes(length) {
      return ownedBuffer(sumo, sumo.randombytes_buf(length));
    },
    secureAlloc(length) {
      return Buffer.alloc(length);
    },
    memzero(buffer) {
      buffer.fill(0);
    },
  };
}

let nativeCache: SodiumBackend | null | undefined;
let wasmCache: Promise<SodiumBackend> | undefined;

/**
 * The native backend, or `null` when the sodium-native addon cannot be loaded on this platform.
 */
export function loadNativeSodium(): SodiumBackend | null {
  if (nativeCache === undefined) {
    try {
      nativeCache = nativeBackend(require('sodium-native') as NativeSodium);
    } catch {
      nativeCache = null;
    }
  }
  return nativeCache;
}

/** The WebAssembly backend (libsodium-wrappers-sumo: the default build lacks Argon2id). */
export function loadWasmSodium(): Promise<SodiumBackend> {
  wasmCache ??= (async () => {
    const sumo = require('libsodium-wrappers-sumo') as Sumo;
    await sumo.ready;
    return wasmBackend(sumo);
  })();
  return wasmCache;
}

let warnedFallback = false;

/**
 * The fastest backend available: sodium-native, else the WebAssembly build with a single warning per process,
 * because the fallback is about four times slower, runs Argon2id on the calling thread and has no worker threads.
 * `warn` receives the message without a program name (by default it goes to stderr as "coffer: …").
 */
export async function loadSodium(
  warn: (message: string) => void = (message) => {
    console.warn(`coffer: ${message}`);
  },
): Promise<SodiumBackend> {
  const native = loadNativeSodium();
  if (native) return native;
  if (!warnedFallback) {
    warnedFallback = true;
    warn('the native libsodium module could not be loaded; using the slower WebAssembly build.');
  }
  return loadWasmSodium();
}
