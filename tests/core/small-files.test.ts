import { existsSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { readdir, utimes } from 'node:fs/promises';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

import { CancelledError, IoError, SMALL_FILE_LIMIT, Vault } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { announceSkip, canMount, mountTmpfs, mountUnavailableReason, unmountAll } from '../helpers/mounts.js';
import { collect, leftBehind, newVault, passphrase, tempDir, track, writeTree } from '../helpers/vault.js';

// Enough files that add and restore send them to the worker pool, in several batches.
const COUNT = 400;

function fileName(i: number): string {
  return `f${String(i).padStart(4, '0')}.bin`;
}

function manySmallFiles(): Record<string, Buffer> {
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < COUNT; i++) {
    // Sizes from empty to the largest file that goes into a pack (16 chunks), with one and two chunks exactly
    // and just over; most of a few KiB.
    const edges = [0, SMALL_FILE_LIMIT, 65_536, 65_537];
    const size = edges[i] ?? (i * 997) % 20_000;
    files[`d${i % 7}/${fileName(i)}`] = Buffer.alloc(size, i % 251);
  }
  return files;
}

describe('adding many small files (worker pool)', () => {
  afterAll(() => {
    unmountAll();
  });

  it('stores every file with its bytes and modification time, and verifies', async () => {
    const { vault, dir, root } = await newVault();
    const files = manySmallFiles();
    await writeTree(join(root, 'src'), files);
    const when = new Date('2021-06-01T12:00:00Z');
    await utimes(join(root, 'src', 'd3', fileName(3)), when, when);
    const report = await vault.add([join(root, 'src')]);
    expect(report).toMatchObject({ filesAdded: COUNT, problems: [] });
    expect(report.bytesAdded).toBe(Object.values(files).reduce((sum, bytes) => sum + bytes.length, 0));
    vault.close();

    const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
    await reopened.unlock(passphrase());
    for (const [path, bytes] of Object.entries(files)) {
      expect((await collect(reopened.read(`/src/${path}`))).equals(bytes), path).toBe(true);
    }
    expect(reopened.stat(`/src/d3/${fileName(3)}`).mtime).toBe(when.getTime());
    expect(await reopened.verify({ readData: true })).toMatchObject({ ok: true, filesChecked: COUNT });
  });

  it('reports files that vanish or change after planning, and adds the rest', async () => {
    const { vault, root } = await newVault();
    await writeTree(join(root, 'src'), manySmallFiles());
    const vanishing = join(root, 'src', 'd5', fileName(c(5)));
    const growing = join(root, 'src', 'd6', fileName(c(6)));
    let touched = false;
    const report = await vault.add([join(root, 'src')], '/', {
      onProgress: (progress) => {
        if (!touched && progress.current !== undefined) {
          touched = true;
          unlinkSync(vanishing);
          writeFileSync(growing, Buffer.alloc(statSync(growing).size + 10, 1));
        }
      },
    });
    expect(touched).toBe(true);
    expect(report.filesAdded).toBe(COUNT - 2);
    expect(report.problems.map(({ path, code }) => ({ path, code }))).toEqual([
      { path: vanishing, code: 'NOT_FOUND' },
      { path: growing, code: 'SOURCE_CHANGED' },
    ]);
    expect(() => vault.stat(`/src/d5/${fileName(c(5))}`)).toThrow(/does not exist/);
    expect((await vault.verify({ readData: true })).ok).toBe(true);
  });

  it('adds only one of two names that differ in case', async () => {
    const { vault, root } = await newVault();
    const files = manySmallFiles();
    files['d0/Clash.txt'] = Buffer.from('upper');
    files['d0/clash.txt'] = Buffer.from('lower');
    await writeTree(join(root, 'src'), files);
    const report = await vault.add([join(root, 'src')]);
    expect(report.filesAdded).toBe(COUNT + 1);
    expect(report.problems).toEqual([
      expect.objectContaining({ path: join(root, 'src', 'd0', 'clash.txt'), code: 'ALREADY_EXISTS' }),
    ]);
    expect((await collect(vault.read('/src/d0/clash.txt'))).toString()).toBe('upper');
  });

  it('cancelled midway keeps exactly the files reported as added', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'src'), manySmallFiles());
    const controller = new AbortController();
    const added: string[] = [];
    await expect(
      vault.add([join(root, 'src')], '/', {
        signal: controller.signal,
        onAdded: (entry) => {
          if (entry.type === 'file') added.push(entry.path);
        },
        onProgress: (progress) => {
          if (progress.filesDone >= COUNT / 3) controller.abort();
        },
      }),
    ).rejects.toBeInstanceOf(CancelledError);
    const listed = vault
      .listRecursive('/')
      .filter((entry) => entry.type === 'file')
      .map((entry) => entry.path);
    expect(listed.length).toBeLessThan(COUNT);
    expect(listed).toEqual([...added].sort((a, b) => a.localeCompare(b)));
    vault.close();
    // Packs of batches that were out when the add stopped are removed, not left for the next open.
    expect(leftBehind(dir)).toEqual({ files: [], intents: 0 });
    const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
    await reopened.unlock(passphrase());
    expect(await reopened.verify({ readData: true })).toMatchObject({ ok: true, unreferenced: [] });
  });

  it.skipIf(!canMount)(
    'onto a full disk fails with IoError when a pack cannot be written, keeping exactly what was reported',
    async () => {
      const mount = mountTmpfs(2 * 1024 * 1024);
      const dir = join(mount, 'vault');
      const vault = track(
        await Vault.create(dir, passphrase(), { kdf: 'interactive', sodium: nativeSodium }),
      );
      const src = join(tempDir(), 'src');
      const files: Record<string, Buffer> = {};
      for (let i = 0; i < 300; i++) files[fileName(i)] = Buffer.alloc(20_000, i);
      await writeTree(src, files);
      const added: string[] = [];
      const error = await vault.add([src], '/', { onAdded: (entry) => added.push(entry.path) }).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(IoError);
      expect((error as Error).message).toMatch(/^Could not store the files in the vault: the disk is full/);
      expect(await readdir(join(dir, 'tmp'))).toEqual([]);
      const listed = vault.listRecursive('/').map((entry) => entry.path);
      expect(listed).toEqual([...added].sort((a, b) => a.localeCompare(b)));
      expect(await vault.verify({ readData: true })).toMatchObject({ ok: true, unreferenced: [] });
    },
  );
  if (!canMount)
    announceSkip('adding many small files onto a full disk', mountUnavailableReason ?? 'mount unavailable');
});

/** Every file below `dir`, relative to it, with its bytes. */
async function treeBytes(dir: string): Promise<Map<string, Buffer>> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return new Map(
    entries
      .filter((entry) => entry.isFile())
      .map((entry) => {
        const path = join(entry.parentPath, entry.name);
        return [path.slice(dir.length + 1), readFileSync(path)] as const;
      }),
  );
}

const isTemp = (path: string): boolean => path.includes('.coffer-');

/** A vault holding {@link manySmallFiles} under /src, unlocked. */
async function vaultOfSmallFiles(): Promise<{ vault: Vault; dir: string; files: Record<string, Buffer> }> {
  const { vault, dir, root } = await newVault();
  const files = manySmallFiles();
  await writeTree(join(root, 'src'), files);
  const when = new Date('2020-02-02T02:02:02Z');
  await utimes(join(root, 'src', 'd2', fileName(2)), when, when);
  await vault.add([join(root, 'src')]);
  return { vault, dir, files };
}

describe('restoring many small files (worker pool)', () => {
  afterAll(() => {
    unmountAll();
  });

  it('writes every file with its bytes and modification time, and leaves no temp file', async () => {
    const { vault, files } = await vaultOfSmallFiles();
    const dest = tempDir();
    const report = await vault.restore(['/src'], dest);
    expect(report).toMatchObject({ filesRestored: COUNT, problems: [] });
    const restored = await treeBytes(join(dest, 'src'));
    expect([...restored.keys()].sort()).toEqual(Object.keys(files).sort());
    for (const [path, bytes] of Object.entries(files))
      expect(restored.get(path)?.equals(bytes), path).toBe(true);
    expect(statSync(join(dest, 'src', 'd2', fileName(2))).mtime.toISOString()).toBe(
      '2020-02-02T02:02:02.000Z',
    );
  });

  it('never replaces existing files unless asked to, and then replaces them all', async () => {
    const { vault, files } = await vaultOfSmallFiles();
    const dest = tempDir();
    await vault.restore(['/src'], dest);
    const mine = Buffer.from('edited by the user');
    for (const path of Object.keys(files)) writeFileSync(join(dest, 'src', path), mine);

    const again = await vault.restore(['/src'], dest);
    expect(again.filesRestored).toBe(0);
    expect(again.problems).toHaveLength(COUNT);
    expect(new Set(again.problems.map((problem) => problem.code))).toEqual(new Set(['ALREADY_EXISTS']));
    let restored = await treeBytes(join(dest, 'src'));
    expect([...restored.values()].every((bytes) => bytes.equals(mine))).toBe(true);
    expect([...restored.keys()].filter(isTemp)).toEqual([]);

    const overwritten = await vault.restore(['/src'], dest, { overwrite: true });
    expect(overwritten).toMatchObject({ filesRestored: COUNT, problems: [] });
    restored = await treeBytes(join(dest, 'src'));
    for (const [path, bytes] of Object.entries(files))
      expect(restored.get(path)?.equals(bytes), path).toBe(true);
    expect([...restored.keys()].filter(isTemp)).toEqual([]);
  });

  it('does not clobber a file that appears at a target while the batch is out', async () => {
    const { vault, files } = await vaultOfSmallFiles();
    const dest = tempDir();
    await vault.restore(['/src'], dest);
    // The folders stay (so publishing must not clobber), the files go.
    for (const path of Object.keys(files)) unlinkSync(join(dest, 'src', path));
    const late = `d0/${fileName(0)}`;
    const lateTarget = join(dest, 'src', late);
    const mine = Buffer.from('written by someone else meanwhile');
    let written = false;
    const report = await vault.restore(['/src'], dest, {
      onProgress: (progress) => {
        // By the time d0's tenth file is current, its first one is queued but not yet published.
        if (!written && progress.current === `/src/d0/${fileName(70)}`) {
          writeFileSync(lateTarget, mine);
          written = true;
        }
      },
    });
    expect(written).toBe(true);
    expect(report.filesRestored).toBe(COUNT - 1);
    expect(report.problems).toEqual([
      expect.objectContaining({ path: `/src/${late}`, code: 'ALREADY_EXISTS' }),
    ]);
    const restored = await treeBytes(join(dest, 'src'));
    expect(restored.get(late)?.equals(mine)).toBe(true);
    expect([...restored.keys()].filter(isTemp)).toEqual([]);
  });

  it('reports a damaged blob, restores the rest, and writes nothing for the damaged one', async () => {
    const { vault, dir, files } = await vaultOfSmallFiles();
    vault.close();
    const db = new Database(join(dir, 'index.sqlite'));
    const row = db
      .prepare('SELECT pack_id, pack_offset FROM contents WHERE pack_length > 1000 LIMIT 1 OFFSET 200')
      .get() as { pack_id: Buffer; pack_offset: number };
    db.close();
    const pack = join(dir, 'packs', `${row.pack_id.toString('hex')}.pack`);
    const bytes = readFileSync(pack);
    bytes.writeUInt8(bytes.readUInt8(row.pack_offset + 500) ^ 1, row.pack_offset + 500);
    writeFileSync(pack, bytes);
    const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
    await reopened.unlock(passphrase());

    const dest = tempDir();
    const report = await reopened.restore(['/src'], dest);
    expect(report.filesRestored).toBe(COUNT - 1);
    expect(report.problems).toEqual([expect.objectContaining({ code: 'INTEGRITY' })]);
    const damaged = (report.problems[0]?.path ?? '').replace(/^\/src\//, '');
    expect(Object.keys(files)).toContain(damaged);
    const restored = await treeBytes(join(dest, 'src'));
    expect(restored.has(damaged)).toBe(false);
    expect(restored.size).toBe(COUNT - 1);
    expect([...restored.keys()].filter(isTemp)).toEqual([]);
  });

  /**
   * Restores /src and cancels once `stopAt` says so; checks it ended as cancelled, left no temp file and only
   * complete files, and returns those.
   */
  async function cancelledRestore(stopAt: (filesDone: number) => boolean): Promise<Map<string, Buffer>> {
    const { vault, files } = await vaultOfSmallFiles();
    const dest = tempDir();
    const controller = new AbortController();
    await expect(
      vault.restore(['/src'], dest, {
        signal: controller.signal,
        onProgress: (progress) => {
          if (stopAt(progress.filesDone)) controller.abort();
        },
      }),
    ).rejects.toBeInstanceOf(CancelledError);
    const restored = await treeBytes(join(dest, 'src'));
    expect([...restored.keys()].filter(isTemp)).toEqual([]);
    for (const [path, bytes] of restored)
      expect(bytes.equals(files[path] ?? Buffer.alloc(1)), path).toBe(true);
    return restored;
  }

  it('cancelled midway leaves only complete files and no temp file', async () => {
    // At the first batch back: the batches already out still complete, the files not yet sent do not.
    const restored = await cancelledRestore((filesDone) => filesDone > 0);
    expect(restored.size).toBeGreaterThan(0);
    expect(restored.size).toBeLessThan(COUNT);
  });

  it('cancelled while its last batches are out still ends as cancelled, with only complete files', async () => {
    await cancelledRestore((filesDone) => filesDone >= COUNT - 100);
  });

  it.skipIf(!canMount)('onto a full disk fails with IoError and leaves no temp file', async () => {
    const { vault, files } = await vaultOfSmallFiles();
    const dest = mountTmpfs(1024 * 1024);
    await expect(vault.restore(['/src'], dest)).rejects.toBeInstanceOf(IoError);
    const restored = await treeBytes(dest);
    expect([...restored.keys()].filter(isTemp)).toEqual([]);
    for (const [path, bytes] of restored) {
      expect(bytes.equals(files[path.replace(/^src\//, '')] ?? Buffer.alloc(1)), path).toBe(true);
    }
    expect(existsSync(dest)).toBe(true);
  });
  if (!canMount)
    announceSkip(
      'restoring many small files onto a full disk',
      mountUnavailableReason ?? 'mount unavailable',
    );
});

/** The index of a file in folder `d{folder}` near the end of the add, so it is read well after planning. */
function c(folder: number): number {
  return COUNT - 7 + folder - ((COUNT - 7) % 7);
}
