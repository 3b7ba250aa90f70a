/**
 * Issue 10: what a vault does when its index is not the one that names its stored files. Nothing not named by the
 * index is ever taken as permission to delete: a missing, empty, foreign or non-SQLite index is damage (exit 4),
 * and an older index leaves the newer packs and blobs alone, for the current index to find again.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';

import { editIndexAsWriter } from '../helpers/index-format.js';
import { filesBelow, requireBuiltCli, runCli, tempDir, type RunResult } from './helpers.js';

requireBuiltCli();

/** The vault's packs and blob files, relative to the vault folder. */
async function stored(vault: string): Promise<string[]> {
  return (await filesBelow(vault)).filter((path) => path.startsWith('packs/') || path.startsWith('blobs/'));
}

describe("an index that is not this vault's own", () => {
  const cwd = tempDir();
  const cli = (...args: string[]): Promise<RunResult> => runCli(args, { cwd });
  let packsAndBlobs: string[] = [];

  beforeAll(async () => {
    expect((await cli('init', 'V', '--kdf', 'interactive')).code).toBe(0);
    await mkdir(join(cwd, 'src'));
    for (let i = 0; i < 20; i++) await writeFile(join(cwd, 'src', `small${i}.txt`), randomBytes(2000));
    await writeFile(join(cwd, 'src', 'large.bin'), randomBytes(1_500_000));
    expect((await cli('add', 'V', 'src')).code).toBe(0);
    expect((await cli('init', 'Other', '--kdf', 'interactive')).code).toBe(0);
    packsAndBlobs = await stored(join(cwd, 'V'));
    expect(packsAndBlobs.some((path) => path.startsWith('packs/'))).toBe(true);
    expect(packsAndBlobs.some((path) => path.startsWith('blobs/'))).toBe(true);
  });

  const cases: [string, (index: string) => void, RegExp][] = [
    [
      'an empty index',
      (index) => {
        writeFileSync(index, '');
      },
      /vault index \(index\.sqlite\) is empty/u,
    ],
    [
      'a deleted index',
      (index) => {
        rmSync(index);
      },
      /vault index \(index\.sqlite\) is missing/u,
    ],
    [
      'a file that is not SQLite',
      (index) => {
        writeFileSync(index, 'this is not a database, just some text in its place\n'.repeat(100));
      },
      /index\.sqlite, not a SQLite database/u,
    ],
    [
      // SQLite's own header damaged: its schema format number (offset 44) beyond any SQLite's.
      'an index whose SQLite header names an unknown schema format',
      (index) => {
        const bytes = readFileSync(index);
        bytes.writeUInt32BE(5, 44);
        writeFileSync(index, bytes);
      },
      /index\.sqlite, not a SQLite database/u,
    ],
    [
      "another vault's index",
      (index) => {
        cpSync(join(cwd, 'Other', 'index.sqlite'), index);
      },
      /vault index \(index\.sqlite\) belongs to a different file or vault/u,
    ],
    [
      'an index whose vault id was edited',
      (index) => {
        const db = new Database(index);
        db.prepare("UPDATE meta SET value = ? WHERE key = 'vault_id'").run(randomBytes(16));
        db.close();
      },
      /vault index \(index\.sqlite\) belongs to a different file or vault/u,
    ],
  ];
  it.each(cases)(
    '%s: info and ls exit 4 with what to do, and every pack and blob stays',
    async (_name, damage, message) => {
      const copy = `W-${randomBytes(4).toString('hex')}`;
      cpSync(join(cwd, 'V'), join(cwd, copy), { recursive: true });
      damage(join(cwd, copy, 'index.sqlite'));
      for (const command of ['info', 'ls', 'verify']) {
        const result = await cli(command, copy);
        expect(result.code, `${command}: ${result.stderr}`).toBe(4);
        expect(result.stdout).toBe('');
        expect(result.stderr).toMatch(message);
        expect(result.stderr).toMatch(/Put back this vault's own index\.sqlite/u);
      }
      expect(await stored(join(cwd, copy))).toEqual(packsAndBlobs);
    },
  );

  it('an older index put back deletes nothing; the current one put back finds every file', async () => {
    const oldIndex = readFileSync(join(cwd, 'V', 'index.sqlite'));
    await mkdir(join(cwd, 'more'));
    for (let i = 0; i < 30; i++) await writeFile(join(cwd, 'more', `m${i}.txt`), randomBytes(3000));
    await writeFile(join(cwd, 'more', 'big.bin'), randomBytes(1_200_000));
    expect((await cli('add', 'V', 'more')).code).toBe(0);
    const currentIndex = readFileSync(join(cwd, 'V', 'index.sqlite'));
    const everything = await stored(join(cwd, 'V'));
    expect(everything.length).toBeGreaterThan(packsAndBlobs.length);

    writeFileSync(join(cwd, 'V', 'index.sqlite'), oldIndex);
    const listed = await cli('ls', 'V', '--recursive');
    // This computer saw the newer index: the rollback is a warning (FORMAT.md 8.8), given once.
    expect(listed.code).toBe(1);
    expect(listed.stderr).toMatch(/This vault is older than when this computer last opened it/u);
    expect(listed.stdout).not.toMatch(/more/u);
    const verified = await cli('verify', 'V');
    // The newer packs and blobs are listed, kept, and make verify end with a warning (exit 1), not damage.
    expect(verified.code).toBe(1);
    expect(verified.stdout).toMatch(/^OK: /mu);
    expect(verified.stderr).toMatch(/Kept \d+ stored files .* that no entry names/u);
    const unreferenced = verified.stdout.split('\n').filter((line) => line.startsWith('unreferenced '));
    expect(unreferenced.length).toBe(everything.length - packsAndBlobs.length);
    expect(await stored(join(cwd, 'V'))).toEqual(everything);

    writeFileSync(join(cwd, 'V', 'index.sqlite'), currentIndex);
    const full = await cli('verify', 'V', '--read-data');
    expect(full.code, full.stderr).toBe(0);
    expect(full.stdout).toMatch(/^OK: 52 files checked/mu);
  });

  it('verify --repair brings unreferenced data back; --delete-unreferenced does nothing without --yes', async () => {
    expect((await cli('init', 'R', '--kdf', 'interactive')).code).toBe(0);
    await writeFile(join(cwd, 'first.txt'), 'first');
    expect((await cli('add', 'R', 'first.txt')).code).toBe(0);
    const oldIndex = readFileSync(join(cwd, 'R', 'index.sqlite'));
    await writeFile(join(cwd, 'second.txt'), 'second, to be recovered');
    expect((await cli('add', 'R', 'second.txt')).code).toBe(0);
    writeFileSync(join(cwd, 'R', 'index.sqlite'), oldIndex);
    const before = await stored(join(cwd, 'R'));

    const unconfirmed = await cli('verify', 'R', '--delete-unreferenced');
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toMatch(/add --yes to confirm/u);
    expect(await stored(join(cwd, 'R'))).toEqual(before);

    const repaired = await cli('verify', 'R', '--repair');
    // The first unlock since the older index was put back warns about that (FORMAT.md 8.8): exit 1.
    expect(repaired.code, repaired.stderr).toBe(1);
    expect(repaired.stderr).toMatch(/This vault is older than when this computer last opened it/u);
    expect(repaired.stdout).toMatch(/^recovered \/lost\+found\/recovered-[0-9a-f]{32} \(23 B\)$/mu);
    expect(repaired.stdout).toMatch(/^Recovered 1 file: 1 into \/lost\+found\.$/mu);
    const restored = await cli('restore', 'R', '/lost+found', '--to', 'out-r');
    expect(restored.code).toBe(0);
    const [name = ''] = await filesBelow(join(cwd, 'out-r'));
    expect(readFileSync(join(cwd, 'out-r', name), 'utf8')).toBe('second, to be recovered');
    expect((await cli('verify', 'R')).code).toBe(0);
    expect(await stored(join(cwd, 'R'))).toEqual(before);
  });

  it('verify --repair gives a file that lost its contents row its contents back, and says so', async () => {
    expect((await cli('init', 'L', '--kdf', 'interactive')).code).toBe(0);
    await writeFile(join(cwd, 'kept.txt'), 'kept, row lost');
    expect((await cli('add', 'L', 'kept.txt')).code).toBe(0);
    // As a writer with the passphrase could leave it (the commitment sealed over the result).
    await editIndexAsWriter(join(cwd, 'L'), (db) => {
      db.prepare('DELETE FROM contents').run();
    });
    const repaired = await cli('verify', 'L', '--repair');
    expect(repaired.stdout).toMatch(/^Recovered 1 file: 1 to its own entry\.$/mu);
    const restored = await cli('restore', 'L', '/kept.txt', '--to', 'out-l');
    expect(restored.code, restored.stderr).toBe(0);
    expect(readFileSync(join(cwd, 'out-l', 'kept.txt'), 'utf8')).toBe('kept, row lost');
    expect((await cli('verify', 'L')).code).toBe(0);
  });
});
