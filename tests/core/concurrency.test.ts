import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it, vi } from 'vitest';

import {
  BusyError,
  CancelledError,
  IoError,
  NotFoundError,
  Vault,
  VaultLockedError,
  type VaultEntry,
} from '../../src/core/index.js';
import { IndexDb } from '../../src/core/vault/index-db.js';
import { nativeSodium } from '../helpers/backends.js';
import { collect, leftBehind, newVault, passphrase, writeTree } from '../helpers/vault.js';
import { WAIT_FOR_IO } from '../helpers/wait.js';

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

/**
 * An add's progress, to wait until it has taken `count` files: the small ones it holds uncommitted while it waits
 * for the bytes of the next are not listed yet.
 */
function filesTaken() {
  let filesDone = 0;
  return {
    onProgress: (progress: { filesDone: number }): void => {
      filesDone = progress.filesDone;
    },
    reached: (count: number) =>
      vi.waitFor(() => {
        expect(filesDone).toBe(count);
      }, WAIT_FOR_IO),
  };
}

/** A dropped file's bytes that stop after `before` until released: an add of dropped files waits there. */
function heldBytes(
  before: Buffer,
  after: Buffer,
): { bytes: AsyncGenerator<Uint8Array>; release: () => void } {
  let release = (): void => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  async function* bytes(): AsyncGenerator<Uint8Array> {
    if (before.length > 0) yield before;
    await held;
    yield after;
  }
  return {
    bytes: bytes(),
    release: () => {
      release();
    },
  };
}

/** A file dropped from a page (no path on disk), holding `text`. */
function one(name: string, text: string) {
  return { name, size: text.length, mtime: 1_000, bytes: Buffer.from(text) };
}

/** `count` dropped files named `f${from}.bin`, `f${from + 1}.bin`, ..., each filled with `tag`. */
function numbered(count: number, tag: number, from = 0) {
  return Array.from({ length: count }, (_, index) => {
    const i = from + index;
    const bytes = Buffer.alloc(100 + (i % 50), tag);
    return { name: `f${i}.bin`, size: bytes.length, mtime: 1_000, bytes };
  });
}

/** The vault's pack files. */
function packFiles(dir: string): string[] {
  return readdirSync(join(dir, 'packs'));
}

/** A read stream of `path` that has begun (a running read) and is paused. */
async function pausedRead(vault: Vault, path: string) {
  const stream = vault.read(path);
  await new Promise((resolve) => stream.once('data', resolve));
  stream.pause();
  return stream;
}

/**
 * A vault of a large file and `count` small ones (f0.bin, ... filled with 1), with a read of the large one begun
 * and paused, so that an add's end meets a running read; and the packs the small ones are in.
 */
async function smallFilesBesideRead(count: number) {
  const { vault, dir, root, source } = await vaultWith({
    big: { 'big.bin': Buffer.alloc(8 * 1024 * 1024, 7) },
  });
  await vault.add([source('big')]);
  await vault.addStreams(numbered(count, 1), '/');
  const oldPacks = packFiles(dir);
  const reading = await pausedRead(vault, '/big/big.bin');
  return { vault, dir, root, oldPacks, reading };
}

/**
 * Starts an add replacing `files` that holds them uncommitted (behind a dropped file whose bytes wait) until
 * `commit`: a change made at once then has it commit them, and the held file arrives so that it ends.
 */
async function holdReplacing(vault: Vault, files: ReturnType<typeof numbered>) {
  const held = heldBytes(Buffer.alloc(0), Buffer.from('slow'));
  const taken = filesTaken();
  const adding = vault.addStreams(
    [...files, { name: 'slow.txt', size: 4, mtime: 1_000, bytes: held.bytes }],
    '/',
    { onExisting: 'replace', onProgress: taken.onProgress },
  );
  await taken.reached(files.length);
  const commit = (): void => {
    vault.mkdir('/made while restoring');
    held.release();
  };
  return { adding, commit };
}

/**
 * Restores the whole vault to `root`/out while an add replaces `files`: the add holds them until the restore has
 * chosen every file and restored its first; then it commits them (deleting the replaced files' rows under the
 * restore) and ends, and `alsoThen` runs.
 */
async function restoreAcrossReplace(
  vault: Vault,
  root: string,
  files: ReturnType<typeof numbered>,
  alsoThen: () => void = () => undefined,
) {
  const { adding, commit } = await holdReplacing(vault, files);
  let restored = 0;
  const out = join(root, 'out');
  const report = await vault.restore(['/'], out, {
    onRestored: () => {
      if (++restored > 1) return;
      commit();
      alsoThen();
    },
  });
  return { report, out, adding };
}

/**
 * After a restore across adds that replaced `chosen`: each was restored as it was chosen; once the add ended, the
 * packs they were in are gone; nothing is damaged.
 */
async function expectChosenRestoredThenFreed(
  at: { vault: Vault; dir: string; out: string; oldPacks: readonly string[]; adding: Promise<unknown> },
  chosen: ReturnType<typeof numbered>,
) {
  for (const { name, bytes } of chosen) expect(readFileSync(join(at.out, name)).equals(bytes)).toBe(true);
  await at.adding;
  await vi.waitFor(() => {
    expect(packFiles(at.dir).filter((name) => at.oldPacks.includes(name))).toEqual([]);
  }, WAIT_FOR_IO);
  expect((await at.vault.verify({ readData: true })).problems).toEqual([]);
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

  it('creates, renames and moves while an add runs, entries it has not committed yet too, keeping every file', async () => {
    const { vault, dir, source } = await vaultWith({ src: smallFiles(300, 4) });
    vault.mkdir('/keep');
    const reported = new Set<string>();
    const seen: { hidden?: boolean; committedByTheChange?: boolean } = {};
    // After 100 files the add is past d0 (75 files) and has put d1 in the tree; it commits nothing before its end
    // unless asked (all of this is one batch).
    const report = await vault.add([source('src')], '/', {
      onAdded: (entry) => reported.add(entry.path),
      onProgress: (progress) => {
        if (seen.hidden !== undefined || progress.filesDone < 100) return;
        // Not in the vault until committed: not listed, yet a change that names it has the add commit it first.
        seen.hidden = !vault.list('/').some((entry) => entry.name === 'src') && !reported.has('/src/d1');
        vault.rename('/src/d1', 'one');
        seen.committedByTheChange = reported.has('/src/d1');
        vault.rename('/src/d0/f0.bin', 'zero.bin');
        vault.mkdir('/src/d0/made/deeper');
        vault.move(['/keep'], '/src/d2');
      },
    });
    expect(seen).toEqual({ hidden: true, committedByTheChange: true });
    expect(report).toMatchObject({ filesAdded: 300, problems: [] });
    const expectTree = (opened: Vault): void => {
      expect(filesUnder(opened, '/src')).toHaveLength(300);
      expect(opened.list('/src').map((entry) => entry.name)).toEqual(['d0', 'd2', 'd3', 'one']);
      // d1's files added after the rename went into it all the same.
      expect(filesUnder(opened, '/src/one')).toHaveLength(75);
      expect(opened.stat('/src/d0/zero.bin').size).toBe(500);
      expect(opened.stat('/src/d0/made/deeper').type).toBe('folder');
      expect(opened.stat('/src/d2/keep').type).toBe('folder');
    };
    expectTree(vault);
    expect((await vault.verify({ readData: true })).problems).toEqual([]);
    vault.close();
    const reopened = await Vault.open(dir, { sodium: nativeSodium });
    try {
      await reopened.unlock(passphrase());
      expectTree(reopened);
    } finally {
      reopened.close();
    }
  });

  it('shows, reads and restores a file an add is replacing until the replacement is committed', async () => {
    const { vault, root } = await newVault();
    await vault.addStreams([one('f.txt', 'old'), one('g.txt', 'gee')], '/');
    const text = async (path: string): Promise<string> => (await collect(vault.read(path))).toString();
    const replacing = (signal?: AbortSignal) => {
      const held = heldBytes(Buffer.alloc(0), Buffer.from('slow'));
      const taken = filesTaken();
      const adding = vault.addStreams(
        [one('f.txt', 'new'), { name: 'slow.txt', size: 4, mtime: 1_000, bytes: held.bytes }],
        '/',
        { onExisting: 'replace', onProgress: taken.onProgress, ...(signal ? { signal } : {}) },
      );
      return { adding, release: held.release, taken };
    };

    // Cancelled while it holds the new f.txt: the old one was there all along, and stays.
    const controller = new AbortController();
    const first = replacing(controller.signal);
    await first.taken.reached(1);
    expect(vault.list('/').map((entry) => entry.name)).toEqual(['f.txt', 'g.txt']);
    expect(await text('/f.txt')).toBe('old');
    expect(vault.search('f.txt').map((entry) => entry.path)).toEqual(['/f.txt']);
    await expect(vault.info()).resolves.toMatchObject({ files: 2 });
    const out = join(root, 'out');
    expect(await vault.restore(['/'], out)).toMatchObject({ filesRestored: 2, problems: [] });
    expect(readFileSync(join(out, 'f.txt'), 'utf8')).toBe('old');
    controller.abort();
    first.release();
    await expect(first.adding).rejects.toBeInstanceOf(CancelledError);
    expect(vault.list('/').map((entry) => entry.name)).toEqual(['f.txt', 'g.txt']);
    expect(await text('/f.txt')).toBe('old');

    // Let through: the new f.txt takes its place once committed, and the old one is gone.
    const second = replacing();
    await second.taken.reached(1);
    expect(await text('/f.txt')).toBe('old');
    second.release();
    expect(await second.adding).toMatchObject({ filesAdded: 2, replaced: 1, problems: [] });
    expect(vault.list('/').map((entry) => entry.name)).toEqual(['f.txt', 'g.txt', 'slow.txt']);
    expect(await text('/f.txt')).toBe('new');
    await expect(vault.info()).resolves.toMatchObject({ files: 3 });
    expect((await vault.verify({ readData: true })).problems).toEqual([]);
  });

  it('restores the files it chose as they were when an add replaces them midway, and the add frees their space only after the reads', async () => {
    // Under the 1,000 rows at which the add commits by itself; over the 3 batches of 128 the restore hands its
    // workers at once, so it opens small files after the commit whichever file it restores first.
    const count = 600;
    const { vault, dir, root, oldPacks, reading } = await smallFilesBesideRead(count);
    const { report, out, adding } = await restoreAcrossReplace(vault, root, numbered(count, 2));
    expect(report).toMatchObject({ filesRestored: count + 1, problems: [] });
    for (const { name, bytes } of numbered(count, 1))
      expect(readFileSync(join(out, name)).equals(bytes)).toBe(true);

    // The add ended while a read still ran; the space of what it replaced waits for that read, and nothing asked
    // for since waits for it.
    expect(await adding).toMatchObject({ filesAdded: count + 1, replaced: count, problems: [] });
    expect(packFiles(dir)).toEqual(expect.arrayContaining(oldPacks));
    expect((await collect(vault.read('/f1.bin'))).equals(Buffer.alloc(101, 2))).toBe(true);
    await vault.addStreams([one('later.txt', 'later')], '/');
    expect(packFiles(dir)).toEqual(expect.arrayContaining(oldPacks));
    reading.destroy();
    await vi.waitFor(() => {
      expect(packFiles(dir).filter((name) => oldPacks.includes(name))).toEqual([]);
    }, WAIT_FOR_IO);
    expect((await collect(vault.read('/f0.bin'))).equals(Buffer.alloc(100, 2))).toBe(true);
    expect((await vault.verify({ readData: true })).problems).toEqual([]);
  });

  it('leaves the space an add freed while a read ran to the next open when locked before the read ended', async () => {
    const { vault, dir, oldPacks, reading } = await smallFilesBesideRead(10);
    await vault.addStreams(numbered(10, 2), '/', { onExisting: 'replace' });
    expect(packFiles(dir)).toEqual(expect.arrayContaining(oldPacks));
    const stopped = new Promise((resolve) => reading.once('error', resolve));
    vault.close();
    expect(await stopped).toBeInstanceOf(CancelledError);
    await vault.released();

    const reopened = await Vault.open(dir, { sodium: nativeSodium });
    try {
      expect(packFiles(dir).filter((name) => oldPacks.includes(name))).toEqual([]);
      await reopened.unlock(passphrase());
      expect((await collect(reopened.read('/f3.bin'))).equals(Buffer.alloc(103, 2))).toBe(true);
      expect((await reopened.verify({ readData: true })).problems).toEqual([]);
    } finally {
      reopened.close();
    }
  });

  it('compacts the packs an add left half used once the reads running at its end are over, when the vault is free', async () => {
    const { vault, dir, source } = await vaultWith({ big: { 'big.bin': Buffer.alloc(8 * 1024 * 1024, 7) } });
    await vault.add([source('big')]);
    await vault.addStreams(numbered(10, 1), '/');
    const [oldPack] = packFiles(dir);
    const reading = await pausedRead(vault, '/big/big.bin');
    await vault.addStreams(numbered(8, 2), '/', { onExisting: 'replace' });
    expect(packFiles(dir)).toContain(oldPack);
    reading.destroy();
    // Its two live files are moved to a new pack, and the old one goes.
    await vi.waitFor(() => {
      expect(packFiles(dir)).not.toContain(oldPack);
    }, WAIT_FOR_IO);
    expect(packFiles(dir)).toHaveLength(2);
    expect((await collect(vault.read('/f9.bin'))).equals(Buffer.alloc(109, 1))).toBe(true);
    expect((await vault.verify({ readData: true })).problems).toEqual([]);
  });

  it.each([
    // As it looks at the first intent; as it turns to the second pack (the first compacted).
    ['removes the files no row names', 'names', 1, 0],
    ['compacts the packs left half used', 'packContents', 2, 1],
  ] as const)(
    'a lock while an add that replaced files %s leaves nothing half done: the next open reads every file, and verify reclaims the rest',
    async (_, lockAt, lockAtCall, compacted) => {
      const { vault, dir } = await newVault();
      await vault.addStreams(numbered(5, 1, 30), '/');
      const [emptied] = packFiles(dir);
      const halfUsed: string[] = [];
      for (const from of [0, 10, 20]) {
        await vault.addStreams(numbered(10, 1, from), '/');
        halfUsed.push(...packFiles(dir).filter((name) => name !== emptied && !halfUsed.includes(name)));
      }
      expect(halfUsed).toHaveLength(3);
      let calls = 0;
      // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with the spied-on index as `this`
      const original = IndexDb.prototype[lockAt] as (this: IndexDb, ...args: never[]) => unknown;
      const step = vi.spyOn(IndexDb.prototype, lockAt).mockImplementation(function (
        this: IndexDb,
        ...args: unknown[]
      ) {
        if (++calls === lockAtCall) vault.lock();
        return original.apply(this, args as never[]) as never;
      });
      try {
        const replaced = [
          ...numbered(8, 2, 0),
          ...numbered(8, 2, 10),
          ...numbered(8, 2, 20),
          ...numbered(5, 2, 30),
        ];
        expect(await vault.addStreams(replaced, '/', { onExisting: 'replace' })).toMatchObject({
          replaced: 29,
        });
        expect(calls).toBeGreaterThanOrEqual(lockAtCall);
        await vault.released();
      } finally {
        step.mockRestore();
      }
      // What had begun was finished and made durable; what had not was left for later, with nothing half done.
      expect(packFiles(dir)).not.toContain(emptied);
      expect(halfUsed.filter((name) => !packFiles(dir).includes(name))).toHaveLength(compacted);
      vault.close();
      await vault.released();
      expect(leftBehind(dir)).toEqual({ files: [], intents: 0 });

      const reopened = await Vault.open(dir, { sodium: nativeSodium });
      try {
        await reopened.unlock(passphrase());
        for (const { name, bytes } of [...numbered(30, 1), ...numbered(5, 1, 30)]) {
          const i = Number(name.slice(1, -4));
          const kept = i < 30 && i % 10 >= 8;
          const expected = kept ? bytes : Buffer.alloc(bytes.length, 2);
          expect((await collect(reopened.read(`/${name}`))).equals(expected), name).toBe(true);
        }
        expect((await reopened.verify({ readData: true })).problems).toEqual([]);
        expect(halfUsed.filter((name) => packFiles(dir).includes(name))).toEqual([]);
      } finally {
        reopened.close();
      }
    },
  );

  it('frees the space of what an add replaced at its end, beside the add that waited for it, and leaves compaction to verify', async () => {
    const { vault, dir } = await newVault();
    await vault.addStreams(numbered(5, 1), '/');
    const [emptied] = packFiles(dir);
    await vault.addStreams(numbered(10, 1, 10), '/');
    const [halfUsed] = packFiles(dir).filter((name) => name !== emptied);
    const replacing = vault.addStreams([...numbered(5, 2), ...numbered(8, 2, 10)], '/', {
      onExisting: 'replace',
    });
    const held = heldBytes(Buffer.alloc(0), Buffer.from('slow'));
    const next = vault.addStreams([{ name: 'slow.txt', size: 4, mtime: 1_000, bytes: held.bytes }], '/');
    await replacing;
    // The pack no row names is gone; the one left with two live files waits, as the vault was not free.
    expect(packFiles(dir)).not.toContain(emptied);
    expect(packFiles(dir)).toContain(halfUsed);
    expect((await collect(vault.read('/f1.bin'))).equals(Buffer.alloc(101, 2))).toBe(true);
    held.release();
    await next;
    expect(packFiles(dir)).toContain(halfUsed);
    expect((await vault.verify({ readData: true })).problems).toEqual([]);
    expect(packFiles(dir)).not.toContain(halfUsed);
    expect((await collect(vault.read('/f19.bin'))).equals(Buffer.alloc(119, 1))).toBe(true);
  });

  it('keeps a pack a later add still holds replaced files in for a restore, when an earlier add frees its space', async () => {
    const count = 600;
    const { vault, dir, root, oldPacks, reading } = await smallFilesBesideRead(count);
    // The first add replaces f0; the space it frees waits for the paused read.
    await vault.addStreams(numbered(1, 2), '/', { onExisting: 'replace' });
    // The second replaces the rest of the same packs under a restore that chose them; the paused read ends then, so
    // the first's turn to free space comes while the restore still reads them.
    const { report, out, adding } = await restoreAcrossReplace(vault, root, numbered(count - 1, 3, 1), () => {
      reading.destroy();
    });
    expect(report).toMatchObject({ filesRestored: count + 1, problems: [] });
    await expectChosenRestoredThenFreed({ vault, dir, out, oldPacks, adding }, numbered(count - 1, 1, 1));
  });

  it('keeps a pack a later add commits replaced files in while an earlier add is freeing space', async () => {
    const count = 600;
    const { vault, dir, root, oldPacks, reading } = await smallFilesBesideRead(count);
    const large = (tag: number) => ({
      name: 'x.bin',
      size: 2 << 20,
      mtime: 1_000,
      bytes: Buffer.alloc(2 << 20, tag),
    });
    await vault.addStreams([large(1)], '/');
    // The first add replaces a large file (its blob file's removal comes before the packs') and f0; the space it
    // frees waits for the paused read.
    await vault.addStreams([large(2), ...numbered(1, 2)], '/', { onExisting: 'replace' });
    const { adding, commit } = await holdReplacing(vault, numbered(count - 1, 3, 1));
    // The second add commits the rest of the same packs, under the restore that chose them, just as the first's
    // removal reaches the large file: between two of its steps.
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with the spied-on index as `this`
    const looks = IndexDb.prototype.names;
    const namesSpy = vi.spyOn(IndexDb.prototype, 'names').mockImplementation(function (
      this: IndexDb,
      intent,
    ) {
      if (intent.kind === 'blob' && namesSpy.mock.calls.length === 1) commit();
      return looks.call(this, intent);
    });
    let restored = 0;
    const out = join(root, 'out');
    const report = await vault.restore(['/'], out, {
      onRestored: () => {
        if (++restored === 1) reading.destroy();
      },
    });
    namesSpy.mockRestore();
    expect(report).toMatchObject({ filesRestored: count + 2, problems: [] });
    await expectChosenRestoredThenFreed({ vault, dir, out, oldPacks, adding }, numbered(count - 1, 1, 1));
  });

  it('ends an add that replaced files before a delete or verify queued behind it', async () => {
    const { vault, dir } = await newVault();
    await vault.addStreams(numbered(10, 1), '/');
    const oldPacks = packFiles(dir);
    const held = heldBytes(Buffer.alloc(0), Buffer.from('slow'));
    const taken = filesTaken();
    const ended: string[] = [];
    const adding = vault
      .addStreams([...numbered(10, 2), { name: 'slow.txt', size: 4, mtime: 1_000, bytes: held.bytes }], '/', {
        onExisting: 'replace',
        onProgress: taken.onProgress,
      })
      .then(() => ended.push('add'));
    await taken.reached(10);
    const verifying = vault.verify({ readData: true }).then((report) => {
      ended.push('verify');
      return report;
    });
    held.release();
    await adding;
    expect((await verifying).problems).toEqual([]);
    expect(ended).toEqual(['add', 'verify']);
    // Its space was freed after the verify.
    await vi.waitFor(() => {
      expect(packFiles(dir).filter((name) => oldPacks.includes(name))).toEqual([]);
    }, WAIT_FOR_IO);
  });

  it('reads a stream asked for before a re-encryption moved its contents, whole and in ranges', async () => {
    const { vault } = await newVault();
    const large = Buffer.alloc(3 << 20, 9);
    await vault.addStreams(
      [one('f.txt', 'small'), { name: 'big.bin', size: large.length, mtime: 1_000, bytes: large }],
      '/',
    );
    const small = vault.read('/f.txt');
    const range = vault.read('/big.bin', { start: 10, end: 20 });
    expect(await vault.reencrypt()).toMatchObject({ filesReencrypted: 2, problems: [] });
    expect((await collect(small)).toString()).toBe('small');
    expect((await collect(range)).equals(large.subarray(10, 21))).toBe(true);
  });

  it('fails a read stream asked for before its file was replaced or deleted as not found, not as damage', async () => {
    const { vault } = await newVault();
    await vault.addStreams([one('f.txt', 'old'), one('g.txt', 'gee')], '/');
    const replaced = vault.read('/f.txt');
    await vault.addStreams([one('f.txt', 'new')], '/', { onExisting: 'replace' });
    await expect(collect(replaced)).rejects.toBeInstanceOf(NotFoundError);
    expect((await collect(vault.read('/f.txt'))).toString()).toBe('new');
    const deleted = vault.read('/g.txt');
    await vault.remove(['/g.txt']);
    await expect(collect(deleted)).rejects.toThrow(
      '"/g.txt" was deleted or replaced after it was opened, so it was not read.',
    );
  });

  it('renames and moves files an add of dropped files holds uncommitted while it waits for the next one', async () => {
    const { vault, root } = await newVault();
    const { bytes: slowBytes, release } = heldBytes(Buffer.alloc(0), Buffer.alloc(100, 3));
    const reported: string[] = [];
    const taken = filesTaken();
    const adding = vault.addStreams(
      [
        { name: 'a.txt', size: 10, mtime: 1_000, bytes: Buffer.alloc(10, 1) },
        { name: 'b.txt', size: 20, mtime: 1_000, bytes: Buffer.alloc(20, 2) },
        { name: 'slow.txt', size: 100, mtime: 1_000, bytes: slowBytes },
      ],
      '/',
      { onAdded: (entry) => reported.push(entry.path), onProgress: taken.onProgress },
    );
    await taken.reached(2);
    expect(reported).toEqual([]);
    // Held for one pack with later files, they are not in the vault yet: not listed, found or readable.
    expect(vault.list('/')).toEqual([]);
    expect(vault.search('txt')).toEqual([]);
    expect(() => vault.stat('/a.txt')).toThrow(NotFoundError);
    await expect(vault.info()).resolves.toMatchObject({ files: 0 });
    expect(() => vault.read('/a.txt')).toThrow(NotFoundError);
    // A restore beside the add restores what is in the vault, and finds nothing missing.
    expect(await vault.restore(['/'], join(root, 'out'))).toMatchObject({ filesRestored: 0, problems: [] });
    vault.rename('/a.txt', 'first.txt');
    vault.mkdir('/box');
    vault.move(['/b.txt'], '/box');
    expect(reported).toEqual(['/a.txt', '/b.txt']);
    release();
    expect(await adding).toMatchObject({ filesAdded: 3, problems: [] });
    expect(vault.listRecursive('/').map((entry) => entry.path)).toEqual([
      '/box',
      '/box/b.txt',
      '/first.txt',
      '/slow.txt',
    ]);
    expect(await collect(vault.read('/first.txt'))).toEqual(Buffer.alloc(10, 1));
    expect((await vault.verify({ readData: true })).problems).toEqual([]);
  });

  it('refuses a change made at once while a cancelled add is ending, and allows it once it has', async () => {
    const { vault, source } = await vaultWith({ src: smallFiles(300, 8) });
    const controller = new AbortController();
    let refusal: unknown;
    const adding = vault.add([source('src')], '/', {
      signal: controller.signal,
      onProgress: (progress) => {
        if (refusal !== undefined || progress.filesDone < 50) return;
        controller.abort();
        try {
          vault.mkdir('/new');
          refusal = 'allowed';
        } catch (error) {
          refusal = error;
        }
      },
    });
    await expect(adding).rejects.toBeInstanceOf(CancelledError);
    expect(refusal).toEqual(new BusyError('ending an add', 'Try again in a moment.'));
    vault.mkdir('/new');
    expect(vault.listRecursive('/').map((entry) => entry.path)).toEqual(['/new']);
    expect((await vault.verify()).problems).toEqual([]);
  });

  it('replaces none of the files renamed or moved into its names while it runs, as "replace" was not asked of them', async () => {
    const { vault } = await newVault();
    vault.mkdir('/inbox');
    await vault.addStreams(
      [
        { name: 'report.txt', size: 5, mtime: 1_000, bytes: Buffer.from('MINE!') },
        { name: 'asked.txt', size: 3, mtime: 1_000, bytes: Buffer.from('old') },
      ],
      '/',
    );
    vault.move(['/asked.txt'], '/inbox');
    const { bytes: slowBytes, release } = heldBytes(Buffer.alloc(0), Buffer.from('slow'));
    const taken = filesTaken();
    const adding = vault.addStreams(
      [
        { name: 'first.txt', size: 3, mtime: 2_000, bytes: Buffer.from('one') },
        { name: 'slow.txt', size: 4, mtime: 2_000, bytes: slowBytes },
        { name: 'report.txt', size: 3, mtime: 2_000, bytes: Buffer.from('new') },
        { name: 'asked.txt', size: 3, mtime: 2_000, bytes: Buffer.from('new') },
      ],
      '/inbox',
      { onExisting: 'replace', onProgress: taken.onProgress },
    );
    await taken.reached(1);
    // Moved, not renamed, into its way.
    vault.move(['/report.txt'], '/inbox');
    // Its destination renamed: what was in it when the add asked is still replaced.
    vault.rename('/inbox', 'Inbox 2024');
    release();
    expect(await adding).toMatchObject({ filesAdded: 4, replaced: 1, problems: [] });
    const text = async (path: string): Promise<string> => (await collect(vault.read(path))).toString();
    expect(vault.list('/Inbox 2024').map((entry) => entry.name)).toEqual([
      'asked.txt',
      'first.txt',
      'report (2).txt',
      'report.txt',
      'slow.txt',
    ]);
    expect(await text('/Inbox 2024/report.txt')).toBe('MINE!');
    expect(await text('/Inbox 2024/report (2).txt')).toBe('new');
    expect(await text('/Inbox 2024/asked.txt')).toBe('new');
    expect((await vault.verify({ readData: true })).problems).toEqual([]);
  });

  it('replaces nothing in a folder moved into its way while it runs', async () => {
    const { vault, root, source } = await vaultWith({ many: smallFiles(300, 9) });
    await writeTree(join(root, 'docs'), { 'report.txt': 'new' });
    // Renamed as the add reports its first progress, before it makes its own docs folder.
    await vault.addStreams([{ name: 'report.txt', size: 5, mtime: 1_000, bytes: Buffer.from('MINE!') }], '/');
    vault.mkdir('/old-docs');
    vault.move(['/report.txt'], '/old-docs');
    let moved = false;
    const report = await vault.add([source('many'), join(root, 'docs')], '/', {
      onExisting: 'replace',
      onProgress: (progress) => {
        if (moved) return;
        expect(progress.filesDone).toBe(0);
        vault.rename('/old-docs', 'docs');
        moved = true;
      },
    });
    expect(moved).toBe(true);
    expect(report).toMatchObject({ filesAdded: 301, replaced: 0, problems: [] });
    expect(vault.list('/docs').map((entry) => entry.name)).toEqual(['report (2).txt', 'report.txt']);
    expect((await collect(vault.read('/docs/report.txt'))).toString()).toBe('MINE!');
  });

  it('an add and a restore that wait their turn get what they were given, renamed meanwhile', async () => {
    const { vault, root, source } = await vaultWith({
      a: smallFiles(300, 10),
      b: { 'b.txt': Buffer.from('bee') },
    });
    vault.mkdir('/work');
    vault.mkdir('/archive');
    vault.mkdir('/scratch');
    await vault.addStreams([one('x.txt', 'work')], '/work');
    await vault.addStreams([one('x.txt', 'archive')], '/archive');
    let waiting: Promise<unknown[]> | undefined;
    const restoring: string[] = [];
    await vault.add([source('a')], '/', {
      onProgress: () => {
        if (waiting) return;
        // Behind this add: another add, then a delete (which nothing overtakes), then a restore.
        waiting = Promise.all([
          vault.add([source('b')], '/work'),
          vault.remove(['/scratch']),
          vault.restore(['/work/x.txt'], join(root, 'out'), { onStart: (paths) => restoring.push(...paths) }),
        ]);
        vault.rename('/work', 'old');
        vault.rename('/archive', 'work');
      },
    });
    const [added, removed, restored] = (await waiting) ?? [];
    expect(added).toMatchObject({ filesAdded: 1 });
    expect(removed).toBe(1);
    expect(restored).toMatchObject({ filesRestored: 1 });
    expect(restoring).toEqual(['/old/x.txt']);
    expect(vault.list('/old').map((entry) => entry.name)).toEqual(['b', 'x.txt']);
    expect(vault.list('/work').map((entry) => entry.name)).toEqual(['x.txt']);
    expect(readFileSync(join(root, 'out', 'x.txt'), 'utf8')).toBe('work');
  });

  it('moves a file it has not committed yet into a folder it has not committed yet, as the first change', async () => {
    const { vault, dir, source } = await vaultWith({ src: smallFiles(300, 11) });
    let moved = false;
    await vault.add([source('src')], '/', {
      onProgress: (progress) => {
        if (moved || progress.filesDone < 100) return;
        vault.move(['/src/d0/f0.bin'], '/src/d1');
        moved = true;
      },
    });
    expect(moved).toBe(true);
    expect(filesUnder(vault, '/src')).toHaveLength(300);
    expect(vault.stat('/src/d1/f0.bin').size).toBe(500);
    vault.close();
    const reopened = await Vault.open(dir, { sodium: nativeSodium });
    try {
      await reopened.unlock(passphrase());
      expect(reopened.stat('/src/d1/f0.bin').size).toBe(500);
      expect((await reopened.verify({ readData: true })).problems).toEqual([]);
    } finally {
      reopened.close();
    }
  });

  it('replaces nothing renamed into its way while it waited behind another add', async () => {
    const { vault, source } = await vaultWith({ a: smallFiles(300, 12) });
    await vault.addStreams([one('report.txt', 'asked'), one('notes.txt', 'PRECIOUS')], '/');
    let second: Promise<unknown> | undefined;
    await vault.add([source('a')], '/', {
      onProgress: () => {
        if (second) return;
        second = vault.addStreams([one('report.txt', 'new')], '/', { onExisting: 'replace' });
        vault.rename('/report.txt', 'report-old.txt');
        vault.rename('/notes.txt', 'report.txt');
      },
    });
    expect(await second).toMatchObject({ filesAdded: 1, replaced: 0 });
    const text = async (path: string): Promise<string> => (await collect(vault.read(path))).toString();
    expect(await text('/report.txt')).toBe('PRECIOUS');
    expect(await text('/report (2).txt')).toBe('new');
    expect(await text('/report-old.txt')).toBe('asked');
  });

  it('replaces neither what it kept beside an unasked file, nor, after its own folder was renamed, less than asked', async () => {
    const { vault, root } = await newVault();
    await writeTree(join(root, 'Photos'), { 'a.bin': Buffer.alloc(2 * 1024 * 1024, 1), 'z.txt': 'new z' });
    vault.mkdir('/Photos');
    await vault.addStreams([one('z.txt', 'old z'), one('mine.txt', 'MINE!')], '/Photos');
    const { bytes: slowBytes, release } = heldBytes(Buffer.alloc(0), Buffer.from('slow'));
    const taken = filesTaken();
    // Into the vault's top: "report.txt" is kept beside a file renamed into its way; the literal
    // "report (2).txt" that follows must not replace that numbered one.
    const adding = vault.addStreams(
      [
        one('first.txt', 'one'),
        { name: 'slow.txt', size: 4, mtime: 1_000, bytes: slowBytes },
        one('report.txt', 'new report'),
        one('report (2).txt', 'literal'),
      ],
      '/',
      { onExisting: 'replace', onProgress: taken.onProgress },
    );
    await taken.reached(1);
    vault.rename('/Photos/mine.txt', 'report.txt');
    vault.move(['/Photos/report.txt'], '/');
    release();
    expect(await adding).toMatchObject({ filesAdded: 4, replaced: 0, problems: [] });
    const text = async (path: string): Promise<string> => (await collect(vault.read(path))).toString();
    const reports = vault
      .list('/')
      .filter((entry) => entry.name.startsWith('report'))
      .map((entry) => entry.path);
    expect(reports).toHaveLength(3);
    expect((await Promise.all(reports.map(text))).sort()).toEqual(['MINE!', 'literal', 'new report']);
    expect(await text('/report.txt')).toBe('MINE!');

    // The add's own folder, renamed while it stores a large file: "replace" still replaces what was asked about.
    let renamed = false;
    const report = await vault.add([join(root, 'Photos')], '/', {
      onExisting: 'replace',
      onProgress: (progress) => {
        if (renamed || progress.bytesDone === 0) return;
        vault.rename('/Photos', 'Pictures');
        renamed = true;
      },
    });
    expect(renamed).toBe(true);
    expect(report).toMatchObject({ filesAdded: 2, replaced: 1, problems: [] });
    expect(vault.list('/Pictures').map((entry) => entry.name)).toEqual(['a.bin', 'z.txt']);
    expect(await text('/Pictures/z.txt')).toBe('new z');
  });

  it('reports each committed row under its path as it is then, renamed by an earlier onAdded', async () => {
    const { vault } = await newVault();
    const reported: string[] = [];
    await vault.addStreams([one('a.txt', 'x'), one('b.txt', 'x')], '/', {
      onAdded: (entry) => {
        reported.push(entry.path);
        if (entry.path === '/a.txt') vault.rename('/b.txt', 'bee.txt');
      },
    });
    expect(reported).toEqual(['/a.txt', '/bee.txt']);
  });

  it('fails an add whose commit a rename asked for failed, keeping only what was reported added', async () => {
    const { vault, source } = await vaultWith({ src: smallFiles(300, 5) });
    const reported: string[] = [];
    let renameError: unknown;
    let laterRefusal: unknown;
    // Spied on, it calls through; the commit the rename asks for gets a full disk instead.
    const transaction = vi.spyOn(IndexDb.prototype, 'transaction');
    try {
      const adding = vault.add([source('src')], '/', {
        onAdded: (entry) => reported.push(entry.path),
        onProgress: (progress) => {
          if (renameError !== undefined || progress.filesDone < 100) return;
          transaction.mockImplementationOnce(() => {
            throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC', syscall: 'write' });
          });
          try {
            vault.rename('/src/d1', 'one');
          } catch (error) {
            renameError = error;
          }
          // A second change after it is refused, not a commit of rows whose folders went with the failed one.
          try {
            vault.mkdir('/src/d2/new');
          } catch (error) {
            laterRefusal = error;
          }
        },
      });
      const addError = await adding.catch((error: unknown) => error);
      expect(renameError).toBeInstanceOf(IoError);
      expect(addError).toBe(renameError);
      expect(laterRefusal).toEqual(new BusyError('ending an add', 'Try again in a moment.'));
    } finally {
      transaction.mockRestore();
    }
    expect(reported).toEqual([]);
    expect(vault.list('/')).toEqual([]);
    expect((await vault.verify({ readData: true })).problems).toEqual([]);
  });

  it('stores no large file it was writing when a commit a change asked for failed meanwhile', async () => {
    const { vault, dir } = await newVault();
    const size = 3 * 1024 * 1024;
    const { bytes: slowBytes, release } = heldBytes(Buffer.alloc(size / 2, 7), Buffer.alloc(size / 2, 7));
    const taken = filesTaken();
    const adding = vault
      .addStreams([one('a.txt', 'alpha'), { name: 'big.bin', size, mtime: 1_000, bytes: slowBytes }], '/', {
        onProgress: taken.onProgress,
      })
      .catch((error: unknown) => error);
    await taken.reached(1);
    const transaction = vi.spyOn(IndexDb.prototype, 'transaction').mockImplementationOnce(() => {
      throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC', syscall: 'write' });
    });
    let renameError: unknown;
    try {
      vault.rename('/a.txt', 'first.txt');
    } catch (error) {
      renameError = error;
    } finally {
      transaction.mockRestore();
    }
    release();
    expect(renameError).toBeInstanceOf(IoError);
    expect(await adding).toBe(renameError);
    expect(vault.list('/')).toEqual([]);
    vault.close();
    expect(leftBehind(dir)).toEqual({ files: [], intents: 0 });
  });

  it('deletes what was chosen when the delete waited for an add, even renamed meanwhile', async () => {
    const { vault, source } = await vaultWith({ src: smallFiles(300, 6) });
    vault.mkdir('/chosen');
    vault.mkdir('/other/inside');
    let removing: Promise<number> | undefined;
    await vault.add([source('src')], '/', {
      onProgress: (progress) => {
        if (removing || progress.filesDone < 10) return;
        removing = vault.remove(['/chosen']);
        vault.rename('/chosen', 'renamed');
        vault.rename('/other', 'chosen');
      },
    });
    expect(await removing).toBe(1);
    expect(vault.list('/').map((entry) => entry.name)).toEqual(['chosen', 'src']);
    expect(vault.list('/chosen').map((entry) => entry.name)).toEqual(['inside']);
  });

  it('allows creating, renaming and moving during a restore', async () => {
    const { vault, root, source } = await vaultWith({ src: smallFiles(300, 7) });
    await vault.add([source('src')]);
    vault.mkdir('/keep');
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
