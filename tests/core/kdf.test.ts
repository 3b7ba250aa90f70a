import { describe, expect, it } from 'vitest';

import {
  checkKdfParams,
  derivePassphraseKey,
  encodePassphrase,
  KDF_CEILING,
  KDF_FLOOR,
  KDF_PRESETS,
} from '../../src/core/crypto/kdf.js';
import { KdfLimitError } from '../../src/core/errors.js';
import { nativeSodium } from '../helpers/backends.js';

describe('key derivation limits', () => {
  it('accepts every preset and the exact floor and ceiling', () => {
    for (const params of [...Object.values(KDF_PRESETS), KDF_FLOOR, KDF_CEILING]) {
      expect(() => {
        checkKdfParams(params);
      }).not.toThrow();
    }
  });

  it.for([
    { opslimit: KDF_FLOOR.opslimit - 1, memlimitKiB: KDF_FLOOR.memlimitKiB },
    { opslimit: KDF_FLOOR.opslimit, memlimitKiB: KDF_FLOOR.memlimitKiB - 1 },
    { opslimit: KDF_CEILING.opslimit + 1, memlimitKiB: KDF_FLOOR.memlimitKiB },
    { opslimit: KDF_FLOOR.opslimit, memlimitKiB: KDF_CEILING.memlimitKiB + 1 },
    { opslimit: 2.5, memlimitKiB: KDF_FLOOR.memlimitKiB },
    // Each parameter is held to the floor on its own: more passes do not make up for less memory, or the reverse.
    { opslimit: 8, memlimitKiB: KDF_FLOOR.memlimitKiB / 2 },
    { opslimit: KDF_FLOOR.opslimit - 1, memlimitKiB: KDF_CEILING.memlimitKiB },
  ])('refuses %o', (params) => {
    expect(() => {
      checkKdfParams(params);
    }).toThrow(KdfLimitError);
  });

  it('refuses an all-zero derived key (the known memory-starved failure of some builds)', async () => {
    const broken = { ...nativeSodium, argon2id: () => Promise.resolve(Buffer.alloc(32)) };
    await expect(
      derivePassphraseKey(broken, Buffer.from('pw'), Buffer.alloc(16, 1), KDF_FLOOR),
    ).rejects.toThrow(/all-zero/);
  });

  it('refuses a salt of the wrong length', async () => {
    await expect(
      derivePassphraseKey(nativeSodium, Buffer.from('pw'), Buffer.alloc(8), KDF_FLOOR),
    ).rejects.toBeInstanceOf(KdfLimitError);
  });

  it('encodes passphrases as NFC UTF-8', () => {
    expect(encodePassphrase(nativeSodium, 'e\u0301')).toEqual(Buffer.from('\u00e9', 'utf8'));
  });
});
