import { randomBytes } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { ContentEncryptor, encodeBlobHeader } from '../../src/core/crypto/content.js';
import { SecretKey } from '../../src/core/crypto/keys.js';
import { loadSodium } from '../../src/core/crypto/sodium.js';
import { backends, flipped } from '../helpers/backends.js';

const [native, wasm] = backends;
if (!native || !wasm) throw new Error('both backends are required');

describe('sodium-native and libsodium-wrappers-sumo', () => {
  it('produce identical AEAD ciphertext and plaintext for random inputs', () => {
    for (let i = 0; i < 200; i++) {
      const message = randomBytes(i * 37);
      const aad = randomBytes(i % 50);
      const nonce = randomBytes(24);
      const key = randomBytes(32);
      const a = native.aeadEncrypt(message, aad, nonce, key);
      expect(wasm.aeadEncrypt(message, aad, nonce, key)).toEqual(a);
      expect(wasm.aeadDecrypt(a, aad, nonce, key)).toEqual(message);
      const damaged = flipped(a, 0);
      expect(native.aeadDecrypt(damaged, aad, nonce, key)).toBeNull();
      expect(wasm.aeadDecrypt(damaged, aad, nonce, key)).toBeNull();
    }
  });

  it('produce identical BLAKE2b and Argon2id output', async () => {
    const key = randomBytes(32);
    const message = randomBytes(1000);
    expect(wasm.blake2b(32, message, key)).toEqual(native.blake2b(32, message, key));
    expect(wasm.blake2b(32, message)).toEqual(native.blake2b(32, message));
    for (const backend of backends) {
      const into = Buffer.alloc(32);
      backend.blake2bInto(into, message, key);
      expect(into).toEqual(native.blake2b(32, message, key));
    }
    const salt = randomBytes(16);
    const args = [32, Buffer.from('pässword'), salt, 2, 64 * 1024 * 1024] as const;
    expect(await wasm.argon2id(...args)).toEqual(await native.argon2id(...args));
  });

  it('produce byte-identical content blobs for the same key and header', () => {
    const dekBytes = randomBytes(32);
    const binding = { vaultId: randomBytes(16), fileId: randomBytes(16) };
    const header = encodeBlobHeader({
      chunkSize: 4096,
      keyId: 1,
      fileId: binding.fileId,
      noncePrefix: randomBytes(16),
    });
    const plaintext = randomBytes(3 * 4096 + 99);
    const blobs = backends.map((sodium) => {
      const encryptor = new ContentEncryptor(sodium, SecretKey.copyOf(sodium, dekBytes), binding, header);
      const out: Buffer[] = [];
      encryptor.push(plaintext, (b) => out.push(b));
      encryptor.finish((b) => out.push(b));
      return Buffer.concat(out);
    });
    expect(blobs[1]).toEqual(blobs[0]);
  });

  it('loadSodium prefers the native backend', async () => {
    expect((await loadSodium()).name).toBe('sodium-native');
  });
});
