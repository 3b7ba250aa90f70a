/**
 * A vault folder whose files were grown or edited past anything Coffer writes: a header or pack of gigabytes, an
 * index whose stored table definitions or triggers are not Coffer's, a vault whose tmp/ vanished. Each must end in
 * the engine's typed errors or reported problems (what a user is told in words), never a raw Node or SQLite error.
 * The large files are sparse: they take no disk.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { IntegrityError, IoError, Vault } from '../../src/core/index.js';
import { editIndex, editIndexAsWriter } from '../helpers/index-format.js';
import { newVault, openVault, passphrase, unlockedVault, writeTree } from '../helpers/vault.js';

/** Past Node's largest Buffer (2 GiB), so a whole read of it fails. */
const HUGE = 3 * 1024 ** 3;

/** A closed vault holding three small files (one pack) and its folder. */
async function smallVault(): Promise<string> {
  const { vault, dir, root } = await newVault();
  await writeTree(root, {
    'src/a.txt': 'alpha'.repeat(400),
    'src/b.txt': 'beta'.repeat(500),
    'src/c.txt': 'c',
  });
  await vault.add([join(root, 'src')]);
  vault.close();
  return dir;
}

/**
 * One damaged byte in the index's stored definitions: `from` replaced by `to`, of the same length, wherever the
 * file holds it (SQLite may keep an older copy of its schema page in a free page).
 */
function replaceInIndex(dir: string, from: string, to: string): void {
  const path = join(dir, 'index.sqlite');
  const bytes = readFileSync(path);
  let found = 0;
  for (let at = bytes.indexOf(from); at >= 0; at = bytes.indexOf(from, at + 1), found++) bytes.write(to, at);
  if (found === 0) throw new Error(`"${from}" is not in the index`);
  writeFileSync(path, bytes);
}

const listed = (vault: Vault): string[] => vault.listRecursive('/').map((entry) => entry.path);

describe('a header file of gigabytes', () => {
  it('as coffer.header is damage: the backup opens the vault, with the warning', async () => {
    const dir = await smallVault();
    truncateSync(join(dir, 'coffer.header'), HUGE);
    const vault = await openVault(dir);
    expect((await vault.info()).warnings.join(' ')).toMatch(/coffer\.header\) is damaged; its backup/u);
    await vault.unlock(passphrase());
    expect(listed(vault)).toContain('/src/a.txt');
  });

  it('as coffer.header.bak does not stop the unlock', async () => {
    const dir = await smallVault();
    truncateSync(join(dir, 'coffer.header.bak'), HUGE);
    const vault = await unlockedVault(dir);
    expect(listed(vault)).toContain('/src/b.txt');
  });
});

it('a pack grown to gigabytes is reported by verify, whose files still read back', async () => {
  const dir = await smallVault();
  const [pack] = await readdir(join(dir, 'packs'));
  if (pack === undefined) throw new Error('the vault has no pack');
  truncateSync(join(dir, 'packs', pack), HUGE);
  const vault = await unlockedVault(dir);
  const report = await vault.verify({ readData: true });
  expect(report.filesChecked).toBe(3);
  expect(report.problems).toEqual([
    expect.objectContaining({
      path: `packs/${pack}`,
      code: 'INTEGRITY',
      message: expect.stringMatching(/is 3221225472 bytes, far more than any pack Coffer writes/u) as string,
    }),
  ]);
});

it('an unreferenced pack of gigabytes is left unread by repair, and kept by --delete-unreferenced', async () => {
  const dir = await smallVault();
  const [pack] = await readdir(join(dir, 'packs'));
  if (pack === undefined) throw new Error('the vault has no pack');
  const grown = `${'ab'.repeat(16)}.pack`;
  copyFileSync(join(dir, 'packs', pack), join(dir, 'packs', grown));
  truncateSync(join(dir, 'packs', grown), HUGE);
  const vault = await unlockedVault(dir);
  const report = await vault.verify({ repair: true, deleteUnreferenced: true });
  expect(report.deleted).toEqual([]);
  expect(report.recovered).toEqual([]);
  expect(report.unreferenced).toEqual([
    {
      path: `packs/${grown}`,
      size: HUGE,
      note: 'it is larger than any pack Coffer writes, so it was not read',
    },
  ]);
  expect(existsSync(join(dir, 'packs', grown))).toBe(true);
});

describe("an index whose stored definitions are not Coffer's", () => {
  it('a column renamed in a table definition is INTEGRITY malformed at open', async () => {
    const dir = await smallVault();
    replaceInIndex(dir, 'value BLOB NOT NULL', 'valuf BLOB NOT NULL');
    await expect(openVault(dir)).rejects.toMatchObject({
      code: 'INTEGRITY',
      reason: 'malformed',
      message: expect.stringMatching(/index\.sqlite, whose tables are not as Coffer made them/u) as string,
    });
  });

  it("a CHECK Coffer's rows no longer meet makes a new folder INTEGRITY, and the vault is as it was", async () => {
    const dir = await smallVault();
    replaceInIndex(
      dir,
      'id BLOB PRIMARY KEY CHECK (length(id) = 16)',
      'id BLOB PRIMARY KEY CHECK (length(id) = 17)',
    );
    const vault = await unlockedVault(dir);
    const before = listed(vault);
    let error: unknown;
    try {
      vault.mkdir('/New folder');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(IntegrityError);
    expect((error as IntegrityError).reason).toBe('malformed');
    expect((error as Error).message).toMatch(/refused a change \(CHECK constraint failed/u);
    expect(listed(vault)).toEqual(before);
    vault.close();
    expect(listed(await unlockedVault(dir))).toEqual(before);
  });

  it('a recovered row the index refuses stops the repair, and --delete-unreferenced then removes nothing', async () => {
    const dir = await smallVault();
    // Every row gone: the pack is unreferenced, and repair would bring its three files back under /lost+found.
    await editIndexAsWriter(dir, (db) => {
      db.exec('DELETE FROM contents');
    });
    replaceInIndex(
      dir,
      'file_id BLOB NOT NULL UNIQUE CHECK (length(file_id) = 16)',
      'file_id BLOB NOT NULL UNIQUE CHECK (length(file_id) = 17)',
    );
    const packs = await readdir(join(dir, 'packs'));
    const vault = await unlockedVault(dir);
    await expect(vault.verify({ repair: true, deleteUnreferenced: true })).rejects.toMatchObject({
      code: 'INTEGRITY',
    });
    expect(await readdir(join(dir, 'packs'))).toEqual(packs);
  });

  it('a trigger (SQL of the file’s choosing inside Coffer’s writes) is INTEGRITY malformed at open', async () => {
    const dir = await smallVault();
    editIndex(dir, (db) => {
      db.exec(`CREATE TRIGGER forged AFTER INSERT ON meta WHEN NEW.key = 'tree_snapshot' BEGIN
                 DELETE FROM nodes WHERE id = (SELECT node_id FROM contents LIMIT 1);
               END`);
    });
    await expect(openVault(dir)).rejects.toMatchObject({
      code: 'INTEGRITY',
      reason: 'malformed',
      message: expect.stringMatching(/holds triggers or views Coffer never makes/u) as string,
    });
  });
});

it('a compaction that cannot write its new pack (tmp/ gone) fails verify with an IoError, the files kept', async () => {
  const dir = await smallVault();
  const vault = await unlockedVault(dir);
  rmSync(join(dir, 'tmp'), { recursive: true });
  // Leaves the pack less than half used; the delete's own compaction fails quietly (it is a tidy-up).
  await vault.remove(['/src/a.txt', '/src/b.txt']);
  await expect(vault.verify({ readData: true })).rejects.toBeInstanceOf(IoError);
  expect(listed(vault)).toEqual(['/src', '/src/c.txt']);
  // With tmp/ back, the same check compacts the pack and finds everything whole.
  mkdirSync(join(dir, 'tmp'));
  expect(await vault.verify({ readData: true })).toMatchObject({ ok: true, filesChecked: 1 });
  expect(await vault.verify({ readData: true })).toMatchObject({ ok: true, filesChecked: 1 });
});

describe('repair with --delete-unreferenced keeps what it could not bring back', () => {
  it('a blob whose /lost+found name is taken comes back under a numbered name', async () => {
    const dir = await smallVault();
    let fileId = '';
    await editIndexAsWriter(dir, (db) => {
      const row = db.prepare('SELECT hex(file_id) AS id, node_id FROM contents LIMIT 1').get() as {
        id: string;
        node_id: Buffer;
      };
      fileId = row.id.toLowerCase();
      // Its entry gone and all rows with it: the pack is unreferenced, its blob under /lost+found only.
      db.prepare('DELETE FROM nodes WHERE id = ?').run(row.node_id);
      db.exec('DELETE FROM contents');
    });
    const vault = await unlockedVault(dir);
    vault.mkdir('/lost+found');
    vault.mkdir('/mine');
    vault.rename('/mine', `recovered-${fileId}`);
    vault.move([`/recovered-${fileId}`], '/lost+found');
    const report = await vault.verify({ repair: true, deleteUnreferenced: true });
    expect(report.deleted).toEqual([]);
    expect(listed(vault)).toContain(`/lost+found/recovered-${fileId} (2)`);
  });

  it('blobs under a key the header in use lacks are kept, with what to do', async () => {
    const dir = await smallVault();
    const older = ['coffer.header', 'coffer.header.bak', 'index.sqlite'].map(
      (name) => [name, readFileSync(join(dir, name))] as const,
    );
    const { root } = await newVault();
    await writeTree(root, { 'later/small.txt': 'small', 'later/large.bin': Buffer.alloc(1_200_000, 3) });
    const vault = await unlockedVault(dir);
    await vault.rotateKey();
    await vault.add([join(root, 'later')]);
    vault.close();
    // The header and index from before the rotation put back: the new pack and blob file are unreferenced, and
    // only the newer header's key opens them.
    for (const [name, bytes] of older) writeFileSync(join(dir, name), bytes);
    const reopened = await unlockedVault(dir);
    const report = await reopened.verify({ repair: true, deleteUnreferenced: true });
    expect(report.deleted).toEqual([]);
    expect(report.unreferenced.map((file) => file.note)).toEqual([
      expect.stringMatching(/under a key the vault header in use does not hold/u) as string,
      expect.stringMatching(/under a key the vault header in use does not hold/u) as string,
    ]);
    expect(report.unreferenced.map((file) => file.path.split('/')[0]).sort()).toEqual(['blobs', 'packs']);
  });
});
