/**
 * FORMAT.md section 8.3: a record is exactly the keys a writer writes, each of its type, and a file's record size
 * is its blob's plaintext size. Records here are forged as whoever holds the passphrase could forge them (sealed
 * under the vault's own keys), so they authenticate and only the reader's shape checks stand in the way.
 */
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { Vault, type CreateOptions } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { editIndexAsWriter } from '../helpers/index-format.js';
import { rewriteRecord, twoFilesOfOneSize, withRecords } from '../helpers/records.js';
import { collect, newVault, passphrase, track, writeTree } from '../helpers/vault.js';

const MiB = 1024 * 1024;

/** A closed vault holding a folder, a small file (in a pack) and a large one (in a blob file). */
async function closedVault(options: CreateOptions = {}): Promise<{ dir: string; root: string }> {
  const { vault, dir, root } = await newVault(options);
  await writeTree(join(root, 'in'), {
    'folder/small.txt': 'small file',
    'large.bin': Buffer.alloc(MiB + 1000, 3),
  });
  expect((await vault.add([join(root, 'in', 'folder'), join(root, 'in', 'large.bin')])).problems).toEqual([]);
  vault.close();
  return { dir, root };
}

async function unlocked(
  dir: string,
): Promise<{ vault: Vault; damaged: readonly { path: string; message: string }[] }> {
  const vault = track(await Vault.open(dir, { sodium: nativeSodium }));
  const damaged = await vault.unlock(passphrase());
  return { vault, damaged };
}

const named =
  (name: string) =>
  (record: Record<string, unknown>): boolean =>
    record.n === name;

describe('a record of another shape than a writer writes is malformed', () => {
  const shapes: [string, string, (record: Record<string, unknown>) => Record<string, unknown> | Buffer][] = [
    ['a file record with an extra key', 'small.txt', (record) => ({ ...record, x: 1 })],
    ['a folder record with an extra key', 'folder', (record) => ({ ...record, x: 'extra' })],
    ['a folder record with a size', 'folder', (record) => ({ ...record, s: 5 })],
    ['a record that is a JSON array', 'small.txt', (record) => Buffer.from(JSON.stringify([record]))],
    [
      'a record whose name is not valid UTF-8',
      'small.txt',
      (record) => {
        const bytes = Buffer.from(JSON.stringify({ ...record, n: 'smXll.txt' }));
        bytes[bytes.indexOf('X')] = 0xff;
        return bytes;
      },
    ],
    [
      'a record whose name has an unpaired surrogate (a JSON escape)',
      'small.txt',
      (record) => Buffer.from(JSON.stringify({ ...record, n: 'small\ud800.txt' })),
    ],
    ['a record whose name holds a separator', 'small.txt', (record) => ({ ...record, n: 'sm/all.txt' })],
    ['a record whose name is not in NFC', 'small.txt', (record) => ({ ...record, n: 'sma\u0301ll.txt' })],
    [
      'a record with a key written twice (JSON.parse keeps the last, another reader the first)',
      'small.txt',
      (record) => Buffer.from(JSON.stringify(record).replace('"n":', '"n":"other.txt","n":')),
    ],
    [
      'a record starting with a byte order mark',
      'small.txt',
      (record) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(record))]),
    ],
  ];

  it.each(shapes)(
    '%s: unlock leaves it out and says so, verify reports it',
    async (_name, target, change) => {
      const { dir } = await closedVault();
      await rewriteRecord(dir, named(target), change);
      const { vault, damaged } = await unlocked(dir);
      // A folder's children lose their parent with it, and are reported too.
      expect(damaged).toContainEqual(
        expect.objectContaining({
          code: 'INTEGRITY',
          message: expect.stringMatching(
            /metadata record .*is not laid out as the vault format requires/u,
          ) as string,
        }),
      );
      const listed = vault.listRecursive('/').map((entry) => entry.path);
      expect(listed).not.toContain(target === 'folder' ? '/folder' : '/folder/small.txt');
      expect((await vault.verify()).ok).toBe(false);
    },
  );

  it('the same record with its keys in another order and other spacing is read', async () => {
    const { dir } = await closedVault();
    await rewriteRecord(dir, named('small.txt'), (record) => {
      const reversed = Object.fromEntries(Object.entries(record).reverse());
      return Buffer.from(JSON.stringify(reversed, null, 2));
    });
    const { vault, damaged } = await unlocked(dir);
    expect(damaged).toEqual([]);
    expect((await collect(vault.read('/folder/small.txt'))).toString()).toBe('small file');
  });
});

describe('of two names in a folder that clash, a reader keeps the entry with the lower id (section 8.3)', () => {
  it.each(['lower', 'higher'] as const)('a name made to clash in the entry with the %s id', async (which) => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'in'), { 'a.txt': 'a', 'b.txt': 'b' });
    await vault.add([join(root, 'in', 'a.txt'), join(root, 'in', 'b.txt')]);
    vault.close();
    const ids = await withRecords(dir, ({ rows }) =>
      Object.fromEntries(
        rows.map((row) => [(JSON.parse(row.plaintext.toString()) as { n: string }).n, row.id]),
      ),
    );
    const [lower, higher] = ['a.txt', 'b.txt'].sort((x, y) =>
      Buffer.compare(ids[x] as Buffer, ids[y] as Buffer),
    );
    const renamed = which === 'lower' ? lower : higher;
    const other = renamed === 'a.txt' ? 'b.txt' : 'a.txt';
    await rewriteRecord(dir, named(renamed ?? ''), (record) => ({ ...record, n: other.toUpperCase() }));
    const { vault: reopened, damaged } = await unlocked(dir);
    const kept = which === 'lower' ? other.toUpperCase() : other;
    expect(reopened.list('/').map((entry) => entry.name)).toEqual([kept]);
    expect(damaged).toEqual([
      {
        // Whichever was renamed, the entry with the higher id goes.
        path: `(index row ${ids[higher ?? '']?.toString('hex') ?? ''})`,
        code: 'INTEGRITY',
        message: expect.stringContaining(
          'has the same name as another entry in its folder, ignoring case, so it is left out',
        ) as string,
      },
    ]);
  });
});

describe('two file records naming one file id (section 5.4)', () => {
  it('verify reports a contents row moved to no entry once, and its file not as another entry’s', async () => {
    const { dir, a } = await twoFilesOfOneSize();
    await editIndexAsWriter(dir, (db) => {
      db.pragma('foreign_keys = OFF');
      db.prepare('UPDATE contents SET node_id = ? WHERE node_id = ?').run(Buffer.alloc(16, 7), a.id);
    });
    const { vault } = await unlocked(dir);
    expect((await vault.verify({ readData: true })).problems).toEqual([
      expect.objectContaining({
        path: `(index contents row ${a.c})`,
        message: expect.stringContaining('belongs to no entry of the index') as string,
      }),
    ]);
  });

  it('verify reports a contents row moved onto a folder by the folder, not the file as another entry’s', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'in'), { 'a.txt': 'a file', 'sub/b.txt': 'b file' });
    await vault.add([join(root, 'in')]);
    vault.close();
    const sub = await withRecords(
      dir,
      ({ rows }) => rows.find((row) => row.plaintext.includes('"n":"sub"'))?.id,
    );
    await editIndexAsWriter(dir, (db) => {
      db.pragma('foreign_keys = OFF');
      db.prepare('UPDATE contents SET node_id = ? WHERE length(node_id) = 16 AND pack_offset = 0').run(sub);
    });
    const { vault: reopened } = await unlocked(dir);
    const problems = (await reopened.verify()).problems;
    expect(problems.map((problem) => problem.path)).toEqual(['/in/sub']);
    expect(problems[0]?.message).toContain('names another file than its entry does');
  });

  it('verify reports the entry whose record names another entry’s file, which both read', async () => {
    const { dir, a, b } = await twoFilesOfOneSize();
    await rewriteRecord(dir, named('b.txt'), (record) => ({ ...record, c: a.c }));
    await editIndexAsWriter(dir, (db) => {
      db.prepare('DELETE FROM contents WHERE node_id = ?').run(b.id);
    });
    const { vault: reopened, damaged } = await unlocked(dir);
    expect(damaged).toEqual([]);
    expect((await collect(reopened.read('/b.txt'))).toString()).toBe('same size');
    expect((await reopened.verify({ readData: true })).problems).toEqual([
      expect.objectContaining({
        path: '/b.txt',
        code: 'INTEGRITY',
        message: expect.stringContaining("is another entry's: its record names that entry's file") as string,
      }),
    ]);
  });
});

describe("a file record's size must equal its blob's plaintext size", () => {
  const SHORT = /is truncated: its end is missing/u;
  const LONG = /its size differs from the index/u;
  const cases: [string, string, string, number, RegExp][] = [
    ['a small file (in a pack) whose record claims a byte more', 'small.txt', '/folder/small.txt', 1, SHORT],
    ['a small file (in a pack) whose record claims a byte less', 'small.txt', '/folder/small.txt', -1, LONG],
    ['a large file (a blob file) whose record claims a byte more', 'large.bin', '/large.bin', 1, SHORT],
    ['a large file (a blob file) whose record claims a byte less', 'large.bin', '/large.bin', -1, LONG],
  ];

  // Unpadded blobs, whose plaintext is exactly the file; a padded blob's stored size is checked the same way, with
  // its own message (tests/core/padding.test.ts).
  it.each(cases)('%s: verify, restore and read refuse it', async (_name, name, path, delta, message) => {
    const { dir, root } = await closedVault({ contentPadding: 'none' });
    let claimed = 0;
    await rewriteRecord(dir, named(name), (record) => {
      claimed = (record.s as number) + delta;
      return { ...record, s: claimed };
    });
    const { vault, damaged } = await unlocked(dir);
    // Unlocking and listing do not open blobs: they show the record's size.
    expect(damaged).toEqual([]);
    expect(vault.stat(path).size).toBe(claimed);

    const sizeProblem: unknown = expect.objectContaining({
      path,
      code: 'INTEGRITY',
      message: expect.stringMatching(message) as string,
    });
    for (const readData of [false, true]) {
      const report = await vault.verify({ readData });
      expect(report.problems).toEqual([sizeProblem]);
    }
    const restored = await vault.restore([path], join(root, 'out'));
    expect(restored.filesRestored).toBe(0);
    expect(restored.problems).toEqual([sizeProblem]);
    await expect(collect(vault.read(path))).rejects.toMatchObject({ code: 'INTEGRITY' });
  });
});
