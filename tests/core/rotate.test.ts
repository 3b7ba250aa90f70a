import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { BusyError, IntegrityError, ReadOnlyVaultError, Vault } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { keyIdsOnDisk } from '../helpers/key-ids.js';
import { collect, newVault, passphrase, track, writeTree } from '../helpers/vault.js';

describe('key rotation without re-encryption', () => {
  it('writes new data under the new key, still reads the old, and survives a reopen', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(root, { 'old.txt': 'written under key 1', 'new.txt': 'written under key 2' });
    await vault.add([join(root, 'old.txt')]);
    const headerBefore = readFileSync(join(dir, 'coffer.header'));

    expect(await vault.rotateKey()).toEqual({ keyId: 2, previousKeyId: 1 });
    // One more wrapped DEK (FORMAT.md 4.1); the slot is untouched.
    const headerAfter = readFileSync(join(dir, 'coffer.header'));
    expect(headerAfter.length).toBe(headerBefore.length + 76);
    expect(headerAfter.subarray(32, 132)).toEqual(headerBefore.subarray(32, 132));
    expect((await vault.info()).keyIds).toEqual([1, 2]);

    await vault.add([join(root, 'new.txt')]);
    expect((await collect(vault.read('/old.txt'))).toString()).toBe('written under key 1');
    const [, rotate, added] = vault.activityLog().entries;
    expect(rotate?.kind).toBe('rotate');
    expect(rotate?.counts).toEqual({ keyId: 2, previousKeyId: 1 });
    expect(added?.keyId).toBe(2);
    vault.close();

    expect(keyIdsOnDisk(dir)).toEqual({ records: [1, 2], blobs: [1, 2] });
    const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
    await reopened.unlock(passphrase());
    expect((await reopened.info()).keyIds).toEqual([1, 2]);
    expect((await collect(reopened.read('/old.txt'))).toString()).toBe('written under key 1');
    expect((await collect(reopened.read('/new.txt'))).toString()).toBe('written under key 2');
    expect((await reopened.verify({ readData: true })).problems).toEqual([]);
    expect(await reopened.rotateKey()).toEqual({ keyId: 3, previousKeyId: 2 });
    expect(reopened.activityLog().problems).toEqual([]);
  });

  it('is refused, changing nothing, when damage names a key id above the header’s or the log cannot be read', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(root, { 'a.txt': 'alpha', 'b.txt': 'beta' });
    await vault.add([join(root, 'a.txt')]);
    // A second entry: the first is then not taken for a torn last one.
    await vault.add([join(root, 'b.txt')]);
    vault.close();
    const header = readFileSync(join(dir, 'coffer.header'));
    const logPath = join(dir, 'activity.log');
    const log = readFileSync(logPath);
    // Bytes 8–11 of the first entry, after the log's 32-byte header, are its key id (FORMAT.md 10.2).
    writeFileSync(logPath, Buffer.from(log).fill(0xff, 32 + 8, 32 + 12));
    const opened = track(await Vault.open(dir, { sodium: nativeSodium }));
    await opened.unlock(passphrase());
    await expect(opened.rotateKey()).rejects.toThrow(
      /the vault's data \(key 4294967295\) names an encryption key the header in use does not hold/u,
    );
    // Longer than a reader reads (FORMAT.md 10.1): which key ids it names cannot be known.
    writeFileSync(logPath, Buffer.concat([log, Buffer.alloc(16_384 * 100)]));
    await expect(opened.rotateKey()).rejects.toBeInstanceOf(IntegrityError);
    expect(readFileSync(join(dir, 'coffer.header'))).toEqual(header);
    expect((await opened.info()).keyIds).toEqual([1]);
  });

  it('is refused while an add runs, and in a read-only vault, changing nothing', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(root, { 'a.bin': Buffer.alloc(3 * 1024 * 1024, 7) });
    const header = readFileSync(join(dir, 'coffer.header'));
    const adding = vault.add([join(root, 'a.bin')]);
    await expect(vault.rotateKey()).rejects.toBeInstanceOf(BusyError);
    await adding;
    expect(readFileSync(join(dir, 'coffer.header'))).toEqual(header);
    vault.close();

    const readOnly = track(await Vault.open(dir, { readOnly: true, sodium: nativeSodium }));
    await readOnly.unlock(passphrase());
    await expect(readOnly.rotateKey()).rejects.toBeInstanceOf(ReadOnlyVaultError);
    expect(readFileSync(join(dir, 'coffer.header'))).toEqual(header);
  });
});
