import { randomBytes } from 'node:crypto';
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { BusyError, CancelledError, ReadOnlyVaultError, Vault, type Progress } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { keyIdsOnDisk, otherKeyIdsOnDisk } from '../helpers/key-ids.js';
import { collect, newVault, passphrase, tempDir, track, writeTree } from '../helpers/vault.js';

/** Small files (several packs' worth when added one by one), a large one, nested folders. */
function sampleFiles(): Record<string, Buffer> {
  const files: Record<string, Buffer> = {
    'big.bin': randomBytes(2_500_000),
    'docs/deep/empty.txt': Buffer.alloc(0),
  };
  for (let i = 0; i < 12; i++) files[`docs/note-${i}.txt`] = randomBytes(100 + i * 5000);
  return files;
}

async function expectContents(vault: Vault, files: Record<string, Buffer>): Promise<void> {
  for (const [path, data] of Object.entries(files)) {
    expect((await collect(vault.read(`/${path}`))).equals(data), path).toBe(true);
  }
}

/** A vault under key 1 with the sample files, some added one by one (several packs), one deleted (a gap). */
async function vaultUnderKey1(): Promise<{
  vault: Vault;
  dir: string;
  root: string;
  files: Record<string, Buffer>;
}> {
  const { vault, dir, root } = await newVault();
  const files = sampleFiles();
  await writeTree(join(root, 'src'), { ...files, 'gone.txt': 'deleted before the rotation' });
  await vault.add([join(root, 'src', 'docs'), join(root, 'src', 'big.bin')]);
  await vault.add([join(root, 'src', 'gone.txt')], '/docs');
  await vault.remove(['/docs/gone.txt']);
  return { vault, dir, root, files };
}

function packFiles(dir: string): string[] {
  return readdirSync(join(dir, 'packs')).sort();
}

describe('rotate and re-encrypt', () => {
  it('moves every blob, record, the snapshot, the commitment and the log to the new key, then drops the old key', async () => {
    const { vault, dir, root, files } = await vaultUnderKey1();
    const oldPacks = packFiles(dir);
    // A rotation without re-encryption, then a rename (its record under key 2, its blob still under key 1) and an
    // add under key 2.
    expect(await vault.rotateKey()).toEqual({ keyId: 2, previousKeyId: 1 });
    vault.rename('/docs/note-0.txt', 'renamed.txt');
    const renamed = files['docs/note-0.txt'] ?? Buffer.alloc(0);
    delete files['docs/note-0.txt'];
    files['docs/renamed.txt'] = renamed;
    await writeTree(join(root, 'later'), { 'later.txt': 'added under key 2' });
    await vault.add([join(root, 'later', 'later.txt')]);
    files['later.txt'] = Buffer.from('added under key 2');

    const progress: Progress[] = [];
    const report = await vault.reencrypt({ onProgress: (p) => progress.push(p) });

    expect(report).toMatchObject({
      keyId: 2,
      rotated: false,
      removedKeyIds: [1],
      filesReencrypted: 14, // every file but later.txt
      problems: [],
    });
    expect(report.bytesReencrypted).toBe(
      Object.entries(files)
        .filter(([path]) => path !== 'later.txt')
        .reduce((sum, [, data]) => sum + data.length, 0),
    );
    expect(report.recordsResealed, 'the folders docs and docs/deep').toBe(2);
    expect(report.logEntriesResealed).toBeGreaterThan(0);
    expect(progress.at(-1)).toMatchObject({
      filesDone: 14,
      filesTotal: 14,
      bytesDone: report.bytesReencrypted,
    });
    expect((await vault.info()).keyIds).toEqual([2]);
    expect(new Set(progress.flatMap((p) => (p.current ? [p.current] : [])))).toContain('/big.bin');
    await expectContents(vault, files);
    // No pack of key 1 is left: the gap of the deleted file went with its pack.
    expect(packFiles(dir).filter((name) => oldPacks.includes(name))).toEqual([]);
    const log = vault.activityLog();
    expect(log.problems).toEqual([]);
    expect(log.entries.at(-1)).toMatchObject({
      kind: 'reencrypt',
      outcome: 'done',
      counts: { keyId: 2, files: 14, records: 2, keysRemoved: 1 },
    });
    expect((await vault.verify({ readData: true })).problems).toEqual([]);
    vault.close();

    const onDisk = keyIdsOnDisk(dir);
    expect(new Set([...onDisk.records, ...onDisk.blobs])).toEqual(new Set([2]));
    expect(otherKeyIdsOnDisk(dir)).toEqual({
      headerDeks: 1,
      backupDeks: 1,
      snapshot: 2,
      commitment: 2,
      log: [2],
    });
    const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
    expect(await reopened.unlock(passphrase())).toEqual([]);
    await expectContents(reopened, files);
    expect((await reopened.verify({ readData: true })).problems).toEqual([]);
  });

  it('rotates first when the header holds one key, and so does a run after a finished one', async () => {
    const { vault, files } = await vaultUnderKey1();
    const report = await vault.reencrypt();
    expect(report).toMatchObject({ keyId: 2, rotated: true, removedKeyIds: [1], filesReencrypted: 14 });
    const kinds = vault.activityLog().entries.map((entry) => entry.kind);
    expect(kinds.slice(-2)).toEqual(['rotate', 'reencrypt']);
    // A finished re-encryption leaves one key: a new run starts another rotation, to key 3.
    const again = await vault.reencrypt();
    expect(again).toMatchObject({ keyId: 3, rotated: true, removedKeyIds: [2], filesReencrypted: 14 });
    await expectContents(vault, files);
  });

  it('is cancelled between batches with every file readable, and a second run finishes', async () => {
    const { vault, dir, files } = await vaultUnderKey1();
    const controller = new AbortController();
    let calls = 0;
    await expect(
      vault.reencrypt({
        signal: controller.signal,
        onProgress: (p) => {
          if (p.filesDone > 0 && ++calls === 1) controller.abort();
        },
      }),
    ).rejects.toBeInstanceOf(CancelledError);
    const info = await vault.info();
    expect(info.keyIds, 'both keys stay until the end').toEqual([1, 2]);
    await expectContents(vault, files);
    expect(vault.activityLog().entries.at(-1)).toMatchObject({ kind: 'reencrypt', outcome: 'cancelled' });
    vault.close();
    const partly = keyIdsOnDisk(dir);
    expect(new Set(partly.blobs), 'some blobs moved, some not').toEqual(new Set([1, 2]));

    const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
    await reopened.unlock(passphrase());
    expect((await reopened.verify()).problems).toEqual([]);
    const report = await reopened.reencrypt();
    expect(report).toMatchObject({ keyId: 2, rotated: false, removedKeyIds: [1], problems: [] });
    expect(report.filesReencrypted).toBeLessThan(14);
    await expectContents(reopened, files);
    expect((await reopened.verify({ readData: true })).problems).toEqual([]);
  });

  it('is stopped by a lock as by a cancel, and continued after the next unlock', async () => {
    const { vault, files } = await vaultUnderKey1();
    let locked = false;
    const running = vault.reencrypt({
      onProgress: (p) => {
        if (p.filesDone > 0 && !locked) {
          locked = true;
          vault.lock();
        }
      },
    });
    await expect(running).rejects.toBeInstanceOf(CancelledError);
    await vault.released();
    await vault.unlock(passphrase());
    expect((await vault.info()).keyIds).toEqual([1, 2]);
    await expectContents(vault, files);
    expect(await vault.reencrypt()).toMatchObject({ keyId: 2, rotated: false, removedKeyIds: [1] });
    await expectContents(vault, files);
  });

  it('is refused while an add runs, refuses other changes while it runs, and is refused read-only', async () => {
    const { vault, dir, root, files } = await vaultUnderKey1();
    await writeTree(root, { 'a.bin': Buffer.alloc(3 * 1024 * 1024, 7) });
    const adding = vault.add([join(root, 'a.bin')]);
    await expect(vault.reencrypt()).rejects.toBeInstanceOf(BusyError);
    await adding;
    expect((await vault.info()).keyIds).toEqual([1]);

    const running = vault.reencrypt();
    await expect(vault.reencrypt()).rejects.toBeInstanceOf(BusyError);
    await expect(vault.rotateKey()).rejects.toBeInstanceOf(BusyError);
    // Reads wait for the batch that runs, not for the whole job.
    await expectContents(vault, files);
    await running;
    vault.close();

    const readOnly = track(await Vault.open(dir, { sodium: nativeSodium, readOnly: true }));
    await readOnly.unlock(passphrase());
    await expect(readOnly.reencrypt()).rejects.toBeInstanceOf(ReadOnlyVaultError);
  });

  it('keeps the old key, and says why, when a file cannot be read', async () => {
    const { vault, dir, files } = await vaultUnderKey1();
    vault.close();
    // Damage the large file's blob in its last chunk.
    const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
    const blob = db.prepare('SELECT file_id FROM contents WHERE pack_id IS NULL').pluck().get() as Buffer;
    db.close();
    const hex = blob.toString('hex');
    const path = join(dir, 'blobs', hex.slice(0, 2), hex);
    const bytes = readFileSync(path);
    bytes[bytes.length - 5] = (bytes[bytes.length - 5] ?? 0) ^ 1;
    writeFileSync(path, bytes);

    const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
    await reopened.unlock(passphrase());
    const report = await reopened.reencrypt();
    expect(report.removedKeyIds).toEqual([]);
    expect(report.filesReencrypted).toBe(13);
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toMatchObject({ path: '/big.bin', code: 'INTEGRITY' });
    expect((await reopened.info()).keyIds).toEqual([1, 2]);
    delete files['big.bin'];
    await expectContents(reopened, files);
    expect(reopened.activityLog().entries.at(-1)).toMatchObject({ kind: 'reencrypt', outcome: 'problems' });
  });

  it('lets verify name whatever still uses a removed key (an older index put back)', async () => {
    const { vault, dir } = await vaultUnderKey1();
    vault.close();
    const before = join(tempDir(), 'before');
    cpSync(dir, before, { recursive: true });
    const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
    await reopened.unlock(passphrase());
    await reopened.reencrypt();
    reopened.close();
    // The index and packs from before the re-encryption, beside the header that no longer has key 1.
    for (const name of ['index.sqlite', 'packs', 'blobs']) {
      rmSync(join(dir, name), { recursive: true, force: true });
      cpSync(join(before, name), join(dir, name), { recursive: true });
    }
    const rolledBack = track(await Vault.open(dir, { sodium: nativeSodium }));
    const damaged = await rolledBack.unlock(passphrase());
    expect(damaged.length).toBeGreaterThan(0);
    const report = await rolledBack.verify();
    expect(report.ok).toBe(false);
    expect(report.problems.some((problem) => /key/i.test(problem.message))).toBe(true);
  });
});
