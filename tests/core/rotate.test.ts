import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { BusyError, ReadOnlyVaultError, Vault } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { collect, newVault, passphrase, track, writeTree } from '../helpers/vault.js';

/** Offset of the key id in a blob header (FORMAT.md 5.1). */
const BLOB_KEY_ID_OFFSET = 16;

/** Straight from a closed vault's index: each file's record key id and its blob's key id, by content file id. */
function keyIdsOnDisk(dir: string): { records: number[]; blobs: number[] } {
  const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
  try {
    const records = db.prepare('SELECT key_id FROM nodes ORDER BY key_id').pluck().all() as number[];
    const rows = db.prepare('SELECT file_id, pack_id, pack_offset FROM contents').all() as {
      file_id: Buffer;
      pack_id: Buffer | null;
      pack_offset: number | null;
    }[];
    const blobs = rows
      .map((row) => {
        const hex = row.file_id.toString('hex');
        const bytes =
          row.pack_id === null
            ? readFileSync(join(dir, 'blobs', hex.slice(0, 2), hex))
            : readFileSync(join(dir, 'packs', `${row.pack_id.toString('hex')}.pack`)).subarray(
                row.pack_offset ?? 0,
              );
        return bytes.readUInt32LE(BLOB_KEY_ID_OFFSET);
      })
      .sort();
    return { records, blobs };
  } finally {
    db.close();
  }
}

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
