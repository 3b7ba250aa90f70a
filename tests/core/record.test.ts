import { randomBytes } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { Keyring, SecretKey } from '../../src/core/crypto/keys.js';
import { RECORD_BUCKET, RecordSealer } from '../../src/core/crypto/record.js';
import { IntegrityError, VaultLockedError } from '../../src/core/errors.js';
import { backends } from '../helpers/backends.js';

describe.each(backends)('metadata records ($name)', (sodium) => {
  const keyring = new Keyring();
  keyring.add(1, SecretKey.generate(sodium));
  const vaultId = randomBytes(16);
  const sealer = new RecordSealer(sodium, keyring, vaultId);
  const row = (): { recordId: Buffer; keyId: number } => ({ recordId: randomBytes(16), keyId: 1 });

  it('round-trips a record bound to its row', () => {
    const binding = row();
    const plaintext = Buffer.from(JSON.stringify({ name: 'Passport scan.jpg', size: 1234 }));
    expect(sealer.open(binding, sealer.seal(binding, plaintext))).toEqual(plaintext);
  });

  it('seals every record of up to 255 bytes (about 130 plus a name) to the same 296 bytes', () => {
    const lengths = new Set<number>();
    for (let n = 0; n < RECORD_BUCKET; n++) lengths.add(sealer.seal(row(), Buffer.alloc(n, 0x61)).length);
    expect([...lengths]).toEqual([24 + RECORD_BUCKET + 16]);
    expect(sealer.seal(row(), Buffer.alloc(RECORD_BUCKET, 0x61)).length).toBe(24 + 2 * RECORD_BUCKET + 16);
  });

  it('rejects a record swapped between rows, or into another vault', () => {
    const a = row();
    const b = row();
    const sealedA = sealer.seal(a, Buffer.from('a'));
    expect(() => sealer.open(b, sealedA)).toThrow(IntegrityError);
    const otherVault = new RecordSealer(sodium, keyring, randomBytes(16));
    expect(() => otherVault.open(a, sealedA)).toThrow(IntegrityError);
  });

  it('opens a record only under its exact 16-byte row id, never under that id with bytes added or missing', () => {
    const binding = row();
    const sealed = sealer.seal(binding, Buffer.from('bound'));
    for (const recordId of [
      Buffer.concat([binding.recordId, Buffer.from('anything')]),
      binding.recordId.subarray(0, 15),
    ]) {
      expect(() => sealer.open({ ...binding, recordId }, sealed)).toThrow(IntegrityError);
    }
    expect(sealer.open(binding, sealed)).toEqual(Buffer.from('bound'));
  });

  it('stops opening records once its subkeys are wiped at lock', () => {
    const binding = row();
    const sealed = sealer.seal(binding, Buffer.from('x'));
    const lockedKeyring = new Keyring();
    lockedKeyring.add(1, SecretKey.copyOf(sodium, keyring.find(1)?.bytes ?? Buffer.alloc(32)));
    const local = new RecordSealer(sodium, lockedKeyring, vaultId);
    expect(local.open(binding, sealed)).toEqual(Buffer.from('x'));
    local.wipe();
    lockedKeyring.wipe();
    expect(() => local.open(binding, sealed)).toThrow(VaultLockedError);
  });
});
