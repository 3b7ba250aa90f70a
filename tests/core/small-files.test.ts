import { statSync, unlinkSync, writeFileSync } from 'node:fs';
import { utimes } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { CancelledError, Vault } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { collect, newVault, passphrase, track, writeTree } from '../helpers/vault.js';

// Enough files that add reads and seals them on the small-file worker thread, in several batches.
const COUNT = 400;

function fileName(i: number): string {
  return `f${String(i).padStart(4, '0')}.bin`;
}

function manySmallFiles(): Record<string, Buffer> {
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < COUNT; i++) {
    // Sizes from empty to exactly one chunk (64 KiB), the largest a small file can be.
    const size = i === 0 ? 0 : i === 1 ? 65_536 : (i * 997) % 20_000;
    files[`d${i % 7}/${fileName(i)}`] = Buffer.alloc(size, i % 251);
  }
  return files;
}

describe('adding many small files (worker thread)', () => {
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
    const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
    await reopened.unlock(passphrase());
    expect(await reopened.verify({ readData: true })).toMatchObject({ ok: true, orphansRemoved: 0 });
  });
});

/** The index of a file in folder `d{folder}` near the end of the add, so it is read well after planning. */
function c(folder: number): number {
  return COUNT - 7 + folder - ((COUNT - 7) % 7);
}
