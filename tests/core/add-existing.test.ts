import { readdirSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  CancelledError,
  SMALL_FILE_LIMIT,
  type AddReport,
  type OnExisting,
  type Vault,
} from '../../src/core/index.js';
import { freeNumberedName, numberedName } from '../../src/core/vault/numbered-name.js';
import { collect, leftBehind, newVault, writeTree } from '../helpers/vault.js';

const read = async (vault: Vault, path: string): Promise<string> =>
  (await collect(vault.read(path))).toString('utf8');
const namesIn = (vault: Vault, folder = '/'): string[] => vault.list(folder).map((entry) => entry.name);
const blobFiles = (dir: string): string[] =>
  readdirSync(join(dir, 'blobs'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name);

describe('numbered names for "keep both"', () => {
  it('numbers before the extension, counts on from a number already there, and keeps a dot file whole', () => {
    expect(numberedName('report.pdf', 2)).toBe('report (2).pdf');
    expect(numberedName('report (2).pdf', 3)).toBe('report (3).pdf');
    expect(numberedName('Photos', 2)).toBe('Photos (2)');
    expect(numberedName('.bashrc', 2)).toBe('.bashrc (2)');
    expect(numberedName('notes.from the long meeting', 2)).toBe('notes.from the long meeting (2)');
    expect(freeNumberedName('report (2).pdf', () => false)).toBe('report (3).pdf');
  });

  it('skips names taken in any case, and shortens the stem to stay within 255 bytes of UTF-8', () => {
    const taken = new Set(['report (2).pdf', 'report (3).pdf']);
    expect(freeNumberedName('report.pdf', (name) => taken.has(name.toLowerCase()))).toBe('report (4).pdf');
    const long = `${'é'.repeat(125)}x.txt`; // 250 + 1 + 4 = 255 bytes
    const numbered = numberedName(long, 12);
    expect(Buffer.byteLength(numbered)).toBeLessThanOrEqual(255);
    expect(numbered.endsWith(' (12).txt')).toBe(true);
    expect(numbered.startsWith('é'.repeat(120))).toBe(true);
  });
});

/** A vault holding folder "Photos" and file "notes"; then file "Photos" and folder "notes" added onto them. */
async function addTypeClashes(onExisting: OnExisting): Promise<{ vault: Vault; report: AddReport }> {
  const { vault, root } = await newVault();
  await writeTree(join(root, 'old'), { 'Photos/x.jpg': 'x', notes: 'a file' });
  await writeTree(join(root, 'new'), { Photos: 'now a file', 'notes/inner.txt': 'inner' });
  await vault.add([join(root, 'old', 'Photos'), join(root, 'old', 'notes')]);
  const report = await vault.add([join(root, 'new', 'Photos'), join(root, 'new', 'notes')], '/', {
    onExisting,
  });
  return { vault, report };
}

describe('adding a name that already exists', () => {
  it('fails by default: the old file stays and the clash is a problem', async () => {
    const { vault, root } = await newVault();
    await writeTree(root, { 'a/report.pdf': 'old', 'b/report.pdf': 'new' });
    await vault.add([join(root, 'a', 'report.pdf')]);
    const report = await vault.add([join(root, 'b', 'report.pdf')]);
    expect(report.problems.map((problem) => problem.code)).toEqual(['ALREADY_EXISTS']);
    expect(report).toMatchObject({ filesAdded: 0, skipped: 0, replaced: 0 });
    expect(await read(vault, '/report.pdf')).toBe('old');
  });

  it('keep both: the new file takes the next free numbered name, case-insensitively, and both keep their bytes', async () => {
    const { vault, root } = await newVault();
    await writeTree(root, { 'a/report.pdf': 'one', 'b/Report.PDF': 'two', 'c/REPORT.pdf': 'three' });
    await vault.add([join(root, 'a', 'report.pdf')]);
    await vault.add([join(root, 'b', 'Report.PDF')], '/', { onExisting: 'keep-both' });
    const third = await vault.add([join(root, 'c', 'REPORT.pdf')], '/', { onExisting: 'keep-both' });
    expect(third).toMatchObject({ filesAdded: 1, problems: [] });
    expect(namesIn(vault).sort()).toEqual(['REPORT (3).pdf', 'Report (2).PDF', 'report.pdf']);
    expect(await read(vault, '/report.pdf')).toBe('one');
    expect(await read(vault, '/Report (2).PDF')).toBe('two');
    expect(await read(vault, '/REPORT (3).pdf')).toBe('three');
  });

  it('keep both: a file onto a folder and a folder onto a file get numbered names too', async () => {
    const { vault, report } = await addTypeClashes('keep-both');
    expect(report.problems).toEqual([]);
    expect(namesIn(vault).sort()).toEqual(['Photos', 'Photos (2)', 'notes', 'notes (2)']);
    expect(await read(vault, '/Photos (2)')).toBe('now a file');
    expect(await read(vault, '/notes (2)/inner.txt')).toBe('inner');
  });

  it('skip: the old file keeps its bytes, the skip is counted and is not a problem', async () => {
    const { vault, root } = await newVault();
    await writeTree(root, { 'a/doc.txt': 'old', 'b/doc.txt': 'new', 'b/other.txt': 'other' });
    await vault.add([join(root, 'a', 'doc.txt')]);
    const report = await vault.add([join(root, 'b', 'doc.txt'), join(root, 'b', 'other.txt')], '/', {
      onExisting: 'skip',
    });
    expect(report).toMatchObject({ filesAdded: 1, skipped: 1, replaced: 0, problems: [] });
    expect(await read(vault, '/doc.txt')).toBe('old');
    expect(await read(vault, '/other.txt')).toBe('other');
  });

  it.each([
    ['small', 'old small', 'new small'],
    ['large', 'o'.repeat(SMALL_FILE_LIMIT + 5), 'n'.repeat(SMALL_FILE_LIMIT * 2 + 9)],
  ])(
    'replace (%s files): the new bytes are stored, the old contents are removed, nothing is left over',
    async (_size, before, after) => {
      const { vault, dir, root } = await newVault();
      await writeTree(root, { 'a/doc.txt': before, 'a/keep.txt': 'kept', 'b/doc.txt': after });
      await vault.add([join(root, 'a', 'doc.txt'), join(root, 'a', 'keep.txt')]);
      const blobsBefore = blobFiles(dir);
      const report = await vault.add([join(root, 'b', 'doc.txt')], '/', { onExisting: 'replace' });
      expect(report).toMatchObject({ filesAdded: 1, replaced: 1, problems: [] });
      expect(namesIn(vault).sort()).toEqual(['doc.txt', 'keep.txt']);
      expect(vault.stat('/doc.txt').size).toBe(after.length);
      expect(await read(vault, '/doc.txt')).toBe(after);
      expect(await read(vault, '/keep.txt')).toBe('kept');
      // The old large file's blob is gone; a new one holds the new contents.
      for (const name of blobsBefore) expect(blobFiles(dir)).not.toContain(name);
      const check = await vault.verify({ readData: true });
      expect(check).toMatchObject({ ok: true, unreferenced: [] });
      vault.close();
      expect(leftBehind(dir)).toEqual({ files: [], intents: 0 });
    },
  );

  it('replace works for streamed files, and the later of two sources of one name wins within an add', async () => {
    const { vault } = await newVault();
    const file = (name: string, text: string) => ({
      name,
      size: Buffer.byteLength(text),
      mtime: 1_700_000_000_000,
      bytes: Buffer.from(text),
    });
    await vault.addStreams([file('memo.txt', 'first')]);
    const report = await vault.addStreams([file('memo.txt', 'second'), file('MEMO.txt', 'third')], '/', {
      onExisting: 'replace',
    });
    expect(report.problems).toEqual([]);
    expect(namesIn(vault)).toEqual(['MEMO.txt']);
    expect(await read(vault, '/MEMO.txt')).toBe('third');
    expect(await vault.verify({ readData: true })).toMatchObject({ ok: true, unreferenced: [] });
  });

  it('replace never replaces a folder by a file or a file by a folder: each is a problem, nothing changes', async () => {
    const { vault, report } = await addTypeClashes('replace');
    expect(report.problems.map((problem) => problem.code)).toEqual(['ALREADY_EXISTS', 'ALREADY_EXISTS']);
    expect(report.problems[0]?.message).toMatch(/only a file replaces a file/);
    expect(await read(vault, '/Photos/x.jpg')).toBe('x');
    expect(await read(vault, '/notes')).toBe('a file');
  });

  it('a cancelled replace leaves the old file whole', async () => {
    const { vault, dir, root } = await newVault();
    const old = 'o'.repeat(SMALL_FILE_LIMIT + 1);
    await writeTree(root, { 'a/big.bin': old, 'b/big.bin': Buffer.alloc(SMALL_FILE_LIMIT * 8, 7) });
    await vault.add([join(root, 'a', 'big.bin')]);
    const controller = new AbortController();
    const adding = vault.add([join(root, 'b', 'big.bin')], '/', {
      onExisting: 'replace',
      signal: controller.signal,
      onProgress: ({ bytesDone }) => {
        if (bytesDone > 0) controller.abort();
      },
    });
    await expect(adding).rejects.toBeInstanceOf(CancelledError);
    expect(await read(vault, '/big.bin')).toBe(old);
    vault.close();
    expect(leftBehind(dir)).toEqual({ files: [], intents: 0 });
  });

  it('a folder onto a folder merges: new names go in, and the choice applies to each clash inside', async () => {
    const { vault, root } = await newVault();
    await writeTree(join(root, 'old'), { 'Docs/a.txt': 'old a', 'Docs/sub/b.txt': 'old b' });
    await writeTree(join(root, 'new'), {
      'Docs/a.txt': 'new a',
      'Docs/c.txt': 'new c',
      'Docs/sub/b.txt': 'new b',
      'Docs/sub/d.txt': 'new d',
    });
    await vault.add([join(root, 'old', 'Docs')]);
    expect(await vault.takenNames([join(root, 'new', 'Docs'), join(root, 'new', 'nothing')])).toEqual([
      '/Docs/a.txt',
      '/Docs/sub/b.txt',
    ]);
    const report = await vault.add([join(root, 'new', 'Docs')], '/', { onExisting: 'keep-both' });
    expect(report).toMatchObject({ filesAdded: 4, foldersAdded: 0, problems: [] });
    expect(namesIn(vault)).toEqual(['Docs']);
    expect(namesIn(vault, '/Docs').sort()).toEqual(['a (2).txt', 'a.txt', 'c.txt', 'sub']);
    expect(namesIn(vault, '/Docs/sub').sort()).toEqual(['b (2).txt', 'b.txt', 'd.txt']);
    expect(await read(vault, '/Docs/a.txt')).toBe('old a');
    expect(await read(vault, '/Docs/a (2).txt')).toBe('new a');
  });

  it('takenNames compares streamed files by name, ignoring case', async () => {
    const { vault } = await newVault();
    vault.mkdir('/In');
    await vault.addStreams([{ name: 'x.txt', size: 1, mtime: 0, bytes: Buffer.from('x') }], '/In');
    expect(await vault.takenNames([{ name: 'X.TXT' }, { name: 'y.txt' }], '/In')).toEqual(['/In/x.txt']);
  });
});
