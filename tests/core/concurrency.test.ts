import { readdirSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { BusyError, CancelledError, Vault, VaultLockedError, type VaultEntry } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { collect, newVault, passphrase, writeTree } from '../helpers/vault.js';

// More than one pool batch (256 files to add, 128 to restore), so adds and restores take several turns of the
// event loop.
function smallFiles(count: number, tag: number): Record<string, Buffer> {
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < count; i++)
    files[`d${i % 4}/f${i}.bin`] = Buffer.alloc(500 + ((i * 977) % 20_000), tag);
  return files;
}

async function vaultWith(folders: Record<string, Record<string, Buffer>>) {
  const { vault, dir, root } = await newVault();
  for (const [name, files] of Object.entries(folders)) await writeTree(join(root, name), files);
  return { vault, dir, root, source: (name: string) => join(root, name) };
}

function filesUnder(vault: Vault, folder: string): string[] {
  return vault
    .listRecursive(folder)
    .filter((entry) => entry.type === 'file')
    .map((entry) => entry.path)
    .sort();
}

describe('operations called while others run', () => {
  it('runs a second add after the first, in call order, and both are complete', async () => {
    const { vault, source } = await vaultWith({ a: smallFiles(300, 1), b: smallFiles(300, 2) });
    const events: string[] = [];
    const first = vault.add([source('a')], '/', { onAdded: () => events.push('a') }).then((report) => {
      events.push('a done');
      return report;
    });
    const second = vault.add([source('b')], '/', { onAdded: () => events.push('b') });
    const [reportA, reportB] = await Promise.all([first, second]);
    expect([reportA.filesAdded, reportB.filesAdded]).toEqual([300, 300]);
    expect(events.indexOf('b')).toBeGreaterThan(events.indexOf('a done'));
    expect(filesUnder(vault, '/a')).toHaveLength(300);
    expect(filesUnder(vault, '/b')).toHaveLength(300);
    expect((await vault.verify()).problems).toEqual([]);
  });

  it('lets a delete that compacts packs wait for a restore reading them', async () => {
    const files = smallFiles(300, 3);
    const { vault, root, source } = await vaultWith({ src: files });
    await vault.add([source('src')]);
    const restored: string[] = [];
    const restore = vault.restore(['/src'], join(root, 'out'), {
      onRestored: (entry) => restored.push(entry.path),
    });
    // Deleting most files makes their packs dead or less than half used: removed or compacted.
    const doomed = Object.keys(files)
      .filter((_, i) => i % 5 !== 0)
      .map((path) => `/src/${path}`);
    const remove = vault.remove(doomed).then((count) => ({ count, restoredBefore: restored.length }));
    const report = await restore;
    expect(report.problems).toEqual([]);
    expect(report.filesRestored).toBe(300);
    expect(await remove).toEqual({ count: doomed.length, restoredBefore: 300 });
    expect(filesUnder(vault, '/src')).toHaveLength(60);
    expect((await vault.verify({ readData: true })).problems).toEqual([]);
  });

  it('refuses to create, rename or move while an add runs, and allows them during a restore', async () => {
    const { vault, root, source } = await vaultWith({ src: smallFiles(300, 4) });
    vault.mkdir('/keep');
    const refusals: unknown[] = [];
    await vault.add([source('src')], '/', {
      onAdded: () => {
        if (refusals.length > 0) return;
        for (const change of [
          () => vault.mkdir('/new'),
          () => vault.rename('/keep', 'kept'),
          () => vault.move(['/keep'], '/src'),
        ]) {
          try {
            change();
          } catch (error) {
            refusals.push(error);
          }
        }
      },
    });
    expect(refusals).toHaveLength(3);
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(BusyError);
      expect((refusal as BusyError).message).toContain('adding files');
    }
    expect(vault.list('/').map((entry) => entry.name)).toEqual(['keep', 'src']);

    let renamed: VaultEntry | undefined;
    await vault.restore(['/src'], join(root, 'out'), {
      onRestored: () => {
        renamed ??= vault.rename('/keep', 'kept');
      },
    });
    expect(renamed?.path).toBe('/kept');
  });

  it('cancels an operation waiting for its turn without starting it', async () => {
    const { vault, source } = await vaultWith({ a: smallFiles(300, 5), b: smallFiles(10, 6) });
    const controller = new AbortController();
    const first = vault.add([source('a')], '/', {
      onAdded: () => {
        controller.abort();
      },
    });
    const second = vault.add([source('b')], '/', { signal: controller.signal });
    await expect(second).rejects.toBeInstanceOf(CancelledError);
    expect((await first).filesAdded).toBe(300);
    expect(vault.list('/').map((entry) => entry.name)).toEqual(['a']);
  });

  it('locking during an add stops it, keeps what was reported added, and wipes the keys', async () => {
    // Rows are committed a thousand at a time: locking at the first file reported added leaves most unfinished.
    const { vault, source } = await vaultWith({ src: smallFiles(2500, 7) });
    const added: string[] = [];
    const adding = vault.add([source('src')], '/', {
      onAdded: (entry) => {
        added.push(entry.path);
        if (entry.type === 'file') vault.lock();
      },
    });
    await expect(adding).rejects.toBeInstanceOf(CancelledError);
    expect(vault.locked).toBe(true);
    expect(() => vault.list('/')).toThrow(VaultLockedError);
    await vault.released();
    const addedFiles = added.filter((path) => path.endsWith('.bin'));
    expect(addedFiles.length).toBeGreaterThan(0);
    expect(addedFiles.length).toBeLessThan(2500);

    await vault.unlock(passphrase());
    expect(filesUnder(vault, '/src')).toEqual(addedFiles.sort());
    expect((await vault.verify({ readData: true })).problems).toEqual([]);
  });

  it('closing during a restore stops it, leaves no partial file and releases the vault', async () => {
    const { vault, dir, root, source } = await vaultWith({ src: smallFiles(600, 8) });
    await vault.add([source('src')]);
    const out = join(root, 'out');
    const restoring = vault.restore(['/src'], out, {
      onRestored: () => {
        vault.close();
      },
    });
    await expect(restoring).rejects.toBeInstanceOf(CancelledError);
    await vault.released();
    const leftovers = readdirSync(out, { recursive: true }).filter((name) =>
      String(name).includes('.coffer-'),
    );
    expect(leftovers).toEqual([]);

    const reopened = await Vault.open(dir, { sodium: nativeSodium });
    try {
      await reopened.unlock(passphrase());
      expect((await reopened.verify()).problems).toEqual([]);
    } finally {
      reopened.close();
    }
  });

  it('a delete waits for an open read stream to end or be destroyed, and lock stops one', async () => {
    const big = Buffer.alloc(24 * 1024 * 1024, 9);
    const { vault, source } = await vaultWith({ src: { 'big.bin': big, 'other.bin': big } });
    await vault.add([source('src')]);

    const stream = vault.read('/src/big.bin');
    const firstChunk = await new Promise<Buffer>((resolve) => stream.once('data', resolve));
    stream.pause();
    expect(firstChunk.length).toBeGreaterThan(0);
    let removed = false;
    const remove = vault.remove(['/src/other.bin']).then(() => {
      removed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(removed).toBe(false);
    const rest = await collect(stream);
    expect(Buffer.concat([firstChunk, rest]).equals(big)).toBe(true);
    await remove;
    expect(removed).toBe(true);

    const abandoned = vault.read('/src/big.bin');
    await new Promise((resolve) => abandoned.once('data', resolve));
    abandoned.pause();
    const removeAfterDestroy = vault.remove(['/src/big.bin']);
    abandoned.destroy();
    await removeAfterDestroy;
    expect(vault.list('/src')).toEqual([]);
    await vault.add([join(source('src'), 'big.bin')], '/src');

    const stopped = vault.read('/src/big.bin');
    await new Promise((resolve) => stopped.once('data', resolve));
    vault.lock();
    await expect(collect(stopped)).rejects.toBeInstanceOf(CancelledError);
    await vault.released();
  });
});
