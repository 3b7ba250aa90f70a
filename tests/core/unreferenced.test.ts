/**
 * Issue 10: packs and blob files no index row names are kept and reported, never deleted for that; only what a
 * crashed operation provably wrote (its intent) is removed; `verify` can bring the rest back under /lost+found or,
 * when asked, delete it; a pack with bytes appended is reported.
 */
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { AlreadyExistsError, ReadOnlyVaultError, Vault } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { editIndexAsWriter } from '../helpers/index-format.js';
import { rewriteRecord, twoFilesOfOneSize } from '../helpers/records.js';
import { collect, leftBehind, newVault, passphrase, track, writeTree } from '../helpers/vault.js';

async function reopen(dir: string, readOnly = false): Promise<Vault> {
  const vault = track(await Vault.open(dir, { sodium: nativeSodium, readOnly }));
  await vault.unlock(passphrase());
  return vault;
}

/** The packs and blob files of a vault, relative to its folder. */
function storedFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .filter((path) => path.startsWith('packs/') || path.startsWith('blobs/'))
    .sort();
}

/**
 * A vault V and W, a copy of it taken before more files (small ones in a pack, a large one in a blob file) were
 * added to V; then V's new packs and blob files, but not its index, are copied into W: what a sync service
 * delivering the data before the index leaves.
 */
async function deliveredBeforeIndex(): Promise<{
  v: string;
  w: string;
  root: string;
  newFiles: Record<string, Buffer>;
  arrived: string[];
}> {
  const { vault, dir: v, root } = await newVault();
  await writeTree(join(root, 'first'), { 'a.txt': 'first a', 'b.bin': randomBytes(1_300_000) });
  await vault.add([join(root, 'first')]);
  vault.close();
  const w = join(root, 'w');
  cpSync(v, w, { recursive: true });
  const newFiles: Record<string, Buffer> = { 'one.txt': randomBytes(500), 'two.txt': randomBytes(7000) };
  newFiles['large.bin'] = randomBytes(1_100_000);
  await writeTree(join(root, 'second'), newFiles);
  const again = await reopen(v);
  await again.add([join(root, 'second')]);
  again.close();
  const arrived = storedFiles(v).filter((path) => !storedFiles(w).includes(path));
  for (const path of arrived) {
    mkdirSync(join(w, path, '..'), { recursive: true });
    cpSync(join(v, path), join(w, path));
  }
  return { v, w, root, newFiles, arrived };
}

/** A closed vault holding /in/small.txt (in a pack) and /in/big.bin (in a blob file), and their bytes. */
async function smallAndLargeClosed(): Promise<{ dir: string; files: Record<string, Buffer> }> {
  const { vault, dir, root } = await newVault();
  const files = { 'small.txt': randomBytes(3000), 'big.bin': randomBytes(1_200_000) };
  await writeTree(join(root, 'in'), files);
  await vault.add([join(root, 'in')]);
  vault.close();
  return { dir, files };
}

describe('packs and blob files that arrive before the index that names them', () => {
  it('survive open, listing, add and verify, which lists them; the index that names them finds them all', async () => {
    const { v, w, root, newFiles, arrived } = await deliveredBeforeIndex();
    expect(arrived.filter((path) => path.startsWith('packs/'))).toHaveLength(1);
    expect(arrived.filter((path) => path.startsWith('blobs/'))).toHaveLength(1);

    const vault = await reopen(w);
    expect(vault.listRecursive('/').map((entry) => entry.path)).toEqual([
      '/first',
      '/first/a.txt',
      '/first/b.bin',
    ]);
    await writeTree(join(root, 'third'), { 'c.txt': 'third c', 'd.bin': randomBytes(1_200_000) });
    expect((await vault.add([join(root, 'third')])).problems).toEqual([]);
    const report = await vault.verify({ readData: true });
    expect(report.ok).toBe(true);
    expect(report.unreferenced).toEqual(
      arrived.map((path) => ({ path, size: statSync(join(w, path)).size })),
    );
    vault.close();
    for (const path of arrived) expect(storedFiles(w)).toContain(path);

    // The index arrives (V's, naming the second add): everything it names is there.
    cpSync(join(v, 'index.sqlite'), join(w, 'index.sqlite'));
    const synced = await reopen(w);
    expect(await synced.verify({ readData: true })).toMatchObject({ ok: true, problems: [] });
    for (const [name, bytes] of Object.entries(newFiles))
      expect((await collect(synced.read(`/second/${name}`))).equals(bytes)).toBe(true);
  });

  it('verify --repair brings them back under /lost+found with identical bytes, and they are referenced then', async () => {
    const { w, newFiles, arrived } = await deliveredBeforeIndex();
    const vault = await reopen(w);
    const report = await vault.verify({ repair: true });
    expect(report).toMatchObject({ ok: true, unreferenced: [], deleted: [] });
    expect(report.recovered.map((entry) => entry.path).sort()).toEqual(
      vault
        .list('/lost+found')
        .map((entry) => entry.path)
        .sort(),
    );
    expect(report.recovered).toHaveLength(Object.keys(newFiles).length);
    const recovered = await Promise.all(
      report.recovered.map(async (entry) => {
        expect(entry.name).toMatch(/^recovered-[0-9a-f]{32}$/u);
        return (await collect(vault.read(entry.path))).toString('hex');
      }),
    );
    expect(recovered.sort()).toEqual(
      Object.values(newFiles)
        .map((bytes) => bytes.toString('hex'))
        .sort(),
    );
    vault.close();
    const again = await reopen(w);
    expect(await again.verify({ readData: true })).toMatchObject({ ok: true, unreferenced: [] });
    for (const path of arrived) expect(storedFiles(w)).toContain(path);
  });

  it('verify --repair gives entries whose contents rows were lost their contents back, not copies in /lost+found', async () => {
    const { dir, files } = await smallAndLargeClosed();
    await editIndexAsWriter(dir, (db) => {
      db.prepare('DELETE FROM contents').run();
    });
    const repaired = await reopen(dir);
    const report = await repaired.verify({ repair: true });
    expect(report.recovered.map((entry) => entry.path).sort()).toEqual(['/in/big.bin', '/in/small.txt']);
    expect(repaired.list('/').map((entry) => entry.name)).toEqual(['in']);
    for (const [name, bytes] of Object.entries(files))
      expect((await collect(repaired.read(`/in/${name}`))).equals(bytes), name).toBe(true);
    expect(await repaired.verify({ readData: true })).toMatchObject({
      ok: true,
      problems: [],
      unreferenced: [],
    });
  });

  it('verify --repair puts a found blob in /lost+found when the entry naming it has another row, or another size', async () => {
    const { dir, files } = await smallAndLargeClosed();
    // big.bin's row now names a file id no blob has; small.txt's record a size its blob does not hold, and its row
    // is gone.
    await rewriteRecord(
      dir,
      (record) => record.n === 'small.txt',
      (record) => ({ ...record, s: (record.s as number) + 1 }),
    );
    await editIndexAsWriter(dir, (db) => {
      db.prepare('UPDATE contents SET file_id = ? WHERE pack_id IS NULL').run(randomBytes(16));
      db.prepare('DELETE FROM contents WHERE pack_id IS NOT NULL').run();
    });
    const repaired = await reopen(dir);
    const report = await repaired.verify({ repair: true });
    expect(report.recovered.map((entry) => entry.path.replace(/-[0-9a-f]{32}$/u, ''))).toEqual([
      '/lost+found/recovered',
      '/lost+found/recovered',
    ]);
    const recovered = await Promise.all(
      report.recovered.map(async (entry) => collect(repaired.read(entry.path))),
    );
    expect(recovered.map((bytes) => bytes.length).sort((a, b) => a - b)).toEqual([3000, 1_200_000]);
    for (const bytes of recovered)
      expect(Object.values(files).some((original) => original.equals(bytes))).toBe(true);
  });

  it('verify --repair gives a found blob no entry when two entries name it', async () => {
    const { dir, a } = await twoFilesOfOneSize();
    await rewriteRecord(
      dir,
      (record) => record.n === 'b.txt',
      (record) => ({ ...record, c: a.c }),
    );
    await editIndexAsWriter(dir, (db) => {
      db.prepare('DELETE FROM contents').run();
    });
    const repaired = await reopen(dir);
    const report = await repaired.verify({ repair: true });
    expect(report.recovered.map((entry) => entry.path).sort()).toEqual(
      repaired
        .list('/lost+found')
        .map((entry) => entry.path)
        .sort(),
    );
    expect(report.recovered).toHaveLength(2);
  });

  it('repair keeps what is not a blob of this vault, and only --delete-unreferenced deletes it', async () => {
    const { vault, dir } = await newVault();
    const foreign = `packs/${'ab'.repeat(16)}.pack`;
    writeFileSync(join(dir, foreign), randomBytes(5000));
    const repaired = await vault.verify({ repair: true });
    expect(repaired.recovered).toEqual([]);
    expect(repaired.unreferenced).toEqual([
      { path: foreign, size: 5000, note: 'it holds no complete blob of this vault' },
    ]);
    expect(storedFiles(dir)).toContain(foreign);
    const deleted = await vault.verify({ deleteUnreferenced: true });
    expect(deleted).toMatchObject({ ok: true, unreferenced: [], deleted: [{ path: foreign, size: 5000 }] });
    expect(storedFiles(dir)).not.toContain(foreign);
  });

  it('repair with delete keeps a copy whose file ids rows already name: their own data may be what is missing', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'src'), { 'a.txt': 'alpha', 'b.txt': 'beta' });
    await vault.add([join(root, 'src')]);
    vault.close();
    const [pack] = storedFiles(dir).filter((path) => path.startsWith('packs/'));
    if (pack === undefined) throw new Error('no pack was written');
    // The copy a newer index compacted into, with the pack the (older) index names gone.
    const copy = `packs/${'cd'.repeat(16)}.pack`;
    cpSync(join(dir, pack), join(dir, copy));
    rmSync(join(dir, pack));
    const reopened = await reopen(dir);
    const report = await reopened.verify({ repair: true, deleteUnreferenced: true });
    expect(report.deleted).toEqual([]);
    expect(report.unreferenced.map((file) => file.path)).toEqual([copy]);
    expect(storedFiles(dir)).toContain(copy);
  });

  it('repair with delete stops, deleting nothing, when recovered files cannot be put in /lost+found', async () => {
    const { w, root, arrived } = await deliveredBeforeIndex();
    await writeTree(join(root, 'third'), { 'lost+found': 'a file of that name' });
    const vault = await reopen(w);
    await vault.add([join(root, 'third', 'lost+found')]);
    await expect(vault.verify({ repair: true, deleteUnreferenced: true })).rejects.toBeInstanceOf(
      AlreadyExistsError,
    );
    for (const path of arrived) expect(storedFiles(w)).toContain(path);
  });

  it('repair and delete are refused on a read-only vault, and nothing is removed there', async () => {
    const { vault, dir } = await newVault();
    vault.close();
    const foreign = `blobs/ab/${'ab'.repeat(16)}`;
    mkdirSync(join(dir, 'blobs', 'ab'));
    writeFileSync(join(dir, foreign), 'x');
    const readOnly = await reopen(dir, true);
    await expect(readOnly.verify({ repair: true })).rejects.toBeInstanceOf(ReadOnlyVaultError);
    await expect(readOnly.verify({ deleteUnreferenced: true })).rejects.toBeInstanceOf(ReadOnlyVaultError);
    expect((await readOnly.verify()).unreferenced).toEqual([{ path: foreign, size: 1 }]);
    expect(storedFiles(dir)).toContain(foreign);
  });
});

describe('recovery after a crash removes exactly what the crashed operation intended', () => {
  it('a pack and a blob file written under an intent and never committed are removed at open; nothing else', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'src'), { 'a.txt': 'alpha', 'b.bin': randomBytes(1_200_000) });
    await vault.add([join(root, 'src')]);
    vault.close();
    const [named] = storedFiles(dir).filter((path) => path.startsWith('packs/'));
    const packId = randomBytes(16);
    const blobId = randomBytes(16);
    const crashed = [
      `packs/${packId.toString('hex')}.pack`,
      `blobs/${blobId.toString('hex').slice(0, 2)}/${blobId.toString('hex')}`,
    ];
    // What a kill after the intent's commit and the file's rename, before the rows' commit, leaves.
    const db = new Database(join(dir, 'index.sqlite'));
    const insert = db.prepare('INSERT INTO intents (kind, id) VALUES (?, ?)');
    insert.run('pack', packId);
    insert.run('blob', blobId);
    // An intent whose file a committed row names (a kill between the commit and clearing it) keeps its file.
    insert.run('pack', Buffer.from((named ?? '').slice(6, 38), 'hex'));
    db.close();
    for (const path of crashed) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), randomBytes(300));
    }
    writeFileSync(join(dir, 'tmp', `${packId.toString('hex')}.tmp`), 'half a pack');
    const unrelated = `packs/${'cd'.repeat(16)}.pack`;
    writeFileSync(join(dir, unrelated), 'no intent names this');
    const before = storedFiles(dir);

    track(await Vault.open(dir, { sodium: nativeSodium })).close();
    expect(storedFiles(dir)).toEqual(before.filter((path) => !crashed.includes(path)));
    expect(leftBehind(dir)).toEqual({ files: [unrelated], intents: 0 });
    const reopened = await reopen(dir);
    expect(await reopened.verify({ readData: true })).toMatchObject({
      ok: true,
      unreferenced: [{ path: unrelated, size: 20 }],
    });
  });

  it('a delete removes the blob files and emptied packs it stopped naming, and only those', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'src'), { 'a.txt': 'alpha', 'b.bin': randomBytes(1_200_000) });
    await writeTree(join(root, 'keep'), { 'c.txt': 'gamma' });
    await vault.add([join(root, 'src')]);
    const before = storedFiles(dir);
    await vault.add([join(root, 'keep')]);
    const kept = storedFiles(dir).filter((path) => !before.includes(path));
    const unrelated = `packs/${'cd'.repeat(16)}.pack`;
    writeFileSync(join(dir, unrelated), 'no intent names this');
    await vault.remove(['/src']);
    expect(storedFiles(dir)).toEqual([...kept, unrelated].sort());
    vault.close();
    expect(leftBehind(dir)).toEqual({ files: [unrelated], intents: 0 });
  });
});

describe('pack shape', () => {
  it('bytes appended after the last blob of a pack are reported; a deleted last blob is not', async () => {
    const { vault, dir, root } = await newVault();
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < 6; i++) files[`f${i}.bin`] = randomBytes(3000 + i);
    await writeTree(join(root, 'src'), files);
    await vault.add([join(root, 'src')]);
    const [pack = ''] = storedFiles(dir).filter((path) => path.startsWith('packs/'));
    // The last blob's file deleted: its bytes stay at the end of the pack, a complete blob of this vault.
    await vault.remove(['/src/f5.bin']);
    expect(storedFiles(dir)).toContain(pack);
    expect(await vault.verify()).toMatchObject({ ok: true, problems: [] });

    appendFileSync(join(dir, pack), randomBytes(40));
    const report = await vault.verify();
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([
      expect.objectContaining({
        path: pack,
        code: 'INTEGRITY',
        message: expect.stringMatching(
          /not as Coffer wrote it: the \d+ bytes at its end that no entry names are not a sequence of complete blobs/u,
        ) as unknown,
      }),
    ]);
    // The files in it are still all there and whole.
    for (let i = 0; i < 5; i++)
      expect(
        (await collect(vault.read(`/src/f${i}.bin`))).equals(files[`f${i}.bin`] ?? Buffer.alloc(0)),
      ).toBe(true);
  });

  it('a copy of a blob appended to its pack is a complete blob of this vault, not damage', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'src'), { 'a.txt': 'alpha', 'b.txt': 'beta' });
    await vault.add([join(root, 'src')]);
    const [pack = ''] = storedFiles(dir).filter((path) => path.startsWith('packs/'));
    const bytes = readFileSync(join(dir, pack));
    appendFileSync(join(dir, pack), bytes);
    expect(await vault.verify()).toMatchObject({ ok: true, problems: [] });
  });
});
