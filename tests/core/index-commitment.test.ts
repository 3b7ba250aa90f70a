import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { Vault, type Problem } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { contentsSums, editIndex } from '../helpers/index-format.js';
import { newVault, passphrase, track, writeTree } from '../helpers/vault.js';

/**
 * The attacks of issue 13's first two points, each by someone who can write to the vault folder but does not know
 * the passphrase. Format 1.0 let every one of them through unlock and `verify`; format 1.1's record versions and
 * index commitment (FORMAT.md sections 7 and 8.7) catch them.
 */

function generationOf(db: Database.Database): bigint {
  const value = db.prepare("SELECT value FROM meta WHERE key = 'generation'").pluck().get() as Buffer;
  return value.readBigUInt64LE(0);
}

function setGeneration(db: Database.Database, generation: bigint): void {
  const value = Buffer.alloc(8);
  value.writeBigUInt64LE(generation);
  db.prepare("UPDATE meta SET value = ? WHERE key = 'generation'").run(value);
}

interface StoredNode {
  id: Buffer;
  record: Buffer;
  version: number;
}

function nodeRows(dir: string): StoredNode[] {
  const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT id, record, version FROM nodes').all() as StoredNode[];
  } finally {
    db.close();
  }
}

/** Puts back, with its older version, every sealed record that changed since `before`: a replay. */
function putBackChangedRows(db: Database.Database, before: readonly StoredNode[]): void {
  const current = db.prepare('SELECT record FROM nodes WHERE id = ?').pluck();
  const put = db.prepare('UPDATE nodes SET record = ?, version = ? WHERE id = ?');
  let replayed = 0;
  for (const row of before) {
    const now = current.get(row.id) as Buffer | undefined;
    if (now && !now.equals(row.record)) {
      put.run(row.record, row.version, row.id);
      replayed++;
    }
  }
  if (replayed !== 1) throw new Error(`expected one changed row, found ${replayed}`);
}

/** Renames one file in a closed vault; returns the node rows as they were before. */
async function renameOneFile(dir: string): Promise<StoredNode[]> {
  const before = nodeRows(dir);
  const { vault } = await reopen(dir);
  const [entry] = vault.listRecursive('/').filter((e) => e.type === 'file');
  vault.rename(entry?.path ?? '', 'renamed.txt');
  vault.close();
  return before;
}

async function reopen(dir: string): Promise<{ vault: Vault; damaged: readonly Problem[] }> {
  const vault = track(await Vault.open(dir, { sodium: nativeSodium }));
  return { vault, damaged: await vault.unlock(passphrase()) };
}

/** A closed vault holding two small files in one pack, and a folder. */
async function twoFiles(): Promise<string> {
  const { vault, dir, root } = await newVault();
  await writeTree(join(root, 'in'), { 'a.txt': 'contents of a', 'b.txt': 'contents of b, longer' });
  await vault.add([join(root, 'in', 'a.txt'), join(root, 'in', 'b.txt')]);
  vault.mkdir('/folder');
  vault.close();
  return dir;
}

/** Gives each of the two files' contents rows the other's place in their pack. */
function swapPackPlaces(db: Database.Database): void {
  const rows = db.prepare('SELECT file_id, pack_offset, pack_length FROM contents').all() as {
    file_id: Buffer;
    pack_offset: number;
    pack_length: number;
  }[];
  const [first, second] = rows;
  if (!first || !second) throw new Error('two rows expected');
  const place = db.prepare('UPDATE contents SET pack_offset = ?, pack_length = ? WHERE file_id = ?');
  place.run(second.pack_offset, second.pack_length, first.file_id);
  place.run(first.pack_offset, first.pack_length, second.file_id);
}

function contentsSumOf(dir: string): Buffer | undefined {
  const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
  try {
    return db.prepare("SELECT value FROM meta WHERE key = 'contents_sum'").pluck().get() as
      Buffer | undefined;
  } finally {
    db.close();
  }
}

const damageOfIndex = expect.objectContaining({ path: '(index)', code: 'INTEGRITY' }) as unknown;

describe('index commitment: attacks on the index rows', () => {
  it('an older record put back with the generation bumped is reported at unlock and by verify', async () => {
    const dir = await twoFiles();
    const before = await renameOneFile(dir);
    editIndex(dir, (db) => {
      putBackChangedRows(db, before);
      // So that the snapshot, which still shows the rename, is taken for out of date and the rows are read.
      setGeneration(db, generationOf(db) + 1n);
    });

    const { vault: replayed, damaged } = await reopen(dir);
    expect(damaged).toEqual([damageOfIndex]);
    expect((await replayed.verify()).problems).toEqual(expect.arrayContaining([damageOfIndex]));
  });

  it('swapped contents.node_id values are reported by verify, naming both files', async () => {
    const dir = await twoFiles();
    editIndex(dir, (db) => {
      const rows = db.prepare('SELECT file_id, node_id FROM contents').all() as {
        file_id: Buffer;
        node_id: Buffer;
      }[];
      const [first, second] = rows;
      if (!first || !second) throw new Error('two rows expected');
      db.pragma('foreign_keys = OFF');
      const move = db.prepare('UPDATE contents SET node_id = ? WHERE file_id = ?');
      db.transaction(() => {
        move.run(Buffer.alloc(16), first.file_id);
        move.run(first.node_id, second.file_id);
        move.run(second.node_id, first.file_id);
      })();
    });

    const { vault } = await reopen(dir);
    const report = await vault.verify({ readData: true });
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual(
      expect.arrayContaining([
        damageOfIndex,
        expect.objectContaining({
          path: '/a.txt',
          message: expect.stringMatching(/names another file/) as unknown,
        }),
        expect.objectContaining({
          path: '/b.txt',
          message: expect.stringMatching(/names another file/) as unknown,
        }),
      ]),
    );
  });

  it("swapped pack offsets are not used by an unlock from the rows: each file read fails as another file's, and verify reports the index", async () => {
    const dir = await twoFiles();
    editIndex(dir, (db) => {
      swapPackPlaces(db);
      db.exec("DELETE FROM meta WHERE key = 'tree_snapshot'");
    });

    // The unlock checks the contents rows through meta.contents_sum (FORMAT.md 8.7), as one with a snapshot does.
    const { vault, damaged } = await reopen(dir);
    expect(damaged).toEqual([]);
    const out = join(dir, '..', 'restored');
    const restored = await vault.restore(['/a.txt', '/b.txt'], out);
    expect(restored.filesRestored).toBe(0);
    expect(restored.problems).toEqual([
      expect.objectContaining({
        path: '/a.txt',
        message: expect.stringMatching(/different file/) as unknown,
      }),
      expect.objectContaining({
        path: '/b.txt',
        message: expect.stringMatching(/different file/) as unknown,
      }),
    ]);
    expect((await vault.verify()).problems).toEqual(expect.arrayContaining([damageOfIndex]));
  });

  it('without meta.contents_sum (an index written before it), an unlock from the rows adds up the contents rows', async () => {
    const dir = await twoFiles();
    editIndex(dir, (db) => {
      swapPackPlaces(db);
      db.exec("DELETE FROM meta WHERE key IN ('tree_snapshot', 'contents_sum')");
    });

    const { vault, damaged } = await reopen(dir);
    expect(damaged).toEqual([damageOfIndex]);
    expect((await vault.verify({ repair: true })).problems).toEqual(expect.arrayContaining([damageOfIndex]));
    vault.close();
    // The repair stored the sum anew from the rows, and with it the contents rows' part.
    expect(contentsSumOf(dir)).toHaveLength(76);
    const { vault: repaired, damaged: after } = await reopen(dir);
    expect(after).toEqual([]);
    expect((await repaired.verify()).problems).toEqual(
      expect.not.arrayContaining([
        expect.objectContaining({ message: expect.stringMatching(/contents_sum/) as unknown }),
      ]),
    );
  });

  it('an index without meta.contents_sum gets it at its first writable unlock from the rows that finds them right', async () => {
    const dir = await twoFiles();
    editIndex(dir, (db) => {
      db.exec("DELETE FROM meta WHERE key IN ('tree_snapshot', 'contents_sum')");
    });
    const { vault, damaged } = await reopen(dir);
    expect(damaged).toEqual([]);
    vault.close();
    const { stored, opened, rows } = await contentsSums(dir);
    expect(stored).toHaveLength(76);
    expect(opened).toEqual(rows);
  });

  it('an edited meta.contents_sum is reported at an unlock from the rows and by verify, and stored anew by --repair', async () => {
    const dir = await twoFiles();
    editIndex(dir, (db) => {
      const sealed = Buffer.from(
        db.prepare("SELECT value FROM meta WHERE key = 'contents_sum'").pluck().get() as Buffer,
      );
      sealed[40] = (sealed[40] ?? 0) ^ 1; // in the ciphertext, past the key id and the nonce
      db.prepare("UPDATE meta SET value = ? WHERE key = 'contents_sum'").run(sealed);
      db.exec("DELETE FROM meta WHERE key = 'tree_snapshot'");
    });

    const sumDamage = expect.objectContaining({
      path: '(index)',
      code: 'INTEGRITY',
      message: expect.stringMatching(/meta\.contents_sum.*failed authentication/) as unknown,
    }) as unknown;
    // The rows themselves (added up instead) match the sealed sum: only the stored part of it is reported.
    const { vault, damaged } = await reopen(dir);
    expect(damaged).toEqual([sumDamage]);
    expect((await vault.verify({ repair: true })).problems).toEqual([sumDamage]);
    expect(await vault.verify({ readData: true })).toMatchObject({ ok: true, problems: [] });
  });

  it('meta.contents_sum is sealed, changes with every write of contents rows, and opens to their sum', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'in'), { 'a.txt': 'a', 'c.txt': 'c' });
    await vault.add([join(root, 'in', 'a.txt')]);
    vault.close();
    const first = await contentsSums(dir);
    const { vault: renaming } = await reopen(dir);
    renaming.rename('/a.txt', 'b.txt'); // changes a nodes row, no contents row
    renaming.close();
    expect((await contentsSums(dir)).stored).toEqual(first.stored);
    const { vault: adding } = await reopen(dir);
    await adding.add([join(root, 'in', 'c.txt')]);
    adding.close();

    const second = await contentsSums(dir);
    expect(second.stored).not.toEqual(first.stored);
    for (const { stored, opened, rows } of [first, second]) {
      expect(opened).toEqual(rows);
      expect(stored?.includes(rows)).toBe(false); // only ever stored sealed: an h must stay unknown
    }
  });

  it('a replayed row behind a current snapshot is shown as the snapshot has it, and found by verify', async () => {
    const dir = await twoFiles();
    const before = await renameOneFile(dir);
    const { vault: fresh } = await reopen(dir);
    fresh.close(); // stores a snapshot at the current generation
    editIndex(dir, (db) => {
      putBackChangedRows(db, before);
    });

    // Unlock reads the snapshot, not the rows: what it shows is the authentic tree (FORMAT.md 8.7).
    const { vault: replayed, damaged } = await reopen(dir);
    expect(damaged).toEqual([]);
    expect(replayed.listRecursive('/').map((e) => e.name)).toContain('renamed.txt');
    expect((await replayed.verify()).problems).toEqual(expect.arrayContaining([damageOfIndex]));
  });

  it('a replayed row with the snapshot removed is reported at unlock and by verify', async () => {
    const dir = await twoFiles();
    const before = await renameOneFile(dir);
    editIndex(dir, (db) => {
      putBackChangedRows(db, before);
      db.exec("DELETE FROM meta WHERE key = 'tree_snapshot'");
    });

    const { vault: replayed, damaged } = await reopen(dir);
    expect(damaged).toEqual([damageOfIndex]);
    const report = await replayed.verify();
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([damageOfIndex]);
  });

  it('a healthy vault stays consistent through every kind of write, and verify --repair accepts an edited index', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'in'), { 'd/one.txt': '1', 'd/two.txt': '22', 'three.txt': '333' });
    await vault.add([join(root, 'in', 'd'), join(root, 'in', 'three.txt')]);
    vault.mkdir('/x/y');
    vault.rename('/three.txt', 'drei.txt');
    vault.move(['/d/one.txt'], '/x/y');
    await vault.remove(['/d/two.txt']);
    expect(await vault.verify({ readData: true })).toMatchObject({ ok: true, problems: [] });
    vault.close();
    // Kept through every write above, or verify would have reported it.
    expect(contentsSumOf(dir)).toHaveLength(76);
    editIndex(dir, (db) => {
      db.exec("DELETE FROM meta WHERE key = 'tree_snapshot'");
    });
    const { vault: again, damaged } = await reopen(dir);
    expect(damaged).toEqual([]);
    expect(again.listRecursive('/').map((e) => e.path)).toEqual([
      '/d',
      '/x',
      '/x/y',
      '/x/y/one.txt',
      '/drei.txt',
    ]);
    again.close();

    editIndex(dir, (db) => {
      // Its contents row goes with it (ON DELETE CASCADE).
      db.prepare('DELETE FROM nodes WHERE id IN (SELECT node_id FROM contents LIMIT 1)').run();
    });
    const { vault: edited, damaged: found } = await reopen(dir);
    expect(found).toEqual([damageOfIndex]);
    // The whole and, named apart, the contents rows' part that meta.contents_sum keeps.
    expect((await edited.verify({ repair: true })).problems).toEqual([
      expect.objectContaining({
        path: '(index)',
        message: expect.stringMatching(/meta\.contents_sum/) as unknown,
      }),
      expect.objectContaining({
        path: '(index)',
        message: expect.stringMatching(/rows do not match/) as unknown,
      }),
    ]);
    edited.rename('/x', 'z'); // writes work again after the repair
    expect(await edited.verify()).toMatchObject({ ok: true, problems: [] });
  });
});
