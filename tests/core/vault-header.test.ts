import { describe, expect, it, vi } from 'vitest';

import { HASH_BYTES } from '../../src/core/crypto/constants.js';
import { encodePassphrase, KDF_PRESETS } from '../../src/core/crypto/kdf.js';
import type { SodiumBackend } from '../../src/core/crypto/sodium.js';
import {
  addPassphraseSlot,
  createVaultKeys,
  parseVaultHeader,
  unlockVaultKeys,
} from '../../src/core/crypto/vault-header.js';
import {
  IntegrityError,
  InvalidArgumentError,
  KdfLimitError,
  NotAVaultError,
  UnsupportedFormatError,
  VaultLockedError,
  WrongPassphraseError,
} from '../../src/core/errors.js';
import { backends, flipped, hex, nativeSodium } from '../helpers/backends.js';

const FLOOR = KDF_PRESETS.interactive;
const SLOT_OFFSET = 32;

/** The same backend, counting Argon2id runs, to prove limits are enforced before any derivation. */
function counting(sodium: SodiumBackend): SodiumBackend & { derivations: () => number } {
  const argon2id = vi.fn(sodium.argon2id.bind(sodium));
  return { ...sodium, argon2id, derivations: () => argon2id.mock.calls.length };
}

function withChecksum(sodium: SodiumBackend, header: Buffer): Buffer {
  const out = Buffer.from(header);
  sodium.blake2b(HASH_BYTES, out.subarray(0, out.length - HASH_BYTES)).copy(out, out.length - HASH_BYTES);
  return out;
}

describe.each(backends)('vault header ($name)', (sodium) => {
  const passphrase = (text: string): Buffer => encodePassphrase(sodium, text);

  it('creates a vault whose passphrase unlocks the same keys, and wipes them on lock', async () => {
    const created = await createVaultKeys(sodium, passphrase('hunter2 hunter2'), FLOOR);
    const unlocked = await unlockVaultKeys(sodium, created.headerBytes, passphrase('hunter2 hunter2'));
    expect(unlocked.vaultId).toEqual(created.keys.vaultId);
    expect(unlocked.keyring.keyIds).toEqual([1]);
    expect(unlocked.keyring.find(1)?.bytes).toEqual(created.keys.keyring.find(1)?.bytes);
    expect(unlocked.kek.bytes).toEqual(created.keys.kek.bytes);
    const kekBytes = unlocked.kek.bytes;
    const dekBytes = unlocked.keyring.find(1)?.bytes ?? Buffer.alloc(0);
    unlocked.wipe();
    created.keys.wipe();
    expect(kekBytes.every((b) => b === 0)).toBe(true);
    expect(dekBytes.every((b) => b === 0)).toBe(true);
    expect(() => unlocked.keyring.find(1)).toThrow(VaultLockedError);
    expect(() => unlocked.keyring.activeKeyId).toThrow(VaultLockedError);
  });

  it('tells a wrong passphrase apart from a damaged header', async () => {
    const { headerBytes, keys } = await createVaultKeys(sodium, passphrase('right one'), FLOOR);
    keys.wipe();
    await expect(unlockVaultKeys(sodium, headerBytes, passphrase('wrong one'))).rejects.toBeInstanceOf(
      WrongPassphraseError,
    );
    const damaged = flipped(headerBytes, SLOT_OFFSET + 20);
    await expect(unlockVaultKeys(sodium, damaged, passphrase('right one'))).rejects.toMatchObject({
      reason: 'header-damaged',
    });
  });

  it('unlocks with the same passphrase typed in NFD (macOS) or NFC form', async () => {
    const nfd = 'Cafe\u0301 au lait';
    const { headerBytes, keys } = await createVaultKeys(sodium, passphrase(nfd), FLOOR);
    keys.wipe();
    const unlocked = await unlockVaultKeys(sodium, headerBytes, passphrase(nfd.normalize('NFC')));
    unlocked.wipe();
  });

  it('reports every single-byte change without deriving anything, by what it hit', async () => {
    const { headerBytes, keys } = await createVaultKeys(sodium, passphrase('pw'), FLOOR);
    keys.wipe();
    const spy = counting(sodium);
    for (let offset = 0; offset < headerBytes.length; offset++) {
      const damaged = flipped(headerBytes, offset, 0x10);
      const error = await unlockVaultKeys(spy, damaged, passphrase('pw')).catch((e: unknown) => e);
      // The version field too (offsets 8-9): a newer header's checksum holds, a damaged one's does not.
      if (offset < 8) expect(error, `offset ${offset}`).toBeInstanceOf(NotAVaultError);
      else expect(error, `offset ${offset}`).toMatchObject({ reason: 'header-damaged' });
    }
    expect(spy.derivations()).toBe(0);
  });

  it('reads a version it does not know, with a checksum that holds, as a newer format, before deriving', async () => {
    const { headerBytes, keys } = await createVaultKeys(sodium, passphrase('pw'), FLOOR);
    keys.wipe();
    const newer = Buffer.from(headerBytes);
    newer.writeUInt16LE(2, 8);
    sodium.blake2b(32, newer.subarray(0, newer.length - 32)).copy(newer, newer.length - 32);
    const spy = counting(sodium);
    const error = await unlockVaultKeys(spy, newer, passphrase('pw')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsupportedFormatError);
    expect((error as Error).message).toMatch(/version 2.*Update Coffer/u);
    expect(spy.derivations()).toBe(0);
  });

  it('refuses KDF parameters over the ceiling or under the floor before deriving', async () => {
    const { headerBytes, keys } = await createVaultKeys(sodium, passphrase('pw'), FLOOR);
    keys.wipe();
    const spy = counting(sodium);
    const cases: [number, number][] = [
      [SLOT_OFFSET + 8, 2 * 1024 * 1024], // 2 GiB
      [SLOT_OFFSET + 8, 0xffffffff],
      [SLOT_OFFSET + 4, 11],
      [SLOT_OFFSET + 4, 1],
      [SLOT_OFFSET + 8, 32 * 1024],
    ];
    for (const [offset, value] of cases) {
      const edited = Buffer.from(headerBytes);
      edited.writeUInt32LE(value, offset);
      await expect(
        unlockVaultKeys(spy, withChecksum(sodium, edited), passphrase('pw')),
      ).rejects.toBeInstanceOf(KdfLimitError);
    }
    expect(spy.derivations()).toBe(0);
    await expect(
      createVaultKeys(spy, passphrase('pw'), { opslimit: 1, memlimitKiB: 65536 }),
    ).rejects.toBeInstanceOf(KdfLimitError);
    await expect(
      createVaultKeys(spy, passphrase('pw'), { opslimit: 3, memlimitKiB: 4 * 1024 * 1024 }),
    ).rejects.toBeInstanceOf(KdfLimitError);
    expect(spy.derivations()).toBe(0);
  });

  it('refuses slots that are each within limits but together exceed the work budget', async () => {
    const { headerBytes, keys } = await createVaultKeys(sodium, passphrase('a'), FLOOR);
    const twoSlots = await addPassphraseSlot(sodium, keys, headerBytes, passphrase('b'), FLOOR);
    keys.wipe();
    const edited = Buffer.from(twoSlots);
    for (const slot of [0, 1]) {
      edited.writeUInt32LE(9, SLOT_OFFSET + slot * 100 + 4);
      edited.writeUInt32LE(1024 * 1024, SLOT_OFFSET + slot * 100 + 8);
    }
    const spy = counting(sodium);
    await expect(unlockVaultKeys(spy, withChecksum(sodium, edited), passphrase('a'))).rejects.toThrow(
      /together/,
    );
    expect(spy.derivations()).toBe(0);
  });

  it('treats edited KDF parameters within limits as a wrong passphrase (they are authenticated)', async () => {
    const { headerBytes, keys } = await createVaultKeys(sodium, passphrase('pw'), FLOOR);
    keys.wipe();
    const edited = Buffer.from(headerBytes);
    edited.writeUInt32LE(3, SLOT_OFFSET + 4);
    await expect(
      unlockVaultKeys(sodium, withChecksum(sodium, edited), passphrase('pw')),
    ).rejects.toBeInstanceOf(WrongPassphraseError);
  });

  it('detects edits beyond the slots through the header MAC', async () => {
    const { headerBytes, keys } = await createVaultKeys(sodium, passphrase('pw'), FLOOR);
    keys.wipe();
    const edited = flipped(headerBytes, SLOT_OFFSET + 100 + 2); // DEK entry: its key id
    await expect(
      unlockVaultKeys(sodium, withChecksum(sodium, edited), passphrase('pw')),
    ).rejects.toMatchObject({
      reason: 'header-modified',
    });
  });

  it('adds a second passphrase slot that unlocks the same keys, and refuses a tampered header', async () => {
    const { headerBytes, keys } = await createVaultKeys(sodium, passphrase('first'), FLOOR);
    const twoSlots = await addPassphraseSlot(sodium, keys, headerBytes, passphrase('second'), FLOOR);
    expect(parseVaultHeader(sodium, twoSlots).slots).toHaveLength(2);
    for (const pw of ['first', 'second']) {
      const unlocked = await unlockVaultKeys(sodium, twoSlots, passphrase(pw));
      expect(unlocked.keyring.find(1)?.bytes).toEqual(keys.keyring.find(1)?.bytes);
      unlocked.wipe();
    }
    const tampered = flipped(headerBytes, SLOT_OFFSET + 100 + 10);
    await expect(
      addPassphraseSlot(sodium, keys, withChecksum(sodium, tampered), passphrase('third'), FLOOR),
    ).rejects.toBeInstanceOf(IntegrityError);
    keys.wipe();
  });

  it('wipes the new KEK and DEK when deriving the passphrase key fails', async () => {
    const allocated: Buffer[] = [];
    const failing: SodiumBackend = {
      ...sodium,
      secureAlloc: (length) => {
        const buffer = sodium.secureAlloc(length);
        allocated.push(buffer);
        return buffer;
      },
      argon2id: () => Promise.reject(new Error('out of memory')),
    };
    await expect(createVaultKeys(failing, encodePassphrase(sodium, 'pw'), FLOOR)).rejects.toThrow(
      'out of memory',
    );
    expect(allocated).toHaveLength(2);
    for (const key of allocated) expect(key.every((byte) => byte === 0)).toBe(true);
  });

  it('refuses an empty passphrase when creating', async () => {
    await expect(createVaultKeys(sodium, Buffer.alloc(0), FLOOR)).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });
});

describe('vault header across backends', () => {
  it('a vault created with the native backend unlocks with the WebAssembly one', async () => {
    const wasm = backends[1];
    if (!wasm) throw new Error('no wasm backend');
    const created = await createVaultKeys(nativeSodium, Buffer.from('shared'), FLOOR);
    const unlocked = await unlockVaultKeys(wasm, created.headerBytes, Buffer.from('shared'));
    expect(hex(unlocked.keyring.find(1)?.bytes ?? Buffer.alloc(0))).toBe(
      hex(created.keys.keyring.find(1)?.bytes ?? Buffer.of(1)),
    );
    unlocked.wipe();
    created.keys.wipe();
  });
});
