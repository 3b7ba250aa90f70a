/**
 * "A modified vault never makes Coffer touch a file outside its folder" (FORMAT.md section 8.1): ids read from the
 * index build no path unless they are 16-byte blobs, and no symbolic link inside the vault folder is followed,
 * whether it was there at open or arrived later (as a sync service may deliver one).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { cp, lstat, mkdir, readFile, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { editIndexAsWriter } from '../helpers/index-format.js';
import { IntegrityError } from '../../src/core/index.js';
import { collect, newVault, openVault, passphrase, unlockedVault, writeTree } from '../helpers/vault.js';

const KiB = 1024;

/** The error a promise fails with. */
async function failure(action: () => Promise<unknown>): Promise<unknown> {
  try {
    await action();
  } catch (error) {
    return error;
  }
  throw new Error('expected the operation to fail, but it succeeded');
}

/** A folder outside the vault holding files named as Coffer names blobs, packs and temp files. */
/** `avoidShards`: the blob's name starts with none of these (a link named like its shard must not meet one). */
async function victimFolder(
  root: string,
  avoidShards: ReadonlySet<string> = new Set(),
): Promise<{ dir: string; files: Record<string, Buffer> }> {
  const dir = join(root, 'victim');
  let blob = randomBytes(16).toString('hex');
  while (avoidShards.has(blob.slice(0, 2))) blob = randomBytes(16).toString('hex');
  const files: Record<string, Buffer> = {
    [blob]: randomBytes(3000),
    [`${randomBytes(16).toString('hex')}.pack`]: randomBytes(3000),
    [`${randomBytes(16).toString('hex')}.tmp`]: randomBytes(100),
    'keep.txt': Buffer.from('not the vault’s'),
  };
  await writeTree(dir, files);
  return { dir, files };
}

async function expectIntact(victim: { dir: string; files: Record<string, Buffer> }): Promise<void> {
  expect(readdirSync(victim.dir).sort()).toEqual(Object.keys(victim.files).sort());
  for (const [name, bytes] of Object.entries(victim.files))
    expect((await readFile(join(victim.dir, name))).equals(bytes)).toBe(true);
}

/** A vault with a small file (in a pack), a second one in its own pack, and a large one (a blob file). */
async function vaultWithFiles(): Promise<{ dir: string; root: string; big: Buffer }> {
  const { vault, dir, root } = await newVault();
  const big = randomBytes(1536 * KiB);
  await writeTree(join(root, 'src'), { 'a.txt': 'small file a', 'big.bin': big });
  await writeTree(join(root, 'src2'), { 'b.txt': 'small file b' });
  await vault.add([join(root, 'src', 'a.txt'), join(root, 'src', 'big.bin')], '/');
  await vault.add([join(root, 'src2', 'b.txt')], '/');
  vault.close();
  return { dir, root, big };
}

function packsOf(dir: string): string[] {
  return readdirSync(join(dir, 'packs')).map((name) => join(dir, 'packs', name));
}

describe('ids read from the index', () => {
  it('a 16-character TEXT pack id ("../../victim/abc") is damage to that entry: nothing outside is read, copied or deleted', async () => {
    const { dir, root, big } = await vaultWithFiles();
    // Where the old code built that pack's path: packs/../../victim/abc.pack.
    const victimPath = join(root, 'victim', 'abc.pack');
    const victimBytes = randomBytes(64 * KiB);
    await mkdir(join(root, 'victim'));
    await writeFile(victimPath, victimBytes);
    // Sealed into the index commitment as if a writer had stored it, so that only the row's own checks can catch it.
    let changed = 0;
    await editIndexAsWriter(dir, (db) => {
      // The row of a.txt: its pack holds only it (b.txt was added later, into a pack of its own).
      changed = db
        .prepare(
          "UPDATE contents SET pack_id = '../../victim/abc' WHERE pack_id = (SELECT pack_id FROM contents WHERE pack_id IS NOT NULL ORDER BY rowid LIMIT 1)",
        )
        .run().changes;
    });
    expect(changed).toBe(1);

    const vault = await unlockedVault(dir);
    const report = await vault.verify();
    expect(report.problems.map(({ path, code }) => ({ path, code }))).toEqual([
      { path: '/a.txt', code: 'INTEGRITY' },
    ]);
    expect(report.problems[0]?.message).toContain('contents row');
    expect((await readFile(victimPath)).equals(victimBytes)).toBe(true);
    // The rest of the vault still works.
    expect((await collect(vault.read('/big.bin'))).equals(big)).toBe(true);
    expect((await collect(vault.read('/b.txt'))).toString()).toBe('small file b');
    await expect(collect(vault.read('/a.txt'))).rejects.toBeInstanceOf(IntegrityError);

    // Deleting the damaged entry removes its row and nothing else.
    expect(await vault.remove(['/a.txt'])).toBe(1);
    expect((await readFile(victimPath)).equals(victimBytes)).toBe(true);
    expect(vault.list('/').map((entry) => entry.name)).toEqual(['b.txt', 'big.bin']);
    expect((await vault.verify()).ok).toBe(true);
    expect(readdirSync(join(root, 'victim'))).toEqual(['abc.pack']);
  });

  it('a pack row whose offset is not a byte count is damage to that entry, and its pack is kept whole', async () => {
    const { vault, dir, root } = await newVault();
    const files: Record<string, Buffer> = {
      'a.bin': randomBytes(4 * KiB),
      'c.bin': randomBytes(4 * KiB),
      'd.bin': randomBytes(4 * KiB),
    };
    await writeTree(join(root, 'src'), files);
    await vault.add([join(root, 'src')], '/');
    vault.close();
    // Sealed into the index commitment as if a writer had stored it, so that only the row's own checks can catch it.
    const editRow = (offset: unknown): Promise<void> =>
      editIndexAsWriter(dir, (db) => {
        db.prepare('UPDATE contents SET pack_offset = ? WHERE pack_offset = 0 OR pack_offset = ?').run(
          offset,
          'x',
        );
      });
    await editRow('x');
    let reopened = await unlockedVault(dir);
    const [damaged] = (await reopened.verify()).problems.map(({ path }) => path);
    expect(damaged).toMatch(/^\/src\/[acd]\.bin$/);
    // Deleting the other two would compact the pack; with a damaged row in it, it is kept as it is instead.
    await reopened.remove(
      Object.keys(files)
        .map((name) => `/src/${name}`)
        .filter((path) => path !== damaged),
    );
    reopened.close();
    // So repairing the row brings the file back.
    await editRow(0);
    reopened = await unlockedVault(dir);
    expect(
      (await collect(reopened.read(damaged ?? ''))).equals(files[damaged?.slice(5) ?? ''] ?? Buffer.alloc(0)),
    ).toBe(true);
    expect((await reopened.verify()).ok).toBe(true);
  });
  it('a node row whose id is 16-character TEXT is reported as damaged; the rest of the vault unlocks and works', async () => {
    const { dir } = await vaultWithFiles();
    // Sealed into the index commitment as if a writer had stored it, so that only the row's own checks can catch it.
    await editIndexAsWriter(dir, (db) => {
      const [keyId, record] = db.prepare('SELECT key_id, record FROM nodes LIMIT 1').raw().get() as [
        number,
        Buffer,
      ];
      db.prepare('INSERT INTO nodes (id, key_id, record) VALUES (?, ?, ?)').run(
        '0123456789abcdef',
        keyId,
        record,
      );
    });
    const vault = await openVault(dir);
    const damaged = await vault.unlock(passphrase());
    expect(damaged.map(({ path, code }) => ({ path, code }))).toEqual([
      { path: `(index row ${Buffer.from('0123456789abcdef').toString('hex')})`, code: 'INTEGRITY' },
    ]);
    expect(vault.list('/').map((entry) => entry.name)).toEqual(['a.txt', 'b.txt', 'big.bin']);
    expect((await vault.verify()).problems).toHaveLength(1);
  });
});

describe('symbolic links inside the vault folder', () => {
  it('a shard of blobs/ that links outside: open refuses before any passphrase, and nothing there is deleted', async () => {
    const { dir, root } = await vaultWithFiles();
    const victim = await victimFolder(root);
    await symlink(victim.dir, join(dir, 'blobs', 'ab'));
    const error = await failure(() => openVault(dir));
    expect(error).toBeInstanceOf(IntegrityError);
    expect((error as Error).message).toMatch(/blobs\/ab.*symbolic link.*never follows/s);
    await expectIntact(victim);
    // Nor under a name that is not a shard's.
    await rm(join(dir, 'blobs', 'ab'));
    await symlink(victim.dir, join(dir, 'blobs', 'not-a-shard'));
    expect(await failure(() => openVault(dir))).toBeInstanceOf(IntegrityError);
    await expectIntact(victim);
    // Once the link is gone the vault opens as before.
    await rm(join(dir, 'blobs', 'not-a-shard'));
    expect((await (await unlockedVault(dir)).verify()).ok).toBe(true);
  });

  it('a link planted in blobs/ while the vault is open: verify, add and delete refuse and leave what it points to', async () => {
    const { dir, root } = await vaultWithFiles();
    const vault = await unlockedVault(dir);
    // A shard the vault does not have yet: the link would otherwise collide with the vault's own folder.
    const victim = await victimFolder(root, new Set(readdirSync(join(dir, 'blobs'))));
    // Named like the shard of an orphan blob, so a sweep through it would delete the 32-hex file there.
    await symlink(victim.dir, join(dir, 'blobs', Object.keys(victim.files)[0]?.slice(0, 2) ?? 'ab'));
    await writeTree(join(root, 'more'), { 'c.txt': 'c' });
    for (const operation of [
      () => vault.verify(),
      () => vault.add([join(root, 'more', 'c.txt')], '/'),
      () => vault.remove(['/a.txt']),
    ]) {
      expect(await failure(operation)).toBeInstanceOf(IntegrityError);
      await expectIntact(victim);
    }
    expect(vault.list('/').map((entry) => entry.name)).toEqual(['a.txt', 'b.txt', 'big.bin']);
  });

  it.each(['packs', 'tmp'])(
    'a %s/ folder that links outside: open refuses, and nothing there is deleted',
    async (folder) => {
      const { dir, root } = await vaultWithFiles();
      const victim = await victimFolder(root);
      // The real folder moved out and linked back: the link would work, but Coffer refuses it.
      await cp(join(dir, folder), victim.dir, { recursive: true });
      victim.files = Object.fromEntries(
        await Promise.all(
          readdirSync(victim.dir).map(
            async (name) => [name, await readFile(join(victim.dir, name))] as const,
          ),
        ),
      );
      await rm(join(dir, folder), { recursive: true });
      await symlink(victim.dir, join(dir, folder));
      const error = await failure(() => openVault(dir));
      expect(error).toBeInstanceOf(IntegrityError);
      expect((error as Error).message).toContain(`"${folder}"`);
      expect((error as Error).message).toContain('symbolic link');
      await expectIntact(victim);
      expect(await readlink(join(dir, folder))).toBe(victim.dir);
    },
  );

  it.each(['index.sqlite', 'coffer.header'])(
    '%s as a link to the real file elsewhere: open refuses',
    async (name) => {
      const { dir, root } = await vaultWithFiles();
      const elsewhere = join(root, `moved-${name}`);
      await rename(join(dir, name), elsewhere);
      await symlink(elsewhere, join(dir, name));
      const error = await failure(() => openVault(dir));
      expect(error).toBeInstanceOf(IntegrityError);
      expect((error as Error).message).toContain(`"${name}"`);
    },
  );

  it.each(['activity.log', 'unlock-failures'])(
    '%s as a link outside or as a folder: open refuses, naming it, and what it links to is untouched',
    async (name) => {
      const { dir, root } = await vaultWithFiles();
      const victim = await victimFolder(root);
      await rm(join(dir, name), { force: true });
      await symlink(join(victim.dir, 'keep.txt'), join(dir, name));
      const linked = await failure(() => openVault(dir));
      expect(linked).toBeInstanceOf(IntegrityError);
      expect((linked as Error).message).toContain(`"${name}" in the vault folder`);
      await expectIntact(victim);

      await rm(join(dir, name));
      await mkdir(join(dir, name));
      const folder = await failure(() => openVault(dir));
      expect(folder).toBeInstanceOf(IntegrityError);
      expect((folder as Error).message).toContain(`"${name}" in the vault folder`);
    },
  );

  it('a journal beside the index that links outside: open refuses, and SQLite never writes through it', async () => {
    const { dir, root } = await vaultWithFiles();
    const victim = await victimFolder(root);
    await symlink(join(victim.dir, 'keep.txt'), join(dir, 'index.sqlite-journal'));
    expect(await failure(() => openVault(dir))).toBeInstanceOf(IntegrityError);
    await expectIntact(victim);
  });

  it('a journal link planted while the vault is open: every writing operation refuses, and SQLite never writes through it', async () => {
    const { dir, root } = await vaultWithFiles();
    const vault = await unlockedVault(dir);
    const victim = await victimFolder(root);
    // SQLite keeps the journal while the index is open (exclusive locking mode); a sync service may replace it.
    await rm(join(dir, 'index.sqlite-journal'), { force: true });
    await symlink(join(victim.dir, 'keep.txt'), join(dir, 'index.sqlite-journal'));
    const writes: [string, () => unknown][] = [
      ['mkdir', () => vault.mkdir('/new folder')],
      ['rename', () => vault.rename('/a.txt', 'renamed.txt')],
      ['move', () => vault.move(['/a.txt'], '/')],
      ['rotate the key', () => vault.rotateKey()],
      ['add a passphrase', () => vault.addPassphrase(passphrase('another one'))],
      ['change the passphrase', () => vault.changePassphrase(passphrase('a new one'))],
      ['make a recovery key', () => vault.createRecoveryKey()],
    ];
    for (const [what, operation] of writes) {
      const error = await failure(() => Promise.resolve().then(operation));
      expect(error, what).toBeInstanceOf(IntegrityError);
      expect((error as Error).message, what).toContain('"index.sqlite-journal"');
      await expectIntact(victim);
    }
    expect(vault.list('/').map((entry) => entry.name)).toEqual(['a.txt', 'b.txt', 'big.bin']);
    expect(vault.keySlots()).toHaveLength(1);
    // A restore writes nothing into the vault folder but its log entry, which is left out, and said why.
    const out = join(root, 'restored');
    await vault.restore(['/a.txt'], out);
    expect(await readFile(join(out, 'a.txt'), 'utf8')).toBe('small file a');
    const logProblems = vault.takeLogProblems();
    expect(logProblems.map((problem) => problem.code)).toEqual(['INTEGRITY']);
    expect(logProblems[0]?.message).toContain('"index.sqlite-journal"');
    vault.lock();
    // Unlocking may write the index, the header and the log: refused too.
    expect(await failure(() => vault.unlock(passphrase()))).toBeInstanceOf(IntegrityError);
    await expectIntact(victim);
  });

  it('a pack file that links to a copy outside is never read; deleting its entries leaves the copy', async () => {
    const { dir, root } = await vaultWithFiles();
    const vault = await unlockedVault(dir);
    const victim = await victimFolder(root);
    // Link each pack to an exact copy outside: following the link would read valid data.
    for (const pack of packsOf(dir)) {
      const copy = join(victim.dir, pack.slice(pack.lastIndexOf('/') + 1));
      await cp(pack, copy);
      victim.files[copy.slice(victim.dir.length + 1)] = await readFile(copy);
      await rm(pack);
      await symlink(copy, pack);
    }
    await expect(collect(vault.read('/a.txt'))).rejects.toBeInstanceOf(IntegrityError);
    const report = await vault.verify({ readData: true });
    expect(report.problems.map(({ path }) => path).sort()).toEqual(['/a.txt', '/b.txt']);
    expect(report.problems[0]?.message).toContain('symbolic link');
    await expectIntact(victim);
    expect(await vault.remove(['/a.txt', '/b.txt'])).toBe(2);
    await expectIntact(victim);
  });

  it('a blob file that links to a copy outside is never read', async () => {
    const { dir, root } = await vaultWithFiles();
    const vault = await unlockedVault(dir);
    const [shard] = readdirSync(join(dir, 'blobs'));
    const blob = join(dir, 'blobs', shard ?? '', readdirSync(join(dir, 'blobs', shard ?? ''))[0] ?? '');
    const copy = join(root, 'blob-copy');
    await rename(blob, copy);
    await symlink(copy, blob);
    await expect(collect(vault.read('/big.bin'))).rejects.toBeInstanceOf(IntegrityError);
    const report = await vault.verify();
    expect(report.problems.map(({ path }) => path)).toEqual(['/big.bin']);
    expect(await vault.remove(['/big.bin'])).toBe(1);
    expect(existsSync(copy)).toBe(true);
  });
});

describe('the vault’s folders replaced by files', () => {
  it.each(['packs', 'blobs', 'tmp'])(
    '%s/ as a regular file: open says which, and what to do',
    async (folder) => {
      const { dir } = await vaultWithFiles();
      await rm(join(dir, folder), { recursive: true });
      await writeFile(join(dir, folder), 'not a folder');
      const error = await failure(() => openVault(dir));
      expect(error).toBeInstanceOf(IntegrityError);
      expect((error as Error).message).toContain(`folder "${folder}" in the vault folder`);
      expect((error as Error).message).toContain('not a folder');
      expect((error as Error).message).toContain('Move it out of the vault folder');
      expect((await lstat(join(dir, folder))).isFile()).toBe(true);
    },
  );
});
