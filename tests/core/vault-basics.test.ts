import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import {
  AlreadyExistsError,
  CancelledError,
  InvalidArgumentError,
  NotFoundError,
  SMALL_FILE_LIMIT,
  Vault,
  VaultInUseError,
  VaultLockedError,
  WrongPassphraseError,
} from '../../src/core/index.js';
import { IndexDb } from '../../src/core/vault/index-db.js';
import { nativeSodium } from '../helpers/backends.js';
import { collect, newVault, passphrase, tempDir, track, writeTree } from '../helpers/vault.js';

const run = promisify(execFile);

/** Every file below `dir`, recursively, with its bytes. */
function allBytes(dir: string): { path: string; bytes: Buffer }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      return { path, bytes: readFileSync(path) };
    });
}

describe('vault lifecycle', () => {
  it('creates, locks, reopens and unlocks with the same contents', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'src'), { 'notes.txt': 'hello', 'deep/er/file.bin': Buffer.alloc(70_000, 3) });
    await vault.add([join(root, 'src')], '/');
    vault.close();
    const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
    expect(reopened.locked).toBe(true);
    expect(() => reopened.list('/')).toThrow(VaultLockedError);
    await expect(reopened.unlock(passphrase('nope'))).rejects.toBeInstanceOf(WrongPassphraseError);
    expect(await reopened.unlock(passphrase())).toEqual([]);
    expect(reopened.listRecursive('/').map((e) => `${e.type} ${e.path} ${e.size}`)).toEqual([
      'folder /src 0',
      'folder /src/deep 0',
      'folder /src/deep/er 0',
      'file /src/deep/er/file.bin 70000',
      'file /src/notes.txt 5',
    ]);
    reopened.lock();
    expect(() => reopened.list('/')).toThrow(VaultLockedError);
  });

  it('runs the index with the durability settings the commit protocol relies on', () => {
    const db = IndexDb.open(join(tempDir(), 'index.sqlite'), {
      readOnly: false,
      create: true,
      vaultId: Buffer.alloc(16, 1),
    });
    expect(db.pragmas()).toMatchObject({
      journalMode: 'delete',
      lockingMode: 'exclusive',
      synchronous: 2,
      foreignKeys: 1,
    });
    db.close();
  });

  it("keeps up to 64 MiB of the index's pages in memory, writable or read-only", () => {
    const path = join(tempDir(), 'index.sqlite');
    const vaultId = Buffer.alloc(16, 1);
    const writable = IndexDb.open(path, { readOnly: false, create: true, vaultId });
    expect(writable.pragmas().cacheSize).toBe(-65536);
    writable.close();
    const readOnly = IndexDb.open(path, { readOnly: true, create: false, vaultId });
    expect(readOnly.pragmas().cacheSize).toBe(-65536);
    readOnly.close();
  });

  it('counts the rows through a memory map that is gone once counted (a read error in it would stop the process)', () => {
    const path = join(tempDir(), 'index.sqlite');
    const db = IndexDb.open(path, { readOnly: false, create: true, vaultId: Buffer.alloc(16, 1) });
    expect(db.nodeCount()).toBe(0);
    expect(db.pragmas().mmapSize).toBe(0);
    db.close();
  });

  it('refuses a second opener in this process and in another process', async () => {
    const { dir } = await newVault();
    await expect(Vault.open(dir, { sodium: nativeSodium })).rejects.toBeInstanceOf(VaultInUseError);
    const script = `
      import('${join(process.cwd(), 'src/core/index.ts')}').then(async ({ Vault }) => {
        try { await Vault.open(process.argv[1]); console.log('opened'); }
        catch (error) { console.log(error.code); }
      });`;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '-e', script, dir]);
    expect(stdout.trim()).toBe('VAULT_IN_USE');
  });

  it('releases the lock on close so the vault can be opened again', async () => {
    const { vault, dir } = await newVault();
    vault.close();
    track(await Vault.open(dir, { sodium: nativeSodium })).close();
  });
});

describe('browsing and organising', () => {
  it('lists folders first, stats, and searches names ignoring case and normalisation', async () => {
    const { vault, root } = await newVault();
    await writeTree(join(root, 'in'), {
      'Zebra.txt': 'z',
      'apple.TXT': 'a',
      'Cafe\u0301.md': 'c',
      'sub/x.txt': 'x',
    });
    await vault.add([
      join(root, 'in', 'Zebra.txt'),
      join(root, 'in', 'apple.TXT'),
      join(root, 'in', 'Cafe\u0301.md'),
      join(root, 'in', 'sub'),
    ]);
    expect(vault.list('/').map((e) => e.name)).toEqual(['sub', 'apple.TXT', 'Café.md', 'Zebra.txt']);
    expect(vault.stat('/sub/x.txt')).toMatchObject({ type: 'file', size: 1, path: '/sub/x.txt' });
    expect(vault.search('CAFÉ').map((e) => e.path)).toEqual(['/Café.md']);
    expect(vault.search('.txt').map((e) => e.path)).toEqual(['/apple.TXT', '/sub/x.txt', '/Zebra.txt']);
    expect(() => vault.stat('/missing')).toThrow(NotFoundError);
    expect(() => vault.list('/Zebra.txt')).toThrow(InvalidArgumentError);
  });

  it('makes folders, renames, moves and deletes, and keeps it all after reopening', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'in'), { 'a.txt': 'aaa', 'big.bin': Buffer.alloc(200_000, 7) });
    await vault.add([join(root, 'in', 'a.txt'), join(root, 'in', 'big.bin')]);
    vault.mkdir('/Docs/2026');
    vault.rename('/a.txt', 'renamed.txt');
    vault.move(['/renamed.txt', '/big.bin'], '/Docs/2026');
    expect(() => vault.move(['/Docs'], '/Docs/2026')).toThrow(InvalidArgumentError);
    vault.mkdir('/Trash');
    expect(() => vault.rename('/Trash', 'docs')).toThrow(AlreadyExistsError);
    expect(await vault.remove(['/Trash'])).toBe(1);
    vault.close();
    const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
    await reopened.unlock(passphrase());
    expect(reopened.listRecursive('/').map((e) => e.path)).toEqual([
      '/Docs',
      '/Docs/2026',
      '/Docs/2026/big.bin',
      '/Docs/2026/renamed.txt',
    ]);
    expect((await collect(reopened.read('/Docs/2026/renamed.txt'))).toString()).toBe('aaa');
    expect(await collect(reopened.read('/Docs/2026/big.bin'))).toEqual(Buffer.alloc(200_000, 7));
    expect(await reopened.remove(['/Docs'])).toBe(4);
    expect(reopened.listRecursive('/')).toEqual([]);
    expect(readdirSync(join(dir, 'blobs'), { recursive: true }).filter((p) => String(p).length > 2)).toEqual(
      [],
    );
    expect((await reopened.verify({ readData: true })).ok).toBe(true);
  });
});

describe('reading', () => {
  it('reads byte ranges across chunk boundaries, from blob files and packs', async () => {
    const { vault, root } = await newVault();
    const big = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) % 256));
    const small = Buffer.from('0123456789');
    // The same bytes as a blob file of its own, and packed (several chunks in a pack).
    const huge = Buffer.concat([big, Buffer.alloc(SMALL_FILE_LIMIT)]);
    await writeTree(root, { 'big.bin': big, 'huge.bin': huge, 'small.txt': small });
    await vault.add([join(root, 'big.bin'), join(root, 'huge.bin'), join(root, 'small.txt')]);
    for (const [start, end] of [
      [0, 0],
      [65_535, 65_536],
      [100, 200_000],
      [299_999, 299_999],
      [0, 299_999],
    ] as const) {
      expect(await collect(vault.read('/big.bin', { start, end }))).toEqual(big.subarray(start, end + 1));
      expect(await collect(vault.read('/huge.bin', { start, end }))).toEqual(big.subarray(start, end + 1));
    }
    expect((await collect(vault.read('/small.txt', { start: 3, end: 5 }))).toString()).toBe('345');
    expect(() => vault.read('/small.txt', { start: 5, end: 10 })).toThrow(InvalidArgumentError);
  });
});

describe('nothing readable leaks', () => {
  it('no name, folder name, content or exact timestamp appears anywhere in the vault folder', async () => {
    const { vault, dir, root } = await newVault();
    const secretName = 'ZQXJ-secret-plan';
    const secretFolder = 'WVKP-hidden-folder';
    const smallContent = 'KWYZ-small-content-marker '.repeat(20);
    const bigContent = Buffer.from('QPMV-large-content-marker '.repeat(10_000));
    const mtime = new Date('2021-03-04T05:06:07.891Z');
    await writeTree(join(root, 'src'), {
      [`${secretFolder}/${secretName}.txt`]: smallContent,
      [`${secretFolder}/${secretName}-big.bin`]: bigContent,
    });
    await utimes(join(root, 'src', secretFolder, `${secretName}.txt`), mtime, mtime);
    await vault.add([join(root, 'src', secretFolder)]);
    vault.rename(`/${secretFolder}/${secretName}.txt`, `${secretName}-renamed.txt`);
    const needles = [
      secretName,
      secretFolder,
      'KWYZ-small-content-marker',
      'QPMV-large-content-marker',
      String(mtime.getTime()),
    ];
    const scan = (): void => {
      for (const { path, bytes } of allBytes(dir)) {
        for (const needle of needles) {
          for (const encoding of ['utf8', 'utf16le'] as const) {
            expect(bytes.includes(Buffer.from(needle, encoding)), `${needle} (${encoding}) in ${path}`).toBe(
              false,
            );
          }
        }
      }
    };
    scan(); // while open
    vault.close();
    scan();
  });
});

describe('the vault folder is private', () => {
  /** Mode bits of `path` and of everything below it, by path relative to `root`. */
  function modesBelow(root: string, path = root): Record<string, string> {
    const rel = path === root ? '.' : path.slice(root.length + 1);
    const modes: Record<string, string> = { [rel]: (statSync(path).mode & 0o777).toString(8) };
    if (statSync(path).isDirectory()) {
      for (const name of readdirSync(path)) Object.assign(modes, modesBelow(root, join(path, name)));
    }
    return modes;
  }

  it('after init, add (small and large files) and verify, files are 0600 and folders 0700, the index too', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'src'), {
      'a.txt': 'alpha',
      'big.bin': Buffer.alloc(SMALL_FILE_LIMIT + 1, 7),
    });
    await vault.add([join(root, 'src')]);
    expect((await vault.verify()).ok).toBe(true);
    const modes = modesBelow(dir);
    // What this must cover: the index and its journal, a pack, a blob in its shard.
    expect(Object.keys(modes)).toEqual(
      expect.arrayContaining(['index.sqlite', 'index.sqlite-journal', 'coffer.header', 'tmp', 'packs']),
    );
    expect(Object.keys(modes).filter((path) => /^packs\/.+\.pack$/u.test(path))).toHaveLength(1);
    expect(Object.keys(modes).filter((path) => /^blobs\/..\/[0-9a-f]{32}$/u.test(path))).toHaveLength(1);
    for (const [path, mode] of Object.entries(modes)) {
      expect(mode, path).toBe(statSync(join(dir, path)).isDirectory() ? '700' : '600');
    }
  });
});

describe('cancelling an add', () => {
  it('keeps the files reported as added and leaves no trace of the rest', async () => {
    const { vault, dir, root } = await newVault();
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < 40; i++)
      files[`f${String(i).padStart(2, '0')}.bin`] = Buffer.alloc(
        i % 3 === 0 ? SMALL_FILE_LIMIT + 1000 : 1000,
        i,
      );
    await writeTree(join(root, 'src'), files);
    const controller = new AbortController();
    const added: string[] = [];
    await expect(
      vault.add([join(root, 'src')], '/', {
        signal: controller.signal,
        onAdded: (entry) => added.push(entry.path),
        onProgress: (progress) => {
          if (progress.filesDone === 20) controller.abort();
        },
      }),
    ).rejects.toBeInstanceOf(CancelledError);
    const listed = vault.listRecursive('/').map((e) => e.path);
    expect(listed).toEqual([...added].sort((a, b) => a.localeCompare(b)));
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.length).toBeLessThan(41);
    vault.close();
    const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
    await reopened.unlock(passphrase());
    expect(reopened.listRecursive('/').map((e) => e.path)).toEqual(listed);
    const report = await reopened.verify({ readData: true });
    expect(report).toMatchObject({ ok: true, unreferenced: [] });
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
  });
});

describe('crash leftovers', () => {
  it('keeps a blob file no row names at open and in verify, which lists it with its size', async () => {
    const { vault, dir } = await newVault();
    vault.close();
    await mkdir(join(dir, 'blobs', 'ab'), { recursive: true });
    const unnamed = join(dir, 'blobs', 'ab', 'ab'.padEnd(32, '0'));
    await writeFile(unnamed, 'not named by this index');
    const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
    await reopened.unlock(passphrase());
    expect(await reopened.verify()).toMatchObject({
      ok: true,
      unreferenced: [{ path: `blobs/ab/${'ab'.padEnd(32, '0')}`, size: 23 }],
    });
    expect(await readFile(unnamed, 'utf8')).toBe('not named by this index');
    expect(statSync(join(dir, 'coffer.header')).size).toBe(272);
    expect((await readFile(join(dir, 'coffer.header'))).subarray(0, 8).toString()).toBe('COFFERVH');
  });

  it('removes only the temp files Coffer names in tmp/ at open: not other names, folders or symlinks', async () => {
    const { vault, dir, root } = await newVault();
    vault.close();
    const outside = join(root, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, `${'cd'.repeat(16)}.tmp`), "not the vault's");
    await writeFile(join(dir, 'tmp', `${'ef'.repeat(16)}.tmp`), 'partial blob');
    await writeFile(join(dir, 'tmp', 'notes.txt'), "someone else's");
    await mkdir(join(dir, 'tmp', `${'01'.repeat(16)}.tmp`));
    symlinkSync(join(outside, `${'cd'.repeat(16)}.tmp`), join(dir, 'tmp', `${'cd'.repeat(16)}.tmp`));
    track(await Vault.open(dir, { sodium: nativeSodium })).close();
    expect(readdirSync(join(dir, 'tmp')).sort()).toEqual([
      `${'01'.repeat(16)}.tmp`,
      `${'cd'.repeat(16)}.tmp`,
      'notes.txt',
    ]);
    expect(readdirSync(outside)).toEqual([`${'cd'.repeat(16)}.tmp`]);
  });
});

describe('creating', () => {
  it('refuses a non-empty folder and leaves it alone', async () => {
    const dir = tempDir();
    await writeFile(join(dir, 'keep.txt'), 'mine');
    await expect(Vault.create(dir, passphrase(), { kdf: 'interactive' })).rejects.toBeInstanceOf(
      AlreadyExistsError,
    );
    expect(readdirSync(dir)).toEqual(['keep.txt']);
  });
});

describe('damaged index rows', () => {
  it('reports a tampered record, and keeps listing and verifying the healthy rest', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'in'), { 'keep.txt': 'keep', 'other.txt': 'other' });
    await vault.add([join(root, 'in', 'keep.txt'), join(root, 'in', 'other.txt')]);
    vault.close();
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(join(dir, 'index.sqlite'));
    const row = db.prepare('SELECT id, record FROM nodes LIMIT 1').get() as { id: Buffer; record: Buffer };
    const tampered = Buffer.from(row.record);
    tampered.writeUInt8(tampered.readUInt8(30) ^ 1, 30);
    db.prepare('UPDATE nodes SET record = ? WHERE id = ?').run(tampered, row.id);
    db.close();
    const rowProblem: unknown = expect.objectContaining({
      code: 'INTEGRITY',
      path: `(index row ${row.id.toString('hex')})`,
    });

    // The tree snapshot written at close still describes both files, so unlocking does not read the rows ...
    const first = track(await Vault.open(dir, { sodium: nativeSodium }));
    expect(await first.unlock(passphrase())).toEqual([]);
    expect(first.listRecursive('/').map((e) => e.path)).toEqual(['/keep.txt', '/other.txt']);
    // ... but verify decrypts every row, finds the damage, and drops the snapshot that hid it.
    const report = await first.verify({ readData: true });
    expect(report).toMatchObject({ ok: false, filesChecked: 1 });
    // The edit also no longer adds up to the index commitment (format 1.1).
    const indexProblem: unknown = expect.objectContaining({
      code: 'INTEGRITY',
      path: '(index)',
      message: expect.stringMatching(/do not match its sealed commitment/) as unknown,
    });
    expect(report.problems).toEqual([
      rowProblem,
      indexProblem,
      expect.objectContaining({
        code: 'INTEGRITY',
        message: expect.stringMatching(/cached tree/) as unknown,
      }),
    ]);
    first.close();

    const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
    const damaged = await reopened.unlock(passphrase());
    expect(damaged).toEqual([rowProblem, indexProblem]);
    const listed = reopened.listRecursive('/').map((e) => e.path);
    expect(listed).toHaveLength(1);
    expect(['/keep.txt', '/other.txt']).toContain(listed[0]);
    const again = await reopened.verify({ readData: true });
    expect(again).toMatchObject({ ok: false, filesChecked: 1 });
    expect(again.problems).toEqual(damaged);
  });

  it('reports entries whose parent folder row was deleted', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'in'), { 'folder/child.txt': 'child', 'top.txt': 'top' });
    await vault.add([join(root, 'in', 'folder'), join(root, 'in', 'top.txt')]);
    vault.close();
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(join(dir, 'index.sqlite'));
    // The folder's row is the one no contents row points at.
    const folderRow = db
      .prepare('SELECT id FROM nodes WHERE id NOT IN (SELECT node_id FROM contents)')
      .get() as { id: Buffer };
    db.prepare('DELETE FROM nodes WHERE id = ?').run(folderRow.id);
    db.close();
    const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
    const damaged = await reopened.unlock(passphrase());
    expect(damaged).toHaveLength(2);
    expect(damaged[0]?.code).toBe('INTEGRITY');
    expect(damaged[0]?.message).toMatch(/no valid parent/);
    // Format 1.1: the deleted row is also missing from the rows the index commitment covers.
    expect(damaged[1]).toMatchObject({
      path: '(index)',
      message: expect.stringMatching(/commitment/) as unknown,
    });
    expect(reopened.listRecursive('/').map((e) => e.path)).toEqual(['/top.txt']);
  });
});
