import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { beforeEach, describe, expect, it } from 'vitest';

import { main } from '../../src/cli/main.js';
import { writeTree } from '../helpers/vault.js';
import { fakeIo, filesBelow, tempDir } from './helpers.js';

type Damage = (db: Database.Database) => void;

/** Rows of files (not folders, so no other entry loses its parent), in a stable order. */
function fileRows(db: Database.Database): { id: Buffer; record: Buffer }[] {
  return db
    .prepare('SELECT id, record FROM nodes WHERE id IN (SELECT node_id FROM contents) ORDER BY id')
    .all() as { id: Buffer; record: Buffer }[];
}

const DAMAGES: [string, Damage][] = [
  [
    'a flipped byte in a sealed record',
    (db) => {
      const [row] = fileRows(db);
      if (!row) throw new Error('no file row');
      const record = Buffer.from(row.record);
      record.writeUInt8(record.readUInt8(30) ^ 1, 30);
      db.prepare('UPDATE nodes SET record = ? WHERE id = ?').run(record, row.id);
    },
  ],
  [
    'two swapped records',
    (db) => {
      const [first, second] = fileRows(db);
      if (!first || !second) throw new Error('fewer than two file rows');
      const update = db.prepare('UPDATE nodes SET record = ? WHERE id = ?');
      update.run(second.record, first.id);
      update.run(first.record, second.id);
    },
  ],
];

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function cli(...args: string[]): Promise<Run> {
  const fake = fakeIo();
  const code = await main(args, fake.io);
  return { code, stdout: fake.stdout.text, stderr: fake.stderr.text };
}

const WARNING =
  /^coffer: warning: (1 entry|\d+ entries) of the vault index could not be read and (is|are) left out/u;
const NOTE = /Damage found: \d+ entr(y|ies) of the vault index could not be read/u;

describe.each(DAMAGES)('a vault index with %s', (_name, damage) => {
  let root: string;
  let vault: string;

  beforeEach(async () => {
    root = tempDir();
    vault = join(root, 'vault');
    const source = join(root, 'src');
    await writeTree(source, { 'a.txt': 'healthy a', 'b.txt': 'healthy b', 'c.txt': 'healthy c' });
    expect((await cli('init', vault, '--kdf', 'interactive')).code).toBe(0);
    expect((await cli('add', vault, source)).code).toBe(0);
    const db = new Database(join(vault, 'index.sqlite'));
    damage(db);
    // The tree snapshot stored at close would hide the damage until the next change.
    db.prepare("DELETE FROM meta WHERE key = 'tree_snapshot'").run();
    db.close();
  });

  it('ls lists the readable rest, warns, and exits 4', async () => {
    const result = await cli('ls', vault, '/', '--recursive');
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(WARNING);
    expect(result.stdout).toMatch(/src\/$/mu);
  });

  it('restore restores the readable files, says damage was found, and exits 4', async () => {
    const out = join(root, 'out');
    const result = await cli('restore', vault, '/', '--to', out);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(WARNING);
    expect(result.stdout).toMatch(/^Done: \d files? restored [^\n]*/u);
    expect(result.stdout).toMatch(NOTE);
    const restored = await filesBelow(out);
    expect(restored.length).toBeGreaterThan(0);
    for (const path of restored) expect(await readFile(join(out, path), 'utf8')).toMatch(/^healthy /u);
  });

  it('add still adds, says damage was found, and exits 4', async () => {
    await writeFile(join(root, 'new.txt'), 'new');
    const result = await cli('add', vault, join(root, 'new.txt'));
    expect(result.code).toBe(4);
    expect(result.stdout).toMatch(/^Done: 1 file and 0 folders added [^\n]*Damage found/u);
    expect((await cli('ls', vault, '/new.txt')).stdout).toMatch(/new\.txt$/mu);
  });

  it('info, verify, mkdir, mv and rm do their work and exit 4', async () => {
    expect((await cli('info', vault)).code).toBe(4);
    const verify = await cli('verify', vault);
    expect(verify.code).toBe(4);
    expect(verify.stdout).toMatch(/^Damage found/u);
    expect((await cli('mkdir', vault, '/made')).code).toBe(4);
    expect((await cli('mv', vault, '/made', 'renamed', '--rename')).code).toBe(4);
    expect((await cli('mv', vault, '/renamed', '/src')).code).toBe(4);
    expect((await cli('ls', vault, '/src/renamed')).code).toBe(4);
    expect((await cli('rm', vault, '/src/renamed')).code).toBe(4);
    const listed = await cli('ls', vault, '/src');
    expect(listed.stdout).not.toMatch(/renamed/u);
  });
});

describe('a vault index whose rows were changed behind its commitment (format 1.1)', () => {
  it('ls says the index was changed outside Coffer, lists what the rows say, and exits 4', async () => {
    const root = tempDir();
    const vault = join(root, 'vault');
    await writeFile(join(root, 'a.txt'), 'healthy a');
    expect((await cli('init', vault, '--kdf', 'interactive')).code).toBe(0);
    expect((await cli('add', vault, join(root, 'a.txt'))).code).toBe(0);
    const db = new Database(join(vault, 'index.sqlite'));
    db.prepare('DELETE FROM nodes').run();
    db.prepare("DELETE FROM meta WHERE key = 'tree_snapshot'").run();
    db.close();

    const result = await cli('ls', vault);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^coffer: warning: [^\n]*rows do not match its sealed commitment/u);
    expect(result.stderr).not.toMatch(/entr(y|ies) of the vault index could not be read/u);
  });
});
