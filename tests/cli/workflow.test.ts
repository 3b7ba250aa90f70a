import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { requireBuiltCli, runCli, tempDir, type RunResult } from './helpers.js';

requireBuiltCli();

interface Listed {
  path: string;
  type: 'file' | 'folder';
  size: number;
  mtime: number;
}

/** The whole life of one vault, command by command, through the built CLI with every stream a pipe. */
describe('coffer workflow', () => {
  let cwd: string;
  const cli = (...args: string[]): Promise<RunResult> => runCli(args, { cwd });
  const listJson = async (...args: string[]): Promise<Listed[]> => {
    const result = await cli('ls', 'vault', ...args, '--json');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    return JSON.parse(result.stdout) as Listed[];
  };
  const big = randomBytes(300 * 1024);

  beforeAll(async () => {
    cwd = tempDir();
    await mkdir(join(cwd, 'src', 'tree', 'deeper'), { recursive: true });
    await writeFile(join(cwd, 'src', 'hello.txt'), 'hello, world\n');
    await writeFile(join(cwd, 'src', 'tree', 'big.bin'), big);
    await writeFile(join(cwd, 'src', 'tree', 'deeper', 'empty.txt'), '');
    await writeFile(join(cwd, 'src', 'tree', 'deeper', 'notes.md'), '# notes\n');
    // A whole-second time far from now, so a preserved mtime cannot be mistaken for "just written".
    const old = new Date('2001-02-03T04:05:06.789Z');
    await utimes(join(cwd, 'src', 'hello.txt'), old, old);
  });

  it('init creates a vault and prints nothing on stderr', async () => {
    const result = await cli('init', 'vault', '--kdf', 'interactive');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('Created the vault');
    expect(existsSync(join(cwd, 'vault', 'coffer.header'))).toBe(true);
  });

  it('init refuses a folder that is already a vault', async () => {
    const result = await cli('init', 'vault', '--kdf', 'interactive');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^coffer: .*not empty/u);
  });

  it('add stores a file at the root and, with --verbose, prints each committed item', async () => {
    const result = await cli('add', 'vault', 'src/hello.txt', '--verbose');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout.split('\n').filter((line) => line.startsWith('added '))).toEqual([
      'added /hello.txt',
    ]);
  });

  it('add --to creates a missing folder and adds a folder tree into it', async () => {
    const result = await cli('add', 'vault', 'src/tree', '--to', '/Archive/2024', '--verbose');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const added = result.stdout
      .split('\n')
      .filter((line) => line.startsWith('added '))
      .sort();
    expect(added).toEqual(
      [
        '/Archive/2024/tree',
        '/Archive/2024/tree/big.bin',
        '/Archive/2024/tree/deeper',
        '/Archive/2024/tree/deeper/empty.txt',
        '/Archive/2024/tree/deeper/notes.md',
      ].map((path) => `added ${path}`),
    );
    expect(result.stdout).toMatch(/Done: 3 files and 2 folders added/u);
  });

  it('ls --json prints exactly path, type, size and an integer mtime', async () => {
    const source = await stat(join(cwd, 'src', 'hello.txt'));
    const entries = await listJson();
    expect(entries).toEqual([
      { path: '/Archive', type: 'folder', size: 0, mtime: expect.any(Number) as number },
      { path: '/hello.txt', type: 'file', size: 13, mtime: Math.trunc(source.mtimeMs) },
    ]);
    for (const entry of entries) {
      expect(Object.keys(entry).sort()).toEqual(['mtime', 'path', 'size', 'type']);
      expect(Number.isInteger(entry.mtime)).toBe(true);
    }
  });

  it('ls --recursive lists everything below a folder, depth first', async () => {
    const entries = await listJson('/Archive', '--recursive');
    expect(entries.map((entry) => entry.path)).toEqual([
      '/Archive/2024',
      '/Archive/2024/tree',
      '/Archive/2024/tree/deeper',
      '/Archive/2024/tree/deeper/empty.txt',
      '/Archive/2024/tree/deeper/notes.md',
      '/Archive/2024/tree/big.bin',
    ]);
    expect(entries.find((entry) => entry.path.endsWith('big.bin'))?.size).toBe(big.length);
  });

  it('ls without --json prints a readable table; a relative vault path means one from the root', async () => {
    const result = await cli('ls', 'vault', 'Archive/2024/tree');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^d\s+-\s+\d{4}-\d\d-\d\d \d\d:\d\d {2}deeper\/$/u);
    expect(lines[1]).toMatch(/^-\s+300 KiB\s+\d{4}-\d\d-\d\d \d\d:\d\d {2}big\.bin$/u);
  });

  it('ls of a missing folder fails with one line on stderr', async () => {
    const result = await cli('ls', 'vault', '/nope');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^coffer: "\/nope" does not exist in the vault[^\n]*\n$/u);
  });

  it('restore writes byte-identical files with their modification times', async () => {
    const result = await cli('restore', 'vault', '/', '--to', 'out', '--verbose');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('restored /hello.txt\n');
    expect(result.stdout).toContain('restored /Archive/2024/tree/big.bin\n');
    expect(await readFile(join(cwd, 'out', 'hello.txt'), 'utf8')).toBe('hello, world\n');
    expect((await readFile(join(cwd, 'out', 'Archive', '2024', 'tree', 'big.bin'))).equals(big)).toBe(true);
    expect(await readFile(join(cwd, 'out', 'Archive', '2024', 'tree', 'deeper', 'empty.txt'))).toHaveLength(
      0,
    );
    const source = await stat(join(cwd, 'src', 'hello.txt'));
    const restored = await stat(join(cwd, 'out', 'hello.txt'));
    expect(Math.abs(restored.mtimeMs - source.mtimeMs)).toBeLessThan(1);
  });

  it('restore leaves an existing file alone without --overwrite, and replaces it with it', async () => {
    const target = join(cwd, 'again', 'hello.txt');
    await mkdir(join(cwd, 'again'));
    await writeFile(target, 'local edits');
    const refused = await cli('restore', 'vault', '/hello.txt', '--to', 'again');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^coffer: warning: .*already exists/u);
    expect(refused.stdout).toContain('To replace the existing files, restore again with --overwrite.');
    expect(await readFile(target, 'utf8')).toBe('local edits');
    const replaced = await cli('restore', 'vault', '/hello.txt', '--to', 'again', '--overwrite');
    expect(replaced).toMatchObject({ code: 0, stderr: '' });
    expect(await readFile(target, 'utf8')).toBe('hello, world\n');
  });

  it('mkdir, mv into a folder, mv --rename and rm reorganise the vault', async () => {
    expect(await cli('mkdir', 'vault', '/Inbox', '/Projects/Active')).toMatchObject({ code: 0, stderr: '' });
    expect(await cli('mv', 'vault', '/hello.txt', '/Archive/2024/tree/big.bin', '/Inbox')).toMatchObject({
      code: 0,
      stderr: '',
    });
    expect(await cli('mv', 'vault', '/Inbox/hello.txt', 'greeting.txt', '--rename')).toMatchObject({
      code: 0,
      stderr: '',
    });
    expect(await cli('rm', 'vault', '/Archive/2024/tree/deeper', '/Projects')).toMatchObject({
      code: 0,
      stderr: '',
    });
    const paths = (await listJson('/', '--recursive')).map((entry) => entry.path);
    expect(paths).toEqual([
      '/Archive',
      '/Archive/2024',
      '/Archive/2024/tree',
      '/Inbox',
      '/Inbox/big.bin',
      '/Inbox/greeting.txt',
    ]);
  });

  it('mv into a folder that does not exist fails and moves nothing', async () => {
    const result = await cli('mv', 'vault', '/Inbox/big.bin', '/Nowhere');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^coffer: .*does not exist/u);
    expect((await listJson('/Inbox')).map((entry) => entry.path)).toContain('/Inbox/big.bin');
  });

  it('verify and verify --read-data report a healthy vault', async () => {
    const quick = await cli('verify', 'vault');
    expect(quick).toMatchObject({ code: 0, stderr: '' });
    expect(quick.stdout).toMatch(/^OK: 2 files checked; no damage found\./u);
    const full = await cli('verify', 'vault', '--read-data');
    expect(full).toMatchObject({ code: 0, stderr: '' });
    expect(full.stdout).toMatch(/^OK: 2 files checked \(300 KiB read and authenticated\)/u);
  });

  it('info --json prints the vault information object', async () => {
    const result = await cli('info', 'vault', '--json');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const info = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(info).toMatchObject({
      formatVersion: 1,
      format: '1.1',
      locked: false,
      readOnly: false,
      kdf: [{ opslimit: 2, memlimitKiB: 64 * 1024 }],
      contentPadding: 'padme',
      files: 2,
      folders: 4,
      totalBytes: big.length + 13,
    });
    expect(info.vaultId).toMatch(/^[0-9a-f]{32}$/u);
    expect(info.storedBytes).toBeGreaterThan(big.length);
  });

  it('info without --json is readable and names the preset', async () => {
    const result = await cli('info', 'vault');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/Argon2id, 2 passes, 64 MiB \(interactive\)/u);
    expect(result.stdout).toMatch(/Files:\s+2\n/u);
    expect(result.stdout).toMatch(/Size padding:\s+padme\n/u);
  });

  it('init --padding none makes a vault whose stored files are exactly their size plus the blob overhead', async () => {
    const init = await cli('init', 'plain', '--kdf', 'interactive', '--padding', 'none');
    expect(init).toMatchObject({ code: 0, stderr: '' });
    expect(init.stdout).toContain('size padding: none');
    expect(await cli('add', 'plain', 'src/tree/big.bin')).toMatchObject({ code: 0, stderr: '' });
    const packs = await readdir(join(cwd, 'plain', 'packs'));
    expect(packs).toHaveLength(1);
    // 300 KiB: five 64 KiB chunks, each with its 16-byte tag, after the 52-byte blob header.
    expect((await stat(join(cwd, 'plain', 'packs', packs[0] ?? ''))).size).toBe(52 + big.length + 5 * 16);
    const info = await cli('info', 'plain');
    expect(info.stdout).toMatch(/Size padding:\s+none\n/u);
  });

  it('add skips what it cannot store with a warning, adds the rest, and exits 1', async () => {
    await mkdir(join(cwd, 'mixed'));
    await writeFile(join(cwd, 'mixed', 'ok.txt'), 'fine');
    await symlink(join(cwd, 'mixed', 'ok.txt'), join(cwd, 'mixed', 'link'));
    const result = await cli('add', 'vault', 'mixed', 'missing-file', '--verbose');
    expect(result.code).toBe(1);
    const warnings = result.stderr.trimEnd().split('\n');
    expect(warnings).toHaveLength(2);
    for (const warning of warnings) expect(warning).toMatch(/^coffer: warning: Skipped /u);
    expect(result.stdout).toContain('added /mixed/ok.txt\n');
    expect((await listJson('/mixed')).map((entry) => entry.path)).toEqual(['/mixed/ok.txt']);
  });
});
