import { randomBytes } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { LABEL } from '../../src/core/crypto/constants.js';
import { ChunkCipher, ContentEncryptor, newBlobHeader, runHere } from '../../src/core/crypto/content.js';
import { deriveSubkey, Keyring, SecretKey } from '../../src/core/crypto/keys.js';
import { VaultLockedError } from '../../src/core/errors.js';
import { backends } from '../helpers/backends.js';

const zero = (bytes: Uint8Array): boolean => bytes.every((byte) => byte === 0);

describe.each(backends)('wiped keys ($name)', (sodium) => {
  const binding = () => ({ vaultId: randomBytes(16), fileId: randomBytes(16) });

  it('wipes every subkey derived from a key with it, and derives nothing from a wiped key', () => {
    const dek = SecretKey.generate(sodium);
    const subkey = deriveSubkey(sodium, dek, LABEL.contentKey, randomBytes(16));
    const grandchild = deriveSubkey(sodium, subkey, LABEL.headerMac);
    const subkeyBytes = subkey.bytes;
    const grandchildBytes = grandchild.bytes;
    expect(zero(subkeyBytes)).toBe(false);
    dek.wipe();
    expect(zero(subkeyBytes)).toBe(true);
    expect(zero(grandchildBytes)).toBe(true);
    expect(() => subkey.bytes).toThrow(VaultLockedError);
    expect(() => grandchild.bytes).toThrow(VaultLockedError);
    expect(() => deriveSubkey(sodium, dek, LABEL.contentKey)).toThrow(VaultLockedError);
  });

  it('a wiped keyring says the vault is locked rather than that a key is missing', () => {
    const keyring = new Keyring();
    keyring.add(1, SecretKey.generate(sodium));
    expect(keyring.find(2)).toBeUndefined();
    keyring.wipe();
    expect(() => keyring.find(1)).toThrow(VaultLockedError);
  });

  it('a file cipher whose DEK was wiped (at lock) refuses to seal or open, and leaves its buffer untouched', () => {
    const dek = SecretKey.generate(sodium);
    const bind = binding();
    const cipher = new ChunkCipher(sodium, dek, bind, newBlobHeader(sodium, 1, bind, 64));
    const sealed = cipher.seal(0, Buffer.from('before the lock'), true);
    const chunks = { firstIndex: 0, count: 1, lastLength: 10, endsWithFinal: true };
    // A job made before the lock holds its key by reference, as a batch in flight does.
    const records = new Uint8Array(26).fill(0x61);
    const job = cipher.job('seal', chunks, records);
    dek.wipe();
    expect(() => runHere(sodium, job)).toThrow(VaultLockedError);
    expect(records.every((byte) => byte === 0x61)).toBe(true);
    expect(() => cipher.seal(0, Buffer.from('after the lock'), true)).toThrow(VaultLockedError);
    expect(() => cipher.open(0, sealed, true)).toThrow(VaultLockedError);
  });

  it('an encryptor whose DEK was wiped mid-file emits nothing more', () => {
    const dek = SecretKey.generate(sodium);
    const encryptor = ContentEncryptor.create(sodium, dek, 1, binding(), 64);
    const out: Buffer[] = [];
    encryptor.push(randomBytes(200), (bytes) => out.push(bytes));
    const emitted = out.length;
    dek.wipe();
    expect(() => {
      encryptor.push(randomBytes(200), (bytes) => out.push(bytes));
    }).toThrow(VaultLockedError);
    expect(() => {
      encryptor.finish((bytes) => out.push(bytes));
    }).toThrow(VaultLockedError);
    expect(out).toHaveLength(emitted);
  });
});
