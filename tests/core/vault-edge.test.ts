/**
 * "Bad input gets a clear error and loses nothing": what a user sees when the vault folder, the passphrase, the
 * stored data, the source files or the disk misbehave. Every failure must be a typed error (or a problem in the
 * report) whose message says what happened and what to do, and must leave everything else intact.
 */
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  linkSync,
  readdirSync,
  statfsSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import {
  mkdir,
  open,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  truncate,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import {
  CancelledError,
  CofferError,
  IntegrityError,
  InvalidArgumentError,
  InvalidNameError,
  IoError,
  NotAVaultError,
  NotFoundError,
  ReadOnlyVaultError,
  SMALL_FILE_LIMIT,
  UnsupportedFormatError,
  Vault,
  WrongPassphraseError,
  type Problem,
} from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { damageIndexPage } from '../helpers/damage.js';
import {
  announceSkip,
  canMount,
  mountTmpfs,
  mountUnavailableReason,
  remountReadOnly,
  sharedMemoryDir,
  unmountAll,
} from '../helpers/mounts.js';
import { collect, newVault, passphrase, tempDir, track, writeTree } from '../helpers/vault.js';

const KiB = 1024;
const MiB = 1024 * KiB;

/** Deterministic, non-repeating-looking contents, so a swapped or shifted byte shows. */
function bytes(length: number, seed = 1): Buffer {
  const out = Buffer.alloc(length);
  let x = seed * 2654435761;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

/**
 * `actual` holds exactly `expected`. Buffer.equals, not toEqual: toEqual compares a MiB byte by byte in JavaScript,
 * seconds each on a loaded machine (a test of four such comparisons ran into its 60 s timeout).
 */
function expectSameBytes(actual: Buffer, expected: Buffer, what: string): void {
  expect(actual.length, what).toBe(expected.length);
  expect(actual.equals(expected), what).toBe(true);
}

async function openVault(dir: string): Promise<Vault> {
  return track(await Vault.open(dir, { sodium: nativeSodium }));
}

/** Every file below `dir`, as paths relative to it. */
async function filesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => !entry.isDirectory())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

/** Leftover temp files (the engine's or a restore's) below `dir`. */
async function tempFilesBelow(dir: string): Promise<string[]> {
  return (await filesBelow(dir)).filter((path) => path.endsWith('.tmp') || path.includes('.coffer-'));
}

async function blobFiles(vaultDir: string): Promise<string[]> {
  return (await filesBelow(join(vaultDir, 'blobs'))).map((path) => join(vaultDir, 'blobs', path));
}

function names(problems: readonly Problem[]): { path: string; code: string }[] {
  return problems.map(({ path, code }) => ({ path, code }));
}

/** The error a promise (or a function that may throw synchronously) fails with. */
async function failure(action: () => unknown): Promise<unknown> {
  try {
    await action();
  } catch (error) {
    return error;
  }
  throw new Error('expected the operation to fail, but it succeeded');
}

describe('opening something that is not a usable vault', () => {
  it('a path that does not exist is NotFoundError, telling the user to check the path', async () => {
    const missing = join(tempDir(), 'no-such-vault');
    const error = await failure(() => Vault.open(missing, { sodium: nativeSodium }));
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as Error).message).toContain(missing);
    expect((error as Error).message).toMatch(/does not exist.*check the path/is);
  });

  it('an empty folder, or a folder of unrelated files, is NotAVaultError naming the folder to choose', async () => {
    const empty = tempDir();
    const cluttered = tempDir();
    await writeTree(cluttered, {
      'notes.txt': 'hello',
      'photos/a.jpg': bytes(1000),
      'index.sqlite': 'not sql',
    });
    for (const dir of [empty, cluttered]) {
      const error = await failure(() => Vault.open(dir, { sodium: nativeSodium }));
      expect(error).toBeInstanceOf(NotAVaultError);
      expect((error as Error).message).toContain(dir);
      expect((error as Error).message).toMatch(/not a Coffer vault/i);
      expect((error as Error).message).toMatch(/choose/i);
    }
    // Nothing was written into the user's folder.
    expect(await filesBelow(cluttered)).toEqual(['index.sqlite', 'notes.txt', 'photos/a.jpg']);
    expect(await readFile(join(cluttered, 'index.sqlite'), 'utf8')).toBe('not sql');
  });

  it('a file instead of a folder is NotAVaultError telling the user to choose the vault folder', async () => {
    const file = join(tempDir(), 'vault.txt');
    await writeFile(file, 'just a file');
    const error = await failure(() => Vault.open(file, { sodium: nativeSodium }));
    expect(error).toBeInstanceOf(NotAVaultError);
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(/is a file/i);
    // What to do: pick the vault's folder instead.
    expect((error as Error).message).toMatch(/choose|select|pick/i);
    expect(await readFile(file, 'utf8')).toBe('just a file');
  });

  it('a vault written by a newer format version is UnsupportedFormatError asking to update Coffer', async () => {
    const { vault, dir } = await newVault();
    vault.close();
    const header = await readFile(join(dir, 'coffer.header'));
    header.writeUInt16LE(2, 8);
    // As a newer Coffer writes it: its checksum holds (otherwise it is damage, and the backup is tried).
    nativeSodium.blake2b(32, header.subarray(0, header.length - 32)).copy(header, header.length - 32);
    await writeFile(join(dir, 'coffer.header'), header);
    const error = await failure(() => Vault.open(dir, { sodium: nativeSodium }));
    expect(error).toBeInstanceOf(UnsupportedFormatError);
    expect((error as Error).message).toMatch(/version 2/);
    expect((error as Error).message).toMatch(/update Coffer/i);
  });
});

describe('passphrase', () => {
  it('a wrong passphrase is WrongPassphraseError, and the right one still unlocks afterwards', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(root, { 'src/a.txt': 'alpha' });
    await vault.add([join(root, 'src/a.txt')]);
    vault.close();

    const reopened = await openVault(dir);
    const error = await failure(() => reopened.unlock(passphrase('correct horse battery stapler')));
    expect(error).toBeInstanceOf(WrongPassphraseError);
    expect((error as Error).message).toMatch(/wrong passphrase/i);
    expect((error as Error).message).toMatch(/try again/i);
    expect(reopened.locked).toBe(true);

    expect(await reopened.unlock(passphrase())).toEqual([]);
    expect(reopened.list('/').map((entry) => entry.name)).toEqual(['a.txt']);
    expect((await collect(reopened.read('/a.txt'))).toString()).toBe('alpha');
  });
});

describe('damaged index', () => {
  it('garbage over the start of index.sqlite is IntegrityError on open, not a crash or a wrong passphrase', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(root, { 'src/a.txt': 'alpha' });
    await vault.add([join(root, 'src/a.txt')]);
    vault.close();

    const handle = await open(join(dir, 'index.sqlite'), 'r+');
    try {
      await handle.write(bytes(100, 7), 0, 100, 0);
    } finally {
      await handle.close();
    }
    const error = await failure(() => Vault.open(dir, { sodium: nativeSodium }));
    expect(error).toBeInstanceOf(IntegrityError);
    expect(error).not.toBeInstanceOf(WrongPassphraseError);
    expect((error as Error).message).toMatch(/index/i);
    expect((error as Error).message).toMatch(/backup/i);
  });

  it('a missing index.sqlite is a clear Coffer error naming the index, not a raw SQLite error', async () => {
    const { vault, dir } = await newVault();
    vault.close();
    await unlink(join(dir, 'index.sqlite'));
    const error = await failure(() => Vault.open(dir, { sodium: nativeSodium }));
    expect(error).toBeInstanceOf(CofferError);
    expect(['INTEGRITY', 'NOT_A_VAULT']).toContain((error as CofferError).code);
    expect((error as Error).message).toContain('index.sqlite');
    expect((error as Error).message).toMatch(/backup/i);
    // Opening must not quietly create an empty index in its place.
    expect(existsSync(join(dir, 'index.sqlite'))).toBe(false);
  });
  it('a damaged page inside the index is IntegrityError naming the index and what to do, not a raw SQLite error', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(root, { 'src/a.txt': 'alpha', 'src/b.txt': 'beta' });
    await vault.add([join(root, 'src')]);
    vault.close();
    await damageIndexPage(dir, 'contents');

    // Whichever step first reads the damaged page (here, verify) must say it is damage.
    const error = await failure(async () => {
      const reopened = await openVault(dir);
      await reopened.unlock(passphrase());
      await reopened.verify();
    });
    expect(error).toBeInstanceOf(IntegrityError);
    expect((error as IntegrityError).reason).toBe('corrupt');
    expect((error as Error).message).toContain('index.sqlite');
    expect((error as Error).message).toMatch(/damaged/i);
    expect((error as Error).message).toMatch(/backup/i);
  });
});

describe('missing and damaged contents', () => {
  it('verify with readData authenticates every chunk of a large file on the worker pool and names the bad one', async () => {
    const { vault, dir, root } = await newVault();
    // 48 chunks of 64 KiB: several batches, so the workers take stripes of the file.
    await writeTree(join(root, 'src'), {
      'healthy.bin': bytes(3 * MiB, 6),
      'damaged.bin': bytes(3 * MiB, 7),
    });
    expect((await vault.add([join(root, 'src', 'healthy.bin')])).problems).toEqual([]);
    const before = new Set(await blobFiles(dir));
    expect((await vault.add([join(root, 'src', 'damaged.bin')])).problems).toEqual([]);
    const [damagedBlob = ''] = (await blobFiles(dir)).filter((path) => !before.has(path));
    expect((await vault.verify({ readData: true })).ok).toBe(true);

    const blob = await readFile(damagedBlob);
    const inChunk30 = 52 + 30 * (64 * KiB + 16) + 1000;
    blob.writeUInt8(blob.readUInt8(inChunk30) ^ 0x01, inChunk30);
    await writeFile(damagedBlob, blob);
    const report = await vault.verify({ readData: true });
    expect(report).toMatchObject({ ok: false, filesChecked: 2, bytesChecked: 3 * MiB });
    expect(names(report.problems)).toEqual([{ path: '/damaged.bin', code: 'INTEGRITY' }]);
    expect(report.problems[0]?.message).toMatch(/chunk 30/);
  });

  it('a blob file cut short is reported as truncated (not as a size mismatch), at a chunk boundary or inside a chunk', async () => {
    const { vault, dir, root } = await newVault();
    const record = 64 * KiB + 16;
    await writeTree(join(root, 'src'), {
      'cut-at-chunk.bin': bytes(SMALL_FILE_LIMIT + 200 * KiB, 1),
      'cut-in-chunk.bin': bytes(SMALL_FILE_LIMIT + 200 * KiB, 2),
    });
    const cuts = { 'cut-at-chunk.bin': 2 * record, 'cut-in-chunk.bin': 1000 };
    for (const [name, cut] of Object.entries(cuts)) {
      const before = new Set(await blobFiles(dir));
      await vault.add([join(root, 'src', name)]);
      const [blob = ''] = (await blobFiles(dir)).filter((path) => !before.has(path));
      await truncate(blob, (await stat(blob)).size - cut);
    }
    const report = await vault.verify();
    expect(names(report.problems).sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: '/cut-at-chunk.bin', code: 'INTEGRITY' },
      { path: '/cut-in-chunk.bin', code: 'INTEGRITY' },
    ]);
    for (const problem of report.problems) {
      expect(problem.message).toMatch(/is truncated: its end is missing/);
      expect(problem.message).not.toMatch(/size differs/);
      expect(problem.message).toMatch(/restore the affected data from a backup/i);
    }
  });

  it('restore carries on past a missing and a damaged blob, reports both, and leaves nothing at their paths', async () => {
    const { vault, dir, root } = await newVault();
    const good = {
      'small.txt': bytes(1000, 1),
      'big.bin': bytes(SMALL_FILE_LIMIT + 100 * KiB, 2),
      'folder/nested.bin': bytes(SMALL_FILE_LIMIT + 1, 3),
    };
    await writeTree(join(root, 'src'), {
      ...good,
      'missing.bin': bytes(SMALL_FILE_LIMIT + 200 * KiB, 4),
      'damaged.bin': bytes(SMALL_FILE_LIMIT + 300 * KiB, 5),
    });
    for (const name of ['small.txt', 'big.bin', 'folder']) {
      expect((await vault.add([join(root, 'src', name)])).problems).toEqual([]);
    }
    const blobOf = async (name: string): Promise<string> => {
      const before = new Set(await blobFiles(dir));
      expect((await vault.add([join(root, 'src', name)])).problems).toEqual([]);
      const added = (await blobFiles(dir)).filter((path) => !before.has(path));
      expect(added).toHaveLength(1);
      return added[0] ?? '';
    };
    const missingBlob = await blobOf('missing.bin');
    const damagedBlob = await blobOf('damaged.bin');

    await unlink(missingBlob);
    const blob = await readFile(damagedBlob);
    const middle = Math.floor(blob.length / 2);
    blob.writeUInt8(blob.readUInt8(middle) ^ 0x01, middle);
    await writeFile(damagedBlob, blob);

    const dest = join(root, 'restored');
    const report = await vault.restore(['/'], dest);
    for (const [path, contents] of Object.entries(good)) {
      expect(await readFile(join(dest, path))).toEqual(contents);
    }
    expect(report.filesRestored).toBe(3);
    expect(names(report.problems).sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: '/damaged.bin', code: 'INTEGRITY' },
      { path: '/missing.bin', code: 'INTEGRITY' },
    ]);
    for (const problem of report.problems) {
      expect(problem.message).toMatch(/integrity check failed/i);
      expect(problem.message).toMatch(/restore the affected data from a backup/i);
    }
    expect(existsSync(join(dest, 'missing.bin'))).toBe(false);
    expect(existsSync(join(dest, 'damaged.bin'))).toBe(false);
    expect(await tempFilesBelow(dest)).toEqual([]);
    expect(await filesBelow(dest)).toEqual(['big.bin', 'folder/nested.bin', 'small.txt']);

    const full = await vault.verify({ readData: true });
    expect(full.ok).toBe(false);
    expect(names(full.problems).sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: '/damaged.bin', code: 'INTEGRITY' },
      { path: '/missing.bin', code: 'INTEGRITY' },
    ]);

    const quick = await vault.verify();
    expect(quick.ok).toBe(false);
    expect(names(quick.problems)).toContainEqual({ path: '/missing.bin', code: 'INTEGRITY' });
    expect(names(quick.problems).map((problem) => problem.path)).not.toContain('/big.bin');
  });
});

describe('awkward sources', () => {
  it('a source that vanishes during the add is a problem for it, and the rest is added', async () => {
    const { vault, root } = await newVault();
    const src = join(root, 'src');
    await writeTree(src, { 'a.txt': 'alpha', 'b.txt': 'bravo', 'c.txt': 'charlie' });
    let removed = false;
    const report = await vault.add([src], '/', {
      onProgress: (progress) => {
        if (!removed && progress.current === join(src, 'a.txt')) {
          unlinkSync(join(src, 'b.txt'));
          removed = true;
        }
      },
    });
    expect(removed).toBe(true);
    expect(report.filesAdded).toBe(2);
    expect(report.problems).toHaveLength(1);
    const [problem] = report.problems;
    expect(problem?.path).toBe(join(src, 'b.txt'));
    expect(problem?.code).toBe('NOT_FOUND');
    expect(problem?.message).toMatch(/removed while adding|does not exist/i);
    expect(vault.list('/src').map((entry) => entry.name)).toEqual(['a.txt', 'c.txt']);
    expect((await collect(vault.read('/src/c.txt'))).toString()).toBe('charlie');
  });

  it('a file that changes while it is read is reported as SOURCE_CHANGED and not stored', async () => {
    const { vault, dir, root } = await newVault();
    const src = join(root, 'src');
    const big = join(src, 'big.bin');
    await writeTree(src, { 'a.txt': 'alpha', 'big.bin': bytes(20 * MiB, 9), 'c.txt': 'charlie' });
    let startedAt: number | undefined;
    let appended = false;
    const report = await vault.add([src], '/', {
      onProgress: (progress) => {
        if (progress.current !== big || appended) return;
        startedAt ??= progress.bytesDone;
        if (progress.bytesDone > startedAt) {
          appendFileSync(big, 'one more line\n');
          appended = true;
        }
      },
    });
    expect(appended).toBe(true);
    expect(names(report.problems)).toEqual([{ path: big, code: 'SOURCE_CHANGED' }]);
    expect(report.problems[0]?.message).toMatch(/changed while it was being added/i);
    expect(report.problems[0]?.message).toMatch(/add it again/i);
    expect(report.filesAdded).toBe(2);
    expect(vault.list('/src').map((entry) => entry.name)).toEqual(['a.txt', 'c.txt']);
    // Neither a blob nor a temp file of the half-read file is left behind.
    expect(await blobFiles(dir)).toEqual([]);
    expect(await tempFilesBelow(dir)).toEqual([]);
    expect((await vault.verify({ readData: true })).ok).toBe(true);
  });

  it('symlinks and special files are skipped with a warning each; the rest is added', async () => {
    const { vault, root } = await newVault();
    const src = join(root, 'src');
    await writeTree(src, { 'a.txt': 'alpha', 'sub/b.txt': 'bravo' });
    await symlink(join(src, 'a.txt'), join(src, 'link-to-file'));
    await symlink(join(src, 'sub'), join(src, 'link-to-dir'));
    execFileSync('mkfifo', [join(src, 'pipe')]);

    const report = await vault.add([src]);
    expect(names(report.problems).sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: join(src, 'link-to-dir'), code: 'SKIPPED' },
      { path: join(src, 'link-to-file'), code: 'SKIPPED' },
      { path: join(src, 'pipe'), code: 'SKIPPED' },
    ]);
    for (const problem of report.problems) {
      if (problem.path.includes('link')) {
        expect(problem.message).toMatch(/symbolic link/i);
        expect(problem.message).toMatch(/add the target/i);
      } else {
        expect(problem.message).toMatch(/pipe/i);
        expect(problem.message).toMatch(/not a regular file/i);
      }
    }
    expect(report.filesAdded).toBe(2);
    expect(vault.listRecursive('/').map((entry) => entry.path)).toEqual([
      '/src',
      '/src/sub',
      '/src/sub/b.txt',
      '/src/a.txt',
    ]);
  });
});

describe('the vault folder is off limits to restore and add', () => {
  /**
   * Everything in the vault folder (names and bytes), to show that a refused operation wrote nothing there; but the
   * activity log, where the vault records the operation itself.
   */
  async function contentsOf(dir: string): Promise<Record<string, Buffer>> {
    const out: Record<string, Buffer> = {};
    for (const path of await filesBelow(dir)) {
      if (!path.startsWith('index.sqlite') && path !== 'activity.log')
        out[path] = await readFile(join(dir, path));
    }
    return out;
  }

  it('restore refuses a destination in the vault folder, however the path is spelled, and writes nothing', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(root, { 'src/a.txt': 'alpha', 'src/sub/b.txt': 'beta' });
    await vault.add([join(root, 'src')]);
    const before = await contentsOf(dir);
    await symlink(join(dir, 'tmp'), join(root, 'link-to-tmp'));
    await symlink(dir, join(root, 'link-to-vault'));
    const destinations = [
      dir,
      join(dir, 'tmp'),
      join(dir, 'packs', 'new', 'deeper'),
      `${join(root, 'elsewhere')}/../vault/tmp`,
      join(root, 'link-to-tmp'),
      join(root, 'link-to-vault', 'not-yet'),
    ];
    for (const destination of destinations) {
      const error = await failure(() => vault.restore(['/'], destination));
      expect(error, destination).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toContain(destination);
      expect((error as Error).message).toMatch(/vault folder/i);
      expect((error as Error).message).toMatch(/outside/i);
    }
    expect(await contentsOf(dir)).toEqual(before);
    expect(existsSync(join(dir, 'packs', 'new'))).toBe(false);
  });

  it('restoring into the folder holding the vault leaves out the vault path that leads into it, and restores the rest', async () => {
    const { vault, dir, root } = await newVault();
    // The vault folder is <root>/vault: a vault folder "/vault" restored into <root> would land in it.
    await writeTree(join(root, 'src'), { 'vault/inner.txt': 'would land in the vault', 'other.txt': 'fine' });
    await vault.add([join(root, 'src', 'vault'), join(root, 'src', 'other.txt')]);
    const before = await contentsOf(dir);

    const report = await vault.restore(['/'], root);
    expect(names(report.problems)).toEqual([{ path: '/vault', code: 'INVALID_ARGUMENT' }]);
    expect(report.problems[0]?.message).toMatch(/is the vault folder/i);
    expect(report.filesRestored).toBe(1);
    expect(await readFile(join(root, 'other.txt'), 'utf8')).toBe('fine');
    expect(existsSync(join(dir, 'inner.txt'))).toBe(false);
    expect(await contentsOf(dir)).toEqual(before);
  });

  it('add refuses the vault folder, a path in it, and a folder holding it, and adds nothing', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(root, { 'beside.txt': 'beside the vault' });
    // (A symlink given as a source is skipped as a link, as any is: only a real path on the way is followed.)
    const linkedRoot = join(tempDir(), 'linked');
    await symlink(root, linkedRoot);
    const cases: [string, RegExp][] = [
      [dir, /is in the vault folder/i],
      [join(dir, 'tmp'), /is in the vault folder/i],
      [join(dir, 'index.sqlite'), /is in the vault folder/i],
      [join(linkedRoot, 'vault', 'packs'), /is in the vault folder/i],
      [root, /vault folder .* is inside it/i],
    ];
    for (const [source, message] of cases) {
      const error = await failure(() => vault.add([join(root, 'beside.txt'), source]));
      expect(error, source).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toContain(source);
      expect((error as Error).message).toMatch(message);
    }
    expect(vault.listRecursive('/')).toEqual([]);
  });
});

describe('restoring onto existing files', () => {
  it('two chosen items of the same name from different folders are refused before anything is written', async () => {
    const { vault, root } = await newVault();
    await writeTree(root, { 'src/x.txt': 'the top one', 'src/C/X.txt': 'the one in C' });
    await vault.add([join(root, 'src/x.txt'), join(root, 'src/C')]);
    const dest = join(root, 'dest');
    for (const overwrite of [false, true]) {
      const error = await failure(() => vault.restore(['/x.txt', '/C/X.txt'], dest, { overwrite }));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toMatch(
        /"\/x\.txt" and "\/C\/X\.txt" would both be restored as "X\.txt" in the same folder.*one at a time/,
      );
      expect(existsSync(dest)).toBe(false);
    }
    // Each on its own, or beside its own folder's name, still restores.
    const report = await vault.restore(['/x.txt', '/C'], dest);
    expect(report.problems).toEqual([]);
    expect(await filesBelow(dest)).toEqual(['C/X.txt', 'x.txt']);
  });

  it('an item chosen with the folder it is in is restored once, with the folder', async () => {
    const { vault, root } = await newVault();
    await writeTree(root, { 'src/C/x.txt': 'in C', 'src/C/D/y.txt': 'in D' });
    await vault.add([join(root, 'src/C')]);
    const dest = join(root, 'dest');
    const report = await vault.restore(['/C/D/y.txt', '/C', '/C/x.txt', '/C'], dest);
    expect(report.problems).toEqual([]);
    expect(report.filesRestored).toBe(2);
    expect(await filesBelow(dest)).toEqual(['C/D/y.txt', 'C/x.txt']);
  });

  it('an existing file is left untouched without overwrite and replaced atomically with it', async () => {
    const { vault, root } = await newVault();
    await writeTree(root, { 'src/doc.txt': 'from the vault' });
    await vault.add([join(root, 'src/doc.txt')]);
    const dest = join(root, 'dest');
    await writeTree(dest, { 'doc.txt': 'my own edits' });

    const refused = await vault.restore(['/doc.txt'], dest);
    expect(refused.filesRestored).toBe(0);
    expect(names(refused.problems)).toEqual([{ path: '/doc.txt', code: 'ALREADY_EXISTS' }]);
    // What was asked for, not a failure: the window says it was kept.
    expect(refused.problems[0]?.kept).toBe(true);
    expect(refused.problems[0]?.message).toMatch(/already exists/i);
    expect(refused.problems[0]?.message).toMatch(
      /To replace it, restore again and choose to replace existing files/,
    );
    expect(await readFile(join(dest, 'doc.txt'), 'utf8')).toBe('my own edits');

    // A second name for the old file: an in-place rewrite would change it too, an atomic replace does not.
    linkSync(join(dest, 'doc.txt'), join(dest, 'old-doc.txt'));
    const replaced = await vault.restore(['/doc.txt'], dest, { overwrite: true });
    expect(replaced.problems).toEqual([]);
    expect(replaced.filesRestored).toBe(1);
    expect(await readFile(join(dest, 'doc.txt'), 'utf8')).toBe('from the vault');
    expect(await readFile(join(dest, 'old-doc.txt'), 'utf8')).toBe('my own edits');
    expect(await filesBelow(dest)).toEqual(['doc.txt', 'old-doc.txt']);
  });

  it('a folder where a restored file would go is left, and the problem says to move it, even with overwrite', async () => {
    const { vault, root } = await newVault();
    await writeTree(root, { 'src/doc.txt': 'from the vault' });
    await vault.add([join(root, 'src/doc.txt')]);
    const dest = join(root, 'dest');
    await writeTree(dest, { 'doc.txt/mine.txt': 'kept' });
    const report = await vault.restore(['/doc.txt'], dest, { overwrite: true });
    expect(names(report.problems)).toEqual([{ path: '/doc.txt', code: 'ALREADY_EXISTS' }]);
    expect(report.problems[0]?.message).toMatch(
      /is a folder, so the file was not restored there\. Move or rename/,
    );
    // Not restored, and not by choice: a problem, not a file kept.
    expect(report.problems[0]?.kept).toBeUndefined();
    expect(await readFile(join(dest, 'doc.txt', 'mine.txt'), 'utf8')).toBe('kept');
  });

  it('a symbolic link where a restored folder would go is called a symbolic link, and is not followed', async () => {
    const { vault, root } = await newVault();
    await writeTree(join(root, 'src'), { 'docs/a.txt': 'alpha' });
    await vault.add([join(root, 'src', 'docs')]);
    const dest = join(root, 'dest');
    const elsewhere = join(root, 'elsewhere');
    await writeTree(elsewhere, { 'mine.txt': 'mine' });
    await mkdir(dest);
    await symlink(elsewhere, join(dest, 'docs'));

    const report = await vault.restore(['/docs'], dest);
    expect(names(report.problems)).toEqual([{ path: '/docs', code: 'ALREADY_EXISTS' }]);
    expect(report.problems[0]?.kept).toBeUndefined();
    expect(report.problems[0]?.message).toMatch(/is a symbolic link, so folder "\/docs" was not restored/);
    expect(report.problems[0]?.message).not.toMatch(/is a file/);
    expect(await readdir(elsewhere)).toEqual(['mine.txt']);
  });

  it.each([false, true])(
    'in a folder it made, restore (overwrite: %s) never replaces a file that appeared at a name it restores next',
    async (overwrite) => {
      // On a case-insensitive disk "b.txt" can be the name of a file this restore has just written under another
      // name ("B.TXT", or an 8.3 short name); Linux disks have no such aliases, so the file is put there by hand,
      // between the two publishes, where an alias would be.
      const { vault, root } = await newVault();
      await writeTree(join(root, 'src', 'docs'), {
        'a.bin': bytes(SMALL_FILE_LIMIT + 1, 1),
        'b.txt': 'from the vault',
      });
      await vault.add([join(root, 'src', 'docs')]);
      const dest = join(root, 'dest');
      const alias = join(dest, 'docs', 'b.txt');

      const report = await vault.restore(['/docs'], dest, {
        overwrite,
        onRestored: (entry) => {
          if (entry.name === 'a.bin') writeFileSync(alias, 'already here');
        },
      });
      expect(names(report.problems)).toEqual([{ path: '/docs/b.txt', code: 'ALREADY_EXISTS' }]);
      // Its own file never came out: a problem, whatever was chosen, not a file kept.
      expect(report.problems[0]?.kept).toBeUndefined();
      expect(report.filesRestored).toBe(1);
      expect(await readFile(alias, 'utf8')).toBe('already here');
      expectSameBytes(await readFile(join(dest, 'docs', 'a.bin')), bytes(SMALL_FILE_LIMIT + 1, 1), 'a.bin');
      expect(await tempFilesBelow(dest)).toEqual([]);
    },
  );
});

describe('full and read-only disks (tmpfs mounts)', () => {
  if (!canMount) {
    announceSkip('the disk-full and read-only vault tests', mountUnavailableReason ?? 'mount unavailable');
  }
  const onMounts: Vault[] = [];
  afterEach(() => {
    for (const vault of onMounts.splice(0)) vault.close();
    unmountAll();
  });

  /** A new vault on a tmpfs of `size` bytes holding one file, before.txt, and a source folder outside it. */
  async function vaultOnTmpfs(
    size: number,
    before: Buffer,
  ): Promise<{ vault: Vault; dir: string; src: string; mount: string }> {
    const mount = mountTmpfs(size);
    const dir = join(mount, 'vault');
    const vault = await Vault.create(dir, passphrase(), { kdf: 'interactive', sodium: nativeSodium });
    onMounts.push(vault);
    const src = tempDir();
    await writeTree(src, { 'before.txt': before });
    expect((await vault.add([join(src, 'before.txt')])).problems).toEqual([]);
    return { vault, dir, src, mount };
  }

  /** The closed vault in `dir` opens, unlocks, holds only `name` at its root, and verifies clean. */
  async function expectReopensWithOnly(dir: string, name: string): Promise<Vault> {
    const reopened = await Vault.open(dir, { sodium: nativeSodium });
    onMounts.push(reopened);
    expect(await reopened.unlock(passphrase())).toEqual([]);
    expect(reopened.list('/').map((entry) => entry.name)).toEqual([name]);
    const report = await reopened.verify({ readData: true });
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    return reopened;
  }

  it.skipIf(!canMount)(
    'a full disk fails the add with IoError saying so, and the vault is as it was before',
    async () => {
      const { vault, dir, src } = await vaultOnTmpfs(2 * MiB, bytes(10 * KiB, 1));
      await writeTree(src, { 'huge.bin': bytes(5 * MiB, 2) });

      const error = await failure(() => vault.add([join(src, 'huge.bin')]));
      expect(error).toBeInstanceOf(IoError);
      expect((error as Error).message).toMatch(/disk is full/i);
      expect((error as Error).message).toMatch(/free some space/i);
      expect(await tempFilesBelow(dir)).toEqual([]);
      expect(await readdir(join(dir, 'tmp'))).toEqual([]);
      expect(await blobFiles(dir)).toEqual([]);
      expect(vault.list('/').map((entry) => entry.name)).toEqual(['before.txt']);
      vault.close();

      const reopened = await expectReopensWithOnly(dir, 'before.txt');
      expect(await collect(reopened.read('/before.txt'))).toEqual(bytes(10 * KiB, 1));
      expect(await readdir(join(dir, 'tmp'))).toEqual([]);
    },
  );

  it.skipIf(!canMount)(
    'the index running out of disk (a few hundred KiB left) is the same IoError, and the vault is as it was',
    async () => {
      const { vault, dir, src, mount } = await vaultOnTmpfs(4 * MiB, bytes(1000, 1));
      // 400 small files make a pack of about 130 KiB, which fits; the index's 64 KiB pages and their journal do not.
      const many: Record<string, Buffer> = {};
      for (let i = 0; i < 400; i++) many[`many/f${i}.txt`] = bytes(200, i + 2);
      await writeTree(src, many);
      const { bavail, bsize } = statfsSync(mount);
      await writeFile(join(mount, 'filler'), Buffer.alloc(bavail * bsize - 250 * KiB));

      const error = await failure(() => vault.add([join(src, 'many')]));
      expect(error).toBeInstanceOf(IoError);
      // The case this test is about: SQLite, not the pack write, found the disk full.
      expect(((error as Error).cause as { code?: string } | undefined)?.code).toBe('SQLITE_FULL');
      expect((error as Error).message).toContain('index.sqlite');
      expect((error as Error).message).toMatch(/disk is full/i);
      expect((error as Error).message).toMatch(/free some space/i);
      expect(vault.list('/').map((entry) => entry.name)).toEqual(['before.txt']);
      expect(await readdir(join(dir, 'packs'))).toHaveLength(1);
      expect(await readdir(join(dir, 'tmp'))).toEqual([]);
      vault.close();
      // SQLite keeps the journal while it holds the vault lock; a rolled-back one is gone once the lock is released.
      expect(existsSync(join(dir, 'index.sqlite-journal'))).toBe(false);

      await expectReopensWithOnly(dir, 'before.txt');
    },
  );

  it.skipIf(!canMount)(
    'a restore onto a full disk fails with IoError and leaves no partial file',
    async () => {
      const { vault, root } = await newVault();
      await writeTree(root, { 'src/big.bin': bytes(3 * MiB, 3) });
      await vault.add([join(root, 'src/big.bin')]);
      const dest = mountTmpfs(1 * MiB);

      const error = await failure(() => vault.restore(['/big.bin'], dest));
      expect(error).toBeInstanceOf(IoError);
      expect((error as Error).message).toMatch(/disk is full/i);
      expect((error as Error).message).toMatch(/free some space/i);
      expect(existsSync(join(dest, 'big.bin'))).toBe(false);
      expect(readdirSync(dest)).toEqual([]);
    },
  );

  it.skipIf(!canMount)(
    'a vault on read-only media opens read-only: browsing and restoring work, changes are refused',
    async () => {
      const mount = mountTmpfs(8 * MiB);
      const dir = join(mount, 'vault');
      const created = await Vault.create(dir, passphrase(), { kdf: 'interactive', sodium: nativeSodium });
      onMounts.push(created);
      const src = tempDir();
      const contents = { 'a.txt': bytes(500, 1), 'big.bin': bytes(200 * KiB, 2) };
      await writeTree(join(src, 'docs'), contents);
      expect((await created.add([join(src, 'docs')])).problems).toEqual([]);
      created.close();
      remountReadOnly(mount);

      const vault = await Vault.open(dir, { sodium: nativeSodium });
      onMounts.push(vault);
      expect(vault.readOnly).toBe(true);
      expect(await vault.unlock(passphrase())).toEqual([]);
      expect(vault.list('/docs').map((entry) => entry.name)).toEqual(['a.txt', 'big.bin']);
      expect(await collect(vault.read('/docs/big.bin'))).toEqual(contents['big.bin']);
      const dest = tempDir();
      const restored = await vault.restore(['/docs'], dest);
      expect(restored.problems).toEqual([]);
      for (const [name, data] of Object.entries(contents)) {
        expect(await readFile(join(dest, 'docs', name))).toEqual(data);
      }
      expect((await vault.verify({ readData: true })).ok).toBe(true);

      const refusals = [
        () => vault.add([join(src, 'docs', 'a.txt')], '/'),
        () => vault.mkdir('/new'),
        () => vault.rename('/docs/a.txt', 'b.txt'),
        () => vault.remove(['/docs/a.txt']),
      ];
      for (const attempt of refusals) {
        const error = await failure(attempt);
        expect(error).toBeInstanceOf(ReadOnlyVaultError);
        expect((error as Error).message).toMatch(/read-only/i);
        expect((error as Error).message).toMatch(/browse and restore/i);
      }
      expect(vault.list('/docs').map((entry) => entry.name)).toEqual(['a.txt', 'big.bin']);
    },
  );
});

describe('names', () => {
  const CAFE_NFD = 'Cafe\u0301.txt';
  const CAFE_NFC = 'Caf\u00e9.txt';

  it('an NFD name is stored and restored as NFC, and its NFC twin collides with it', async () => {
    const { vault, root } = await newVault();
    await writeTree(join(root, 'mac'), { [CAFE_NFD]: 'from macOS' });
    await writeTree(join(root, 'linux'), { [CAFE_NFC]: 'from Linux' });

    const first = await vault.add([join(root, 'mac', CAFE_NFD)]);
    expect(first.problems).toEqual([]);
    expect(vault.list('/').map((entry) => entry.name)).toEqual([CAFE_NFC]);
    expect(vault.list('/')[0]?.path).toBe(`/${CAFE_NFC}`);

    const twin = await vault.add([join(root, 'linux', CAFE_NFC)]);
    expect(twin.filesAdded).toBe(0);
    expect(names(twin.problems)).toEqual([{ path: join(root, 'linux', CAFE_NFC), code: 'ALREADY_EXISTS' }]);
    expect(twin.problems[0]?.message).toMatch(/already in the vault/i);
    expect(twin.problems[0]?.message).toMatch(/delete or rename/i);

    const dest = join(root, 'restored');
    expect((await vault.restore(['/'], dest)).problems).toEqual([]);
    expect(readdirSync(dest)).toEqual([CAFE_NFC]);
    expect(await readFile(join(dest, CAFE_NFC), 'utf8')).toBe('from macOS');
  });

  it('names differing only in case collide in one folder', async () => {
    const { vault, root } = await newVault();
    const src = join(root, 'docs');
    await writeTree(src, { 'Report.pdf': 'upper', 'report.PDF': 'lower' });
    const report = await vault.add([src]);
    expect(report.filesAdded).toBe(1);
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]?.code).toBe('ALREADY_EXISTS');
    expect(report.problems[0]?.message).toMatch(/delete or rename/i);
    expect(vault.list('/docs')).toHaveLength(1);
  });

  it('a 255-byte UTF-8 name round-trips; a 256-byte one is reported and skipped', async () => {
    const { vault, root } = await newVault();
    const longest = '日'.repeat(85);
    expect(Buffer.byteLength(longest)).toBe(255);
    // No Linux file system takes a 256-byte name, but U+FB1D is 3 bytes on disk and 4 in NFC (its
    // decomposition is excluded from composition), so this 255-byte file name is 256 bytes as stored.
    const tooLong = `${'日'.repeat(84)}\uFB1D`;
    expect(Buffer.byteLength(tooLong)).toBe(255);
    expect(Buffer.byteLength(tooLong.normalize('NFC'))).toBe(256);
    const src = join(root, 'src');
    await writeTree(src, { [longest]: 'longest', [tooLong]: 'too long', 'ok.txt': 'ok' });

    const report = await vault.add([src]);
    expect(report.filesAdded).toBe(2);
    expect(names(report.problems)).toEqual([{ path: join(src, tooLong), code: 'INVALID_NAME' }]);
    expect(report.problems[0]?.message).toMatch(/256 bytes/);
    expect(report.problems[0]?.message).toMatch(/shorten it/i);
    expect(vault.list('/src').map((entry) => entry.name)).toEqual([longest, 'ok.txt'].sort());

    const dest = join(root, 'restored');
    expect((await vault.restore(['/src'], dest)).problems).toEqual([]);
    expect(await readFile(join(dest, 'src', longest), 'utf8')).toBe('longest');

    const nameOf256 = 'a'.repeat(256);
    for (const attempt of [
      () => vault.mkdir(`/${nameOf256}`),
      () => vault.rename('/src/ok.txt', nameOf256),
    ]) {
      const error = await failure(attempt);
      expect(error).toBeInstanceOf(InvalidNameError);
      expect((error as InvalidNameError).reason).toBe('too-long');
      expect((error as Error).message).toMatch(/shorten it/i);
    }
    expect(vault.list('/src').map((entry) => entry.name)).toContain('ok.txt');
  });

  it('a branch too deep for the destination is one problem, the rest is restored, and no folder made for it is left', async () => {
    const { vault, root } = await newVault();
    // 400 levels of about 11 bytes ("nnnnnnnnnn/"): 4,400 bytes, past the 4,096 a path may have on Linux. (Fewer,
    // longer names than the 5,000 levels of the report: the file system walks the whole path at every call.)
    const deep = `/d/d/${Array.from({ length: 398 }, () => 'nnnnnnnnnn').join('/')}`;
    vault.mkdir(deep);
    await writeTree(join(root, 'src'), {
      'bottom.txt': 'at the bottom',
      'shallow.txt': 'two down',
      'top.txt': 'top',
    });
    await vault.add([join(root, 'src', 'bottom.txt')], deep);
    await vault.add([join(root, 'src', 'shallow.txt')], '/d/d');
    await vault.add([join(root, 'src', 'top.txt')], '/');
    const dest = join(root, 'dest');
    await mkdir(join(dest, 'd'), { recursive: true }); // there before the restore: kept whatever happens

    const report = await vault.restore(['/'], dest);
    expect(report.problems).toHaveLength(1);
    const [problem] = report.problems;
    expect(problem?.code).toBe('INVALID_NAME');
    expect(problem?.path.startsWith('/d/d/nnnnnnnnnn/')).toBe(true);
    expect(problem?.message).toMatch(/longer than the destination's file system takes/);
    expect(problem?.message).toMatch(/shorter path/);
    expect(report.filesRestored).toBe(2);
    expect(await filesBelow(dest)).toEqual(['d/d/shallow.txt', 'top.txt']);
    // The folders made on the way down to the failure held nothing else, so they are gone; d/d holds a file.
    const folders = (await readdir(dest, { recursive: true, withFileTypes: true })).filter((entry) =>
      entry.isDirectory(),
    );
    expect(folders.map((entry) => join(entry.parentPath, entry.name).slice(dest.length + 1)).sort()).toEqual([
      'd',
      'd/d',
    ]);
    expect(report.foldersRestored).toBe(1);
  });

  it.each([
    ['one file, written in this thread', 1],
    ['70 files, written by the worker pool', 70],
  ])(
    'files whose temp file path is too long (%s) are problems, not a failed restore, and leave nothing',
    async (_how, count) => {
      const { vault, root } = await newVault();
      const dest = join(root, 'dest');
      // A folder path of 4,066 bytes: its files' paths ("…/f07") fit in 4,095, their temp files' do not.
      const parts: string[] = [];
      let length = dest.length;
      while (4066 - length > 200) {
        parts.push('n'.repeat(100));
        length += 101;
      }
      parts.push('m'.repeat(4066 - length - 1));
      const folder = `/${parts.join('/')}`;
      vault.mkdir(folder);
      const files: Record<string, string> = {};
      for (let i = 0; i < count; i++) files[`f${String(i).padStart(2, '0')}`] = `file ${i}`;
      await writeTree(join(root, 'src'), files);
      await vault.add(
        Object.keys(files).map((name) => join(root, 'src', name)),
        folder,
      );

      const report = await vault.restore(['/'], dest);
      expect(report.problems).toHaveLength(count);
      for (const problem of report.problems) {
        expect(problem.code).toBe('INVALID_NAME');
        expect(problem.message).toMatch(/longer than the destination's file system takes/);
      }
      expect(report.filesRestored).toBe(0);
      expect(report.foldersRestored).toBe(0);
      expect(await readdir(dest)).toEqual([]);
    },
  );
});

describe('sizes', () => {
  it('empty files and files at the pack/blob-file boundary round-trip byte-identically', async () => {
    const { vault, root } = await newVault();
    const files = {
      'empty.txt': Buffer.alloc(0),
      'one.bin': bytes(1, 1),
      // One chunk exactly, two chunks (packed), the largest packed file, the smallest with a blob file.
      'exact-64k.bin': bytes(64 * KiB, 2),
      'over-64k.bin': bytes(64 * KiB + 1, 3),
      'exact-limit.bin': bytes(SMALL_FILE_LIMIT, 4),
      'over-limit.bin': bytes(SMALL_FILE_LIMIT + 1, 5),
    };
    await writeTree(join(root, 'src'), files);
    const report = await vault.add([join(root, 'src')]);
    expect(report.problems).toEqual([]);
    expect(report.filesAdded).toBe(6);
    for (const [name, data] of Object.entries(files)) {
      expect(vault.stat(`/src/${name}`).size).toBe(data.length);
      expectSameBytes(await collect(vault.read(`/src/${name}`)), data, name);
    }
    const dest = join(root, 'restored');
    expect((await vault.restore(['/src'], dest)).problems).toEqual([]);
    for (const [name, data] of Object.entries(files)) {
      expectSameBytes(await readFile(join(dest, 'src', name)), data, name);
    }
    expect((await vault.verify({ readData: true })).ok).toBe(true);
  });

  const FOUR_GIB = 2 ** 32;
  const HUGE = FOUR_GIB + 12345;
  const shm = sharedMemoryDir(HUGE + 256 * MiB);
  if ('reason' in shm) announceSkip('the file-over-4-GiB test', shm.reason);

  it.skipIf('reason' in shm)(
    'a sparse file over 4 GiB is added in bounded memory and read back at the 4 GiB boundary',
    { timeout: 180_000 },
    async () => {
      const base = 'dir' in shm ? shm.dir : '';
      const root = tempDir(base);
      const source = join(root, 'huge.bin');
      const marks: [number, number][] = [
        [0, 0x11],
        [FOUR_GIB - 1, 0x22],
        [FOUR_GIB, 0x33],
        [HUGE - 1, 0x44],
      ];
      await writeFile(source, '');
      await truncate(source, HUGE);
      const handle = await open(source, 'r+');
      try {
        for (const [offset, value] of marks) await handle.write(Buffer.from([value]), 0, 1, offset);
      } finally {
        await handle.close();
      }
      expect((await stat(source)).size).toBe(HUGE);

      const vault = track(
        await Vault.create(join(root, 'vault'), passphrase(), { kdf: 'interactive', sodium: nativeSodium }),
      );
      const baseline = process.memoryUsage().rss;
      let peak = baseline;
      const report = await vault.add([source], '/', {
        onProgress: () => {
          peak = Math.max(peak, process.memoryUsage().rss);
        },
      });
      expect(report.problems).toEqual([]);
      expect(vault.stat('/huge.bin').size).toBe(HUGE);
      // Streaming: the process never holds more than a small fraction of the file.
      expect(peak - baseline).toBeLessThan(256 * MiB);

      const range = async (start: number, end: number): Promise<Buffer> =>
        collect(vault.read('/huge.bin', { start, end }));
      expect(await range(0, 1)).toEqual(Buffer.from([0x11, 0]));
      expect(await range(FOUR_GIB - 2, FOUR_GIB + 1)).toEqual(Buffer.from([0, 0x22, 0x33, 0]));
      expect(await range(FOUR_GIB - 1, FOUR_GIB - 1)).toEqual(Buffer.from([0x22]));
      expect(await range(FOUR_GIB, FOUR_GIB)).toEqual(Buffer.from([0x33]));
      expect(await range(HUGE - 3, HUGE - 1)).toEqual(Buffer.from([0, 0, 0x44]));
      expect(await range(FOUR_GIB + 1000, FOUR_GIB + 1003)).toEqual(Buffer.alloc(4));

      const verified = await vault.verify();
      expect(verified.problems).toEqual([]);
      expect(verified.ok).toBe(true);
      vault.close();
      await rm(root, { recursive: true, force: true });
    },
  );
});

describe('large files, which the worker pool reads and writes itself', () => {
  /** 40 chunks of 64 KiB and a bit: three batches of the pool, so the damage below sits in a middle one. */
  const SIZE = 40 * 64 * KiB + 5;

  it('restore names the damaged chunk of a middle batch and leaves neither the file nor a temp file', async () => {
    const { vault, dir, root } = await newVault();
    const contents = bytes(SIZE, 11);
    await writeTree(join(root, 'src'), { 'big.bin': contents });
    expect((await vault.add([join(root, 'src', 'big.bin')])).problems).toEqual([]);
    const dest = join(root, 'restored');
    await vault.restore(['/big.bin'], dest);
    expect((await readFile(join(dest, 'big.bin'))).equals(contents)).toBe(true);

    const [blobFile] = await blobFiles(dir);
    const blob = await readFile(blobFile ?? '');
    const damagedChunk = 21;
    const at = 52 + damagedChunk * (64 * KiB + 16) + 1000;
    blob.writeUInt8(blob.readUInt8(at) ^ 0x80, at);
    await writeFile(blobFile ?? '', blob);
    const again = join(root, 'again');
    const report = await vault.restore(['/big.bin'], again);
    expect(names(report.problems)).toEqual([{ path: '/big.bin', code: 'INTEGRITY' }]);
    expect(report.problems[0]?.message).toContain(`(chunk ${damagedChunk})`);
    expect(await filesBelow(again)).toEqual([]);
  });

  it('restore and verify report progress through a large file, not only when it is done', async () => {
    const { vault, root } = await newVault();
    const size = 20 * MiB;
    await writeTree(join(root, 'src'), { 'big.bin': bytes(size, 13) });
    await vault.add([join(root, 'src', 'big.bin')]);
    const seen = { restore: [] as number[], verify: [] as number[] };
    await vault.restore(['/big.bin'], join(root, 'out'), {
      onProgress: (progress) => seen.restore.push(progress.bytesDone),
    });
    await vault.verify({ readData: true, onProgress: (progress) => seen.verify.push(progress.bytesDone) });
    for (const values of Object.values(seen)) {
      expect(values.filter((done) => done > 0 && done < size).length).toBeGreaterThanOrEqual(3);
      expect(values).toEqual([...values].sort((a, b) => a - b));
      expect(values.at(-1)).toBe(size);
    }
  });

  it('cancelling mid-file, adding or restoring, leaves no trace of that file', async () => {
    const { vault, dir, root } = await newVault();
    const big = join(root, 'src', 'big.bin');
    await writeTree(join(root, 'src'), { 'big.bin': bytes(64 * MiB, 12) });
    const adding = new AbortController();
    await expect(
      vault.add([big], '/', {
        signal: adding.signal,
        onProgress: (progress) => {
          if (progress.bytesDone > 0) adding.abort();
        },
      }),
    ).rejects.toBeInstanceOf(CancelledError);
    expect(vault.list('/')).toEqual([]);
    expect(await blobFiles(dir)).toEqual([]);
    expect(await tempFilesBelow(dir)).toEqual([]);

    expect((await vault.add([big])).problems).toEqual([]);
    const dest = join(root, 'restored');
    const restoring = new AbortController();
    // Stop once the staging file has some, but not all, of the plaintext.
    await expect(
      vault.restore(['/big.bin'], dest, {
        signal: restoring.signal,
        onProgress: (progress) => {
          if (progress.bytesDone > 0) restoring.abort();
        },
      }),
    ).rejects.toBeInstanceOf(CancelledError);
    expect(await filesBelow(dest)).toEqual([]);
  });
});
