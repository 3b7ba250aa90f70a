/**
 * Whole-vault fuzzing (security checklist item 29): one file of a small vault (header, backup, index, activity
 * log, a pack of small files, a large file's blob) damaged at a random place; opening, unlocking, listing,
 * verifying, restoring and repairing it must throw the engine's typed errors or report problems, never anything else.
 * The same for one cell of the index edited by someone holding the passphrase, who recomputes the index
 * commitment so the edit reaches the checks behind it. COFFER_FUZZ_RUNS raises the runs (each costs one or two
 * Argon2id derivations at the KDF floor).
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

import Database from 'better-sqlite3';

import { fc, test } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect } from 'vitest';

import { CofferError, Vault } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import {
  asyncOutcomeOf,
  fuzzOptions,
  fuzzTimeout,
  mutate,
  mutations,
  type Mutation,
} from '../helpers/fuzz.js';
import { editIndexAsWriter } from '../helpers/index-format.js';
import { passphrase, writeTree } from '../helpers/vault.js';

const FILE_RUNS = 40;
const CELL_RUNS = 30;
const root = mkdtempSync(join(tmpdir(), 'coffer-fuzz-'));
const pristine = join(root, 'pristine');
/** The vault's files, relative to its folder, sorted so a seed names the same file on every machine. */
let files: string[] = [];
/** What the vault was made from, by vault path. */
const sources = new Map<string, Buffer>([
  ['/notes.txt', Buffer.from('remember the milk')],
  ['/Photos/été.jpg', Buffer.alloc(3000, 7)],
  // Over the small-file limit (1 MiB): a blob file of its own, not a pack.
  ['/big.bin', nativeSodium.randomBytes(1024 * 1024 + 100)],
]);

beforeAll(async () => {
  await writeTree(
    join(root, 'src'),
    Object.fromEntries([...sources].map(([path, bytes]) => [path.slice(1), bytes])),
  );
  const vault = await Vault.create(pristine, passphrase(), { kdf: 'interactive', sodium: nativeSodium });
  await vault.add([
    join(root, 'src', 'notes.txt'),
    join(root, 'src', 'Photos'),
    join(root, 'src', 'big.bin'),
  ]);
  vault.close();
  files = readdirSync(pristine, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(pristine, join(entry.parentPath, entry.name)))
    .sort();
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/**
 * Everything a user does with a vault found damaged, repair last, stopping at the first typed error. With
 * `sourcesKept` (damage by someone without the passphrase) a restore may leave files out but never write other
 * bytes than the source's, and when neither verify nor the restore reports anything, it writes every file.
 */
async function useDamagedVault(dir: string, sourcesKept = false): Promise<void> {
  const vault = await Vault.open(dir, { sodium: nativeSodium });
  try {
    await vault.unlock(passphrase());
    vault.listRecursive('/');
    const verified = await vault.verify({ readData: true });
    const out = join(dir, '..', 'restored');
    const restored = await vault.restore(['/'], out);
    if (sourcesKept) expectRestoredAsMade(out, verified.problems.length + restored.problems.length === 0);
    vault.activityLog();
    // Repair walks the packs blob by blob (pack-walk.ts) to bring back what no row names.
    await vault.verify({ readData: true, repair: true });
  } finally {
    vault.close();
  }
}

function expectRestoredAsMade(out: string, nothingReported: boolean): void {
  const written = existsSync(out)
    ? readdirSync(out, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => `/${relative(out, join(entry.parentPath, entry.name))}`)
    : [];
  // equals, not toEqual: a deep comparison of a 1 MiB file byte by byte takes seconds.
  for (const path of written)
    expect(sources.get(path)?.equals(readFileSync(join(out, path))), path).toBe(true);
  if (nothingReported) expect(written.sort()).toEqual([...sources.keys()].sort());
}

/** A fresh copy of the pristine vault for one run, removed after `use`. */
async function withCopy(use: (dir: string) => Promise<void>): Promise<void> {
  const run = mkdtempSync(join(root, 'run-'));
  try {
    const dir = join(run, 'vault');
    cpSync(pristine, dir, { recursive: true });
    await use(dir);
  } finally {
    rmSync(run, { recursive: true, force: true });
  }
}

describe('a vault with one damaged file', () => {
  test.prop([fc.nat(), mutations], fuzzOptions(FILE_RUNS))(
    'is used as far as the damage lets it (open, unlock, list, verify, restore, repair), stopping only at a typed error',
    async (fileIndex, edits) => {
      await withCopy(async (dir) => {
        const target = files[fileIndex % files.length];
        if (target === undefined) throw new Error('the vault has no files');
        const path = join(dir, target);
        writeFileSync(path, mutate(readFileSync(path), edits));
        await asyncOutcomeOf(() => useDamagedVault(dir, true), [CofferError]);
      });
    },
    fuzzTimeout(FILE_RUNS, 500),
  );
});

/** The index's cells a reader decodes, by table, column and the key that names a row. */
const CELLS = [
  { table: 'nodes', column: 'key_id', key: 'id' },
  { table: 'nodes', column: 'record', key: 'id' },
  { table: 'nodes', column: 'version', key: 'id' },
  { table: 'contents', column: 'file_id', key: 'rowid' },
  { table: 'contents', column: 'inline_blob', key: 'rowid' },
  { table: 'contents', column: 'pack_id', key: 'rowid' },
  { table: 'contents', column: 'pack_offset', key: 'rowid' },
  { table: 'contents', column: 'pack_length', key: 'rowid' },
  { table: 'meta', column: 'value', key: 'key' },
] as const;

/** What goes into the cell: an extreme integer, a real, text, NULL, or its own bytes edited. */
type CellValue =
  | { readonly kind: 'value'; readonly value: bigint | number | string | null }
  | { readonly kind: 'edit'; readonly edits: Mutation[] };

const cellValue: fc.Arbitrary<CellValue> = fc.oneof(
  fc.record({
    kind: fc.constant('value'),
    value: fc.oneof(
      fc.constantFrom(0n, 1n, -1n, 2n ** 31n - 1n, 2n ** 32n - 1n, 2n ** 53n, 2n ** 63n - 1n, -(2n ** 63n)),
      fc.constantFrom(0.5, -0, Number.NaN, Infinity, 1e300),
      fc.string({ maxLength: 20 }),
      fc.constant(null),
    ),
  }),
  fc.record({ kind: fc.constant('edit'), edits: mutations }),
);

function editCell(db: Database.Database, cellIndex: number, rowIndex: number, replacement: CellValue): void {
  const cell = CELLS[cellIndex % CELLS.length];
  if (cell === undefined) throw new Error('no cells to edit');
  const rows = db
    .prepare(`SELECT ${cell.key} AS key, ${cell.column} AS value FROM ${cell.table}`)
    .safeIntegers(true)
    .all() as { key: unknown; value: unknown }[];
  const row = rows[rowIndex % Math.max(1, rows.length)];
  if (row === undefined) return;
  let value: unknown = replacement.kind === 'value' ? replacement.value : undefined;
  if (replacement.kind === 'edit') {
    const current = row.value;
    value = mutate(Buffer.isBuffer(current) ? current : Buffer.from(String(current)), replacement.edits);
  }
  try {
    db.prepare(`UPDATE ${cell.table} SET ${cell.column} = ? WHERE ${cell.key} = ?`).run(value, row.key);
  } catch (error) {
    // The schema's own checks (NOT NULL, id lengths, uniqueness) refuse some values: that edit is not possible.
    if (!(error instanceof Database.SqliteError)) throw error;
  }
}

describe('a vault with one cell of its index edited and the index recommitted', () => {
  test.prop([fc.nat(), fc.nat(), cellValue], fuzzOptions(CELL_RUNS))(
    'is used as far as the edit lets it (open, unlock, list, verify, restore, repair), stopping only at a typed error',
    async (cellIndex, rowIndex, replacement) => {
      await withCopy(async (dir) => {
        // An edit of the vault id or the generation cannot be recommitted: the vault is then used as it is.
        await asyncOutcomeOf(
          () =>
            editIndexAsWriter(dir, (db) => {
              editCell(db, cellIndex, rowIndex, replacement);
            }),
          [CofferError],
        );
        await asyncOutcomeOf(() => useDamagedVault(dir), [CofferError]);
      });
    },
    fuzzTimeout(CELL_RUNS, 1000),
  );
});
