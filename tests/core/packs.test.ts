import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';

import { blobSize } from '../../src/core/crypto/content.js';
import { blobPlaintextSize } from '../../src/core/crypto/padding.js';
import { editIndex, editIndexAsWriter, toFormat10 } from '../helpers/index-format.js';
import { CryptoPool } from '../../src/core/crypto/pool.js';
import { SMALL_FILE_LIMIT, UnsupportedFormatError, Vault } from '../../src/core/index.js';
import { INDEX_SCHEMA_VERSION } from '../../src/core/vault/index-db.js';
import { PackReader } from '../../src/core/vault/pack-reader.js';
import { nativeSodium } from '../helpers/backends.js';
import { collect, newVault, passphrase, tempDir, track, writeTree } from '../helpers/vault.js';

// More than one pool batch (256 files), so the workers write several packs.
const COUNT = 300;

function smallFiles(count: number, seed = 0): Record<string, Buffer> {
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < count; i++) {
    files[`d${i % 3}/f${String(i).padStart(3, '0')}.bin`] = Buffer.alloc(((i + seed) * 641) % 9000, i % 253);
  }
  return files;
}

function packNames(dir: string): string[] {
  return readdirSync(join(dir, 'packs')).sort();
}

/** Moves a pack out of the vault and leaves a symbolic link to it in its place (never followed, FORMAT.md 8.1). */
function linkInPlaceOf(pack: string): void {
  const moved = join(tempDir(), 'moved.pack');
  copyFileSync(pack, moved);
  rmSync(pack);
  symlinkSync(moved, pack);
}

/** Removes a pack and has `make` make something else at its path. */
function inPlaceOf(make: (pack: string) => unknown): (pack: string) => void {
  return (pack) => {
    rmSync(pack);
    make(pack);
  };
}

/** A new vault's blob for a file of `length` bytes: padded with Padmé by default (FORMAT.md section 5.7). */
function storedSize(length: number): number {
  return blobSize(blobPlaintextSize(length, true));
}

async function reopen(dir: string, readOnly = false): Promise<Vault> {
  const vault = track(await Vault.open(dir, { sodium: nativeSodium, readOnly }));
  await vault.unlock(passphrase());
  return vault;
}

async function expectFiles(vault: Vault, prefix: string, files: Record<string, Buffer>): Promise<void> {
  for (const [path, bytes] of Object.entries(files)) {
    expect((await collect(vault.read(`${prefix}/${path}`))).equals(bytes), path).toBe(true);
  }
}

/** A vault holding `count` small files under /src, added through the worker pool. */
async function vaultWithPacks(count = COUNT) {
  const { vault, dir, root } = await newVault();
  const files = smallFiles(count);
  await writeTree(join(root, 'src'), files);
  await vault.add([join(root, 'src')]);
  return { vault, dir, root, files };
}

/**
 * A closed vault whose one pack holds /src/keep (two small files) and /src/gone (eight larger ones, most of the
 * pack's bytes), so that the pack is compacted once /src/gone is deleted.
 */
async function packToCompact() {
  const { vault, dir, root } = await newVault();
  const keep = { 'a.bin': Buffer.alloc(1000, 1), 'b.bin': Buffer.alloc(1500, 2) };
  const gone = Object.fromEntries(
    Array.from({ length: 8 }, (_, i) => [`g${i}.bin`, Buffer.alloc(3000, 10 + i)]),
  );
  await writeTree(join(root, 'src', 'keep'), keep);
  await writeTree(join(root, 'src', 'gone'), gone);
  await vault.add([join(root, 'src')]);
  vault.close();
  expect(packNames(dir)).toHaveLength(1);
  return { dir, files: { keep, gone } };
}

/** Gives the two kept files' rows (the smallest blobs) each other's place in the pack, as an attacker could. */
function swapKeptPlaces(db: Database.Database): void {
  const [first, second] = db
    .prepare('SELECT file_id, pack_offset, pack_length FROM contents ORDER BY pack_length LIMIT 2')
    .all() as { file_id: Buffer; pack_offset: number; pack_length: number }[];
  if (!first || !second) throw new Error('two rows expected');
  const place = db.prepare('UPDATE contents SET pack_offset = ?, pack_length = ? WHERE file_id = ?');
  place.run(second.pack_offset, second.pack_length, first.file_id);
  place.run(first.pack_offset, first.pack_length, second.file_id);
}

describe('small files in packs', () => {
  it('keeps small files out of the index, in a few packs, with nothing left in tmp/', async () => {
    const { vault, dir, root, files } = await vaultWithPacks();
    // A few files more take the path without workers, packed at commit.
    const few = { 'x.txt': Buffer.from('x'), 'empty.bin': Buffer.alloc(0) };
    await writeTree(join(root, 'few'), few);
    await vault.add([join(root, 'few')]);
    vault.close();

    const stored = [...Object.values(files), ...Object.values(few)].reduce(
      (sum, bytes) => sum + storedSize(bytes.length),
      0,
    );
    const packs = packNames(dir);
    // Two pool batches' packs and the few files' one.
    expect(packs.length).toBeGreaterThanOrEqual(3);
    expect(packs.length).toBeLessThan(10);
    expect(packs.every((name) => /^[0-9a-f]{32}\.pack$/.test(name))).toBe(true);
    const packBytes = packs.reduce((sum, name) => sum + statSync(join(dir, 'packs', name)).size, 0);
    expect(packBytes).toBe(stored);
    const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
    const inIndex = db
      .prepare('SELECT count(*) FROM contents WHERE inline_blob IS NOT NULL OR pack_id IS NULL')
      .pluck()
      .get();
    db.close();
    expect(inIndex).toBe(0);
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);

    const reopened = await reopen(dir);
    await expectFiles(reopened, '/src', files);
    await expectFiles(reopened, '/few', few);
    expect(await reopened.verify({ readData: true })).toMatchObject({ ok: true, unreferenced: [] });
  });

  it('packs small files that sit between large ones together, with and without the worker pool', async () => {
    for (const smallCount of [300, 40]) {
      const { vault, dir, root } = await newVault();
      const files: Record<string, Buffer> = {};
      for (let i = 0; i < smallCount; i++) {
        files[`mixed/f${String(i).padStart(3, '0')}a.bin`] = Buffer.alloc(500 + i, i);
        if (i % 8 === 0)
          files[`mixed/f${String(i).padStart(3, '0')}b.bin`] = Buffer.alloc(SMALL_FILE_LIMIT + 1 + i, i);
      }
      await writeTree(join(root, 'src'), files);
      expect(await vault.add([join(root, 'src', 'mixed')])).toMatchObject({ problems: [] });
      // 300 files make two pool batches; 40 (no pool) make one pack at the end.
      expect(packNames(dir).length).toBe(smallCount === 300 ? 2 : 1);
      await expectFiles(vault, '', files);
    }
  });

  it('stores only one of a large and a small file whose names clash, and leaves no blob behind', async () => {
    const { vault, root } = await newVault();
    const files: Record<string, Buffer> = {};
    // Sorted, these fill one pool batch whose last file is the decomposed name, then comes the large file with
    // the composed name: the batch may be accepted while the large file is written.
    for (let i = 0; i < 255; i++) files[`a${String(i).padStart(3, '0')}.bin`] = Buffer.alloc(100, i);
    files['e\u0301.bin'] = Buffer.from('small, decomposed name');
    files['\u00e9.bin'] = Buffer.alloc(8 * 1024 * 1024, 7);
    await writeTree(join(root, 'src'), files);
    const report = await vault.add([join(root, 'src')]);
    expect(report.filesAdded).toBe(256);
    expect(report.problems).toEqual([expect.objectContaining({ code: 'ALREADY_EXISTS' })]);
    expect(await vault.verify({ readData: true })).toMatchObject({ ok: true, unreferenced: [] });
  });

  it('packs files of several chunks, up to 1 MiB, and restores them through the workers byte for byte', async () => {
    const { vault, dir, root } = await newVault();
    const edges = [
      0,
      1,
      65_535,
      65_536,
      65_537,
      131_072,
      131_073,
      600_000,
      SMALL_FILE_LIMIT - 1,
      SMALL_FILE_LIMIT,
    ];
    // A pattern that does not repeat at chunk boundaries, sliced at a different start for each file.
    const pattern = Buffer.from(Array.from({ length: SMALL_FILE_LIMIT + 256 }, (_, j) => (j * 31) % 251));
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < 200; i++) {
      const size = edges[i % edges.length] ?? 0;
      files[`m${i % 4}/f${String(i).padStart(3, '0')}.bin`] = pattern.subarray(i, i + size);
    }
    await writeTree(join(root, 'src'), files);
    expect(await vault.add([join(root, 'src')])).toMatchObject({ filesAdded: 200, problems: [] });
    expect(readdirSync(join(dir, 'blobs'), { recursive: true }).filter((p) => String(p).length > 2)).toEqual(
      [],
    );

    // Damage the second chunk of one two-chunk file: only that file fails.
    vault.close();
    const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
    const victim = db
      .prepare('SELECT pack_id, pack_offset FROM contents WHERE pack_length = ? LIMIT 1')
      .get(storedSize(65_537)) as { pack_id: Buffer; pack_offset: number };
    db.close();
    const packPath = join(dir, 'packs', `${victim.pack_id.toString('hex')}.pack`);
    const pack = readFileSync(packPath);
    const inSecondChunk = victim.pack_offset + 52 + 65_536 + 16 + 0;
    pack.writeUInt8(pack.readUInt8(inSecondChunk) ^ 1, inSecondChunk);
    writeFileSync(packPath, pack);

    const reopened = await reopen(dir);
    const dest = tempDir();
    const report = await reopened.restore(['/src'], dest);
    expect(report.filesRestored).toBe(199);
    expect(report.problems).toEqual([expect.objectContaining({ code: 'INTEGRITY' })]);
    const damaged = (report.problems[0]?.path ?? '').replace(/^\/src\//, '');
    expect(files[damaged]?.length).toBe(65_537);
    for (const [path, bytes] of Object.entries(files)) {
      if (path === damaged) expect(existsSync(join(dest, 'src', path))).toBe(false);
      else expect(readFileSync(join(dest, 'src', path)).equals(bytes), path).toBe(true);
    }
  });

  it('sends a few files of up to 1 MiB to the workers, not only many files', async () => {
    const seal = vi.spyOn(CryptoPool.prototype, 'sealSmallFiles');
    const open = vi.spyOn(CryptoPool.prototype, 'openSmallFiles');
    try {
      const { vault, root } = await newVault();
      const files: Record<string, Buffer> = {};
      for (let i = 0; i < 10; i++) files[`f${i}.bin`] = Buffer.alloc(SMALL_FILE_LIMIT - i, i);
      await writeTree(join(root, 'few'), files);
      expect(await vault.add([join(root, 'few')])).toMatchObject({ filesAdded: 10, problems: [] });
      expect(seal).toHaveBeenCalled();
      const dest = tempDir();
      expect(await vault.restore(['/few'], dest)).toMatchObject({ filesRestored: 10, problems: [] });
      expect(open).toHaveBeenCalled();
      for (const [name, bytes] of Object.entries(files))
        expect(readFileSync(join(dest, 'few', name)).equals(bytes), name).toBe(true);
    } finally {
      seal.mockRestore();
      open.mockRestore();
    }
  });

  it.each([
    ['removed', rmSync, 'missing'],
    ['a symbolic link', linkInPlaceOf, 'a symbolic link or not a regular file'],
    ['a named pipe', inPlaceOf((pack) => execFileSync('mkfifo', [pack])), 'not a regular file'],
    ['a folder', inPlaceOf(mkdirSync), 'not a regular file'],
  ])(
    'restores the other files when a pack is %s before the workers read it, and says which are damaged',
    async (_, spoil, words) => {
      const { vault, root, dir } = await newVault();
      const sized = (seed: number) =>
        Object.fromEntries(
          Array.from({ length: 6 }, (_, i) => [`f${i}.bin`, Buffer.alloc(SMALL_FILE_LIMIT - i, seed + i)]),
        );
      const spoilt = sized(1);
      const whole = sized(50);
      await writeTree(join(root, 'spoilt'), spoilt);
      await vault.add([join(root, 'spoilt')]);
      const spoiltPacks = packNames(dir).map((name) => join(dir, 'packs', name));
      await writeTree(join(root, 'whole'), whole);
      await vault.add([join(root, 'whole')]);
      // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with the spied-on pool as `this`
      const openSmall = CryptoPool.prototype.openSmallFiles;
      const open = vi.spyOn(CryptoPool.prototype, 'openSmallFiles').mockImplementation(function (
        this: CryptoPool,
        batch,
      ) {
        for (const pack of spoiltPacks) if (existsSync(pack) && lstatSync(pack).isFile()) spoil(pack);
        return openSmall.call(this, batch);
      });
      try {
        const dest = tempDir();
        const result = await vault.restore(['/spoilt', '/whole'], dest);
        expect(open).toHaveBeenCalled();
        expect(result.filesRestored).toBe(6);
        expect(result.problems.map((problem) => problem.path).sort()).toEqual(
          Object.keys(spoilt).map((name) => `/spoilt/${name}`),
        );
        for (const problem of result.problems) {
          expect(problem.code).toBe('INTEGRITY');
          expect(problem.message).toContain(`stored contents of "${problem.path}"`);
          expect(problem.message).toContain(words);
        }
        expect(readdirSync(join(dest, 'spoilt'))).toEqual([]);
        for (const [name, bytes] of Object.entries(whole))
          expect(readFileSync(join(dest, 'whole', name)).equals(bytes), name).toBe(true);
      } finally {
        open.mockRestore();
      }
    },
  );

  it('fails a restore whose workers could not read a pack, saying it was reading, not writing', async () => {
    const { vault, root } = await newVault();
    const files = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [`f${i}.bin`, Buffer.alloc(SMALL_FILE_LIMIT - i, i)]),
    );
    await writeTree(join(root, 'few'), files);
    await vault.add([join(root, 'few')]);
    const open = vi
      .spyOn(CryptoPool.prototype, 'openSmallFiles')
      .mockImplementation((batch) =>
        Promise.resolve(
          batch.temps.map(() => ({ ok: false, pack: { code: 'EIO', syscall: 'read' } }) as const),
        ),
      );
    try {
      await expect(vault.restore(['/few'], tempDir())).rejects.toThrow(
        /^Could not read the stored contents of "\/few\/f\d\.bin": the disk reported an input\/output error/,
      );
      expect(open).toHaveBeenCalled();
    } finally {
      open.mockRestore();
    }
  });

  it('says a pack that fails to read (EIO) is the vault’s side: restore and verify stop, saying so', async () => {
    const { vault, root } = await newVault();
    await writeTree(join(root, 'in'), { 'a.txt': 'in a pack' });
    await vault.add([join(root, 'in', 'a.txt')]);
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with the spied-on reader as `this`
    const source = PackReader.prototype.source;
    const failing = vi.spyOn(PackReader.prototype, 'source').mockImplementation(function (
      this: PackReader,
      blob,
      readError = (error: unknown) => error,
    ) {
      const opened = source.call(this, blob, readError);
      const eio = Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO', syscall: 'read' });
      // As the pack's own read fails: through the caller's readError.
      const readv = () =>
        Promise.resolve().then(() => {
          throw readError(eio);
        });
      return { ...opened, source: { readv } };
    });
    try {
      const words =
        /^Could not read the stored contents of "\/a\.txt": the disk reported an input\/output error/;
      await expect(vault.restore(['/a.txt'], tempDir())).rejects.toThrow(words);
      await expect(vault.verify({ readData: true })).rejects.toThrow(words);
    } finally {
      failing.mockRestore();
    }
  });

  it('reads files from more packs at once than it keeps open, each whole and in ranges', async () => {
    const { vault, dir } = await newVault();
    // One pack each, more than the 16 packs kept open: a pack closed under a reader would give it another's bytes.
    const size = 300 * 1024;
    const count = 24;
    for (let i = 0; i < count; i++)
      await vault.addStreams(
        [{ name: `f${i}.bin`, size, mtime: 1_000, bytes: Buffer.alloc(size, i + 1) }],
        '/',
      );
    expect(readdirSync(join(dir, 'packs'))).toHaveLength(count);
    const files = Array.from({ length: count }, (_, i) => i);
    const whole = await Promise.all(files.map((i) => collect(vault.read(`/f${i}.bin`))));
    expect(whole.map((bytes, i) => bytes.equals(Buffer.alloc(size, i + 1)))).toEqual(files.map(() => true));
    const ranges = await Promise.all(
      files.map((i) => collect(vault.read(`/f${i}.bin`, { start: 1_000, end: size - 1_000 }))),
    );
    expect(ranges.map((bytes, i) => bytes.equals(Buffer.alloc(size - 1_999, i + 1)))).toEqual(
      files.map(() => true),
    );
  });

  it('removes a pack once every file in it is deleted', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'one'), smallFiles(5));
    await vault.add([join(root, 'one')]);
    expect(packNames(dir)).toHaveLength(1);
    await vault.remove(['/one']);
    expect(packNames(dir)).toEqual([]);
  });

  it('compacts a pack once most of it is deleted, and keeps the rest readable', async () => {
    const { vault, dir, root } = await newVault();
    const files = smallFiles(10, 7);
    await writeTree(join(root, 'src'), files);
    await vault.add([join(root, 'src')]);
    const [before] = packNames(dir);

    // Deleting a little leaves the pack as it is.
    await vault.remove(['/src/d0/f000.bin']);
    expect(packNames(dir)).toEqual([before]);

    await vault.remove(['/src/d0', '/src/d1']);
    const kept = Object.fromEntries(Object.entries(files).filter(([path]) => path.startsWith('d2/')));
    const after = packNames(dir);
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(before);
    const keptBytes = Object.values(kept).reduce((sum, bytes) => sum + storedSize(bytes.length), 0);
    expect(statSync(join(dir, 'packs', after[0] ?? '')).size).toBe(keptBytes);
    await expectFiles(vault, '/src', kept);
    vault.close();
    const reopened = await reopen(dir);
    await expectFiles(reopened, '/src', kept);
    expect(await reopened.verify({ readData: true })).toMatchObject({ ok: true, unreferenced: [] });
  });

  it('verify compacts a pack that a delete left mostly unused', async () => {
    const { vault, dir, root } = await newVault();
    const files = smallFiles(10, 3);
    await writeTree(join(root, 'src'), files);
    await vault.add([join(root, 'src')]);
    vault.close();
    // As if the compaction after a delete had failed: the rows are gone, the pack is as it was.
    await editIndexAsWriter(dir, (db) => {
      db.exec("DELETE FROM meta WHERE key = 'tree_snapshot'");
      const doomed = db.prepare('SELECT node_id FROM contents ORDER BY pack_offset LIMIT 7').pluck().all();
      for (const id of doomed) db.prepare('DELETE FROM nodes WHERE id = ?').run(id);
    });
    const [before] = packNames(dir);
    const sizeBefore = statSync(join(dir, 'packs', before ?? '')).size;

    const reopened = await reopen(dir);
    const kept = Object.fromEntries(
      Object.entries(files).filter(([path]) =>
        reopened.listRecursive('/').some((e) => e.path === `/src/${path}`),
      ),
    );
    expect(Object.keys(kept)).toHaveLength(3);
    expect(await reopened.verify()).toMatchObject({ ok: true });
    const [after] = packNames(dir);
    expect(after).not.toBe(before);
    expect(statSync(join(dir, 'packs', after ?? '')).size).toBeLessThan(sizeBefore / 2);
    await expectFiles(reopened, '/src', kept);
  });

  it('verify that finds damage compacts nothing, so a trusted copy of the index put back still reads every file', async () => {
    const { dir, files } = await packToCompact();
    // As if the compaction after deleting /src/gone had failed: its rows are gone, the pack is as it was.
    await editIndexAsWriter(dir, (db) => {
      db.exec("DELETE FROM meta WHERE key = 'tree_snapshot'");
      const gone = db.prepare('SELECT node_id FROM contents ORDER BY pack_length DESC LIMIT 8').pluck().all();
      for (const id of gone) db.prepare('DELETE FROM nodes WHERE id = ?').run(id);
    });
    const trusted = readFileSync(join(dir, 'index.sqlite'));
    // A row the commitment covers, planted: the file pointers stay right, and the index is still not to be trusted.
    editIndex(dir, (db) => db.exec("INSERT INTO meta (key, value) VALUES ('planted', X'00')"));
    const packs = packNames(dir);

    const tampered = await reopen(dir);
    expect((await tampered.verify()).ok).toBe(false);
    tampered.close();
    expect(packNames(dir)).toEqual(packs);

    writeFileSync(join(dir, 'index.sqlite'), trusted);
    await expectFiles(await reopen(dir), '/src/keep', files.keep);
  });

  it('a delete does not compact a pack by rows edited behind a current snapshot', async () => {
    const { dir, files } = await packToCompact();
    const trusted = readFileSync(join(dir, 'index.sqlite'));
    // The snapshot stays current: the unlock shows its tree and never reads the edited rows (FORMAT.md 8.7).
    editIndex(dir, swapKeptPlaces);
    const packs = packNames(dir);

    const tampered = await reopen(dir);
    await tampered.remove(['/src/gone']); // most of the pack: compacted, were its rows to be trusted
    tampered.close();
    expect(packNames(dir)).toEqual(packs);

    writeFileSync(join(dir, 'index.sqlite'), trusted);
    const restored = await reopen(dir);
    await expectFiles(restored, '/src/keep', files.keep);
    await expectFiles(restored, '/src/gone', files.gone);
  });

  it('keeps a pack no row names when the vault is opened, and verify lists it without removing it', async () => {
    const { vault, dir } = await vaultWithPacks(20);
    vault.close();
    const [pack] = packNames(dir);
    const unnamed = `${'ab'.repeat(16)}.pack`;
    copyFileSync(join(dir, 'packs', pack ?? ''), join(dir, 'packs', unnamed));
    const reopened = await reopen(dir);
    expect(packNames(dir)).toEqual([pack, unnamed].sort());
    const report = await reopened.verify({ readData: true });
    expect(report).toMatchObject({
      ok: true,
      unreferenced: [{ path: `packs/${unnamed}`, size: statSync(join(dir, 'packs', unnamed)).size }],
    });
    expect(packNames(dir)).toEqual([pack, unnamed].sort());
  });

  it('reports every file of a missing pack as missing contents, and restores the files of the other packs', async () => {
    const { vault, dir, files } = await vaultWithPacks();
    vault.close();
    const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
    const [gone, inGone] = db
      .prepare('SELECT pack_id, count(*) FROM contents GROUP BY pack_id LIMIT 1')
      .raw()
      .get() as [Buffer, number];
    db.close();
    rmSync(join(dir, 'packs', `${gone.toString('hex')}.pack`));
    const reopened = await reopen(dir);
    const report = await reopened.verify();
    expect(report.problems).toHaveLength(inGone);
    expect(
      report.problems.every((problem) => problem.code === 'INTEGRITY' && /missing/.test(problem.message)),
    ).toBe(true);
    const restored = await reopened.restore(['/src'], tempDir());
    expect(restored.filesRestored).toBe(Object.keys(files).length - inGone);
    expect(restored.problems).toHaveLength(inGone);
  });

  it('reports a pack cut short as truncated contents and restores the other files', async () => {
    const { vault, dir, files } = await vaultWithPacks(20);
    vault.close();
    const [pack] = packNames(dir);
    const path = join(dir, 'packs', pack ?? '');
    truncateSync(path, statSync(path).size - 10);
    const reopened = await reopen(dir);
    const report = await reopened.verify();
    expect(report.problems).toEqual([
      expect.objectContaining({
        code: 'INTEGRITY',
        message: expect.stringMatching(/is truncated/) as unknown,
      }),
    ]);
    const dest = tempDir();
    const restored = await reopened.restore(['/src'], dest);
    expect(restored.filesRestored).toBe(Object.keys(files).length - 1);
  });
});

describe('index schema', () => {
  it('refuses an index from a newer Coffer, writable or read-only', async () => {
    const { vault, dir } = await newVault();
    vault.close();
    const db = new Database(join(dir, 'index.sqlite'));
    const version = Buffer.alloc(4);
    version.writeUInt32LE(INDEX_SCHEMA_VERSION + 1);
    db.prepare("UPDATE meta SET value = ? WHERE key = 'index_schema'").run(version);
    db.close();
    await expect(Vault.open(dir, { sodium: nativeSodium })).rejects.toBeInstanceOf(UnsupportedFormatError);
    await expect(Vault.open(dir, { sodium: nativeSodium, readOnly: true })).rejects.toThrow(
      `vault index uses version ${INDEX_SCHEMA_VERSION + 1}`,
    );
  });

  it('reads a schema 1 index (blobs inline) read-only, upgrades it when writable, and adds into packs', async () => {
    const { vault, dir, root, files } = await vaultWithPacks();
    // Schema 1 kept files over 64 KiB in blob files of their own.
    files['d1/medium.bin'] = Buffer.alloc(200_000, 9);
    await writeTree(join(root, 'medium'), { 'medium.bin': files['d1/medium.bin'] });
    await vault.add([join(root, 'medium', 'medium.bin')], '/src/d1');
    vault.close();
    await toFormat10(dir);
    toSchema1(dir);

    const readOnly = await reopen(dir, true);
    await expectFiles(readOnly, '/src', files);
    readOnly.close();

    const upgraded = await reopen(dir);
    await expectFiles(upgraded, '/src', files);
    const dest = tempDir();
    expect(await upgraded.restore(['/src'], dest)).toMatchObject({ filesRestored: COUNT + 1, problems: [] });
    expect(
      readFileSync(join(dest, 'src', 'd1', 'f001.bin')).equals(files['d1/f001.bin'] ?? Buffer.alloc(1)),
    ).toBe(true);
    const more = smallFiles(150, 3);
    await writeTree(join(root, 'more'), more);
    await upgraded.add([join(root, 'more')]);
    expect(packNames(dir).length).toBeGreaterThan(0);
    await upgraded.remove(['/src/d0']);
    expect(await upgraded.verify({ readData: true })).toMatchObject({ ok: true, unreferenced: [] });
    upgraded.close();

    const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
    const schema = db.prepare("SELECT value FROM meta WHERE key = 'index_schema'").pluck().get() as Buffer;
    db.close();
    expect(schema.readUInt32LE(0)).toBe(INDEX_SCHEMA_VERSION);
    const last = await reopen(dir);
    await expectFiles(last, '/more', more);
  });
});

/**
 * Rewrites a vault's index as an older Coffer made it: blobs up to 64 KiB inline and larger ones in blob files, no
 * pack columns, no schema number.
 */
function toSchema1(dir: string): void {
  const db = new Database(join(dir, 'index.sqlite'));
  const rows = db.prepare('SELECT file_id, pack_id, pack_offset, pack_length FROM contents').all() as {
    file_id: Buffer;
    pack_id: Buffer;
    pack_offset: number;
    pack_length: number;
  }[];
  const update = db.prepare('UPDATE contents SET inline_blob = ? WHERE file_id = ?');
  for (const row of rows) {
    const pack = readFileSync(join(dir, 'packs', `${row.pack_id.toString('hex')}.pack`));
    const blob = pack.subarray(row.pack_offset, row.pack_offset + row.pack_length);
    if (blob.length <= 52 + 64 * 1024 + 16) update.run(blob, row.file_id);
    else {
      const hex = row.file_id.toString('hex');
      mkdirSync(join(dir, 'blobs', hex.slice(0, 2)), { recursive: true });
      writeFileSync(join(dir, 'blobs', hex.slice(0, 2), hex), blob);
    }
  }
  db.exec(`
    DROP INDEX contents_pack;
    ALTER TABLE contents DROP COLUMN pack_id;
    ALTER TABLE contents DROP COLUMN pack_offset;
    ALTER TABLE contents DROP COLUMN pack_length;
    DELETE FROM meta WHERE key = 'index_schema';
  `);
  db.close();
  rmSync(join(dir, 'packs'), { recursive: true });
}
