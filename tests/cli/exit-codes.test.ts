import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { SMALL_FILE_LIMIT } from '../../src/core/index.js';
import { filesBelow, holdVaultOpen, requireBuiltCli, runCli, tempDir, type RunResult } from './helpers.js';

requireBuiltCli();

/** stderr is exactly one "coffer: …" line: no stack trace, no second line. */
function expectOneErrorLine(result: RunResult): void {
  expect(result.stderr).toMatch(/^coffer: [^\n]+\n$/u);
  expect(result.stderr).not.toMatch(/\bat .+:\d+:\d+/u);
}

describe('usage errors exit with 2', () => {
  const cwd = tempDir();
  const cases: [string, string[], RegExp][] = [
    ['no command', [], /No command given/u],
    ['an unknown command', ['frobnicate', 'v'], /Unknown command "frobnicate"/u],
    ['an unknown option', ['ls', 'v', '--bogus'], /Unknown option "--bogus" for "coffer ls"/u],
    ['an unknown global option before the command', ['--bogus', 'ls', 'v'], /Unknown option "--bogus"/u],
    ['missing arguments', ['add', 'v'], /Missing arguments: usage is "coffer add <vault-dir> <path>\.\.\."/u],
    ['too many arguments', ['verify', 'v', 'w'], /Too many arguments/u],
    [
      'a bad --kdf value',
      ['init', 'v', '--kdf', 'extreme'],
      /--kdf: use one of interactive, moderate, sensitive/u,
    ],
    ['an option without its value', ['add', 'v', 'f', '--to'], /--to/u],
    ['restore without --to', ['restore', 'v', '/'], /restore needs --to <dest-dir>/u],
    [
      'mv --rename with two paths',
      ['mv', 'v', '/a', '/b', 'c', '--rename'],
      /one vault path and a new name/u,
    ],
  ];
  it.each(cases)('%s', async (_name, args, message) => {
    const result = await runCli(args, { cwd });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expectOneErrorLine(result);
    expect(result.stderr).toMatch(message);
  });

  it('--passphrase as an argument is refused without echoing its value', async () => {
    for (const args of [
      ['ls', 'v', '--passphrase', 'sekrit-value'],
      ['ls', 'v', '--passphrase=sekrit-value'],
      ['--passphrase=sekrit-value', 'init', 'v'],
    ]) {
      const result = await runCli(args, { cwd, passphrase: null });
      expect(result.code).toBe(2);
      expectOneErrorLine(result);
      expect(result.stderr).toMatch(/--passphrase is not accepted/u);
      expect(result.stderr).not.toContain('sekrit-value');
    }
    expect(existsSync(join(cwd, 'v'))).toBe(false);
  });
});

describe('help and version', () => {
  const cwd = tempDir();

  it('--help lists every command and exits 0', async () => {
    const result = await runCli(['--help'], { cwd, passphrase: null });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    for (const command of ['init', 'add', 'ls', 'restore', 'mkdir', 'mv', 'rm', 'verify', 'info']) {
      expect(result.stdout).toMatch(new RegExp(`^ {2}${command} `, 'mu'));
    }
  });

  it('<command> --help shows that command and its options', async () => {
    const result = await runCli(['restore', '--help'], { cwd, passphrase: null });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^Usage: coffer restore <vault-dir> <vault-path>\.\.\. --to <dest-dir>/u);
    expect(result.stdout).toContain('--overwrite');
  });

  it('--version prints the package version', async () => {
    const { version } = JSON.parse(
      await readFile(join(import.meta.dirname, '../../package.json'), 'utf8'),
    ) as {
      version: string;
    };
    const result = await runCli(['--version'], { cwd, passphrase: null });
    expect(result).toEqual({ code: 0, stdout: `coffer ${version}\n`, stderr: '' });
  });
});

describe('failures map to their exit codes', () => {
  let cwd: string;
  const cli = (...args: string[]): Promise<RunResult> => runCli(args, { cwd });

  beforeEach(async () => {
    cwd = tempDir();
    expect((await cli('init', 'vault', '--kdf', 'interactive')).code).toBe(0);
  });

  it('a wrong passphrase exits 3', async () => {
    const result = await runCli(['ls', 'vault'], { cwd, passphrase: 'not the passphrase' });
    expect(result.code).toBe(3);
    expectOneErrorLine(result);
    expect(result.stderr).toMatch(/^coffer: Wrong passphrase/u);
  });

  it('--debug adds the stack trace', async () => {
    const result = await runCli(['ls', 'vault', '--debug'], { cwd, passphrase: 'not the passphrase' });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^coffer: Wrong passphrase[^\n]*\nWrongPassphraseError: [^\n]*\n\s+at /u);
  });

  it('a folder that is not a vault exits 1 with one line', async () => {
    await mkdir(join(cwd, 'plain'));
    const result = await cli('ls', 'plain');
    expect(result.code).toBe(1);
    expectOneErrorLine(result);
    expect(result.stderr).toMatch(/is not a Coffer vault/u);
  });

  it('a vault held open by another process exits 5, and works again once it is released', async () => {
    const release = await holdVaultOpen(join(cwd, 'vault'));
    try {
      const result = await cli('ls', 'vault');
      expect(result.code).toBe(5);
      expectOneErrorLine(result);
      expect(result.stderr).toMatch(/in use/u);
    } finally {
      await release();
    }
    expect(await cli('ls', 'vault')).toMatchObject({ code: 0, stderr: '' });
  });

  describe('damaged contents', () => {
    const big = randomBytes(SMALL_FILE_LIMIT + 256 * 1024);

    /** Adds a large file (stored as a blob file) and two small healthy ones; returns the blob's path. */
    async function vaultWithBlob(): Promise<string> {
      await mkdir(join(cwd, 'src'));
      await writeFile(join(cwd, 'src', 'big.bin'), big);
      await writeFile(join(cwd, 'src', 'a.txt'), 'healthy a');
      await writeFile(join(cwd, 'src', 'b.txt'), 'healthy b');
      expect((await cli('add', 'vault', 'src')).code).toBe(0);
      const blobs = await filesBelow(join(cwd, 'vault', 'blobs'));
      expect(blobs).toHaveLength(1);
      return join(cwd, 'vault', 'blobs', blobs[0] ?? '');
    }

    it('a flipped byte: verify --read-data and restore exit 4; restore still restores the healthy files', async () => {
      const blob = await vaultWithBlob();
      const bytes = await readFile(blob);
      const at = Math.floor(bytes.length / 2);
      bytes.writeUInt8((bytes.readUInt8(at) ^ 0x40) & 0xff, at);
      await writeFile(blob, bytes);

      const verify = await cli('verify', 'vault', '--read-data');
      expect(verify.code).toBe(4);
      expect(verify.stderr).toMatch(/^coffer: warning: [^\n]*Integrity check failed/u);
      expect(verify.stdout).toMatch(/^Damage found: 1 problem/u);

      const restore = await cli('restore', 'vault', '/', '--to', 'out');
      expect(restore.code).toBe(4);
      expect(restore.stderr).toMatch(/^coffer: warning: [^\n]*big\.bin/u);
      expect(await readFile(join(cwd, 'out', 'src', 'a.txt'), 'utf8')).toBe('healthy a');
      expect(await readFile(join(cwd, 'out', 'src', 'b.txt'), 'utf8')).toBe('healthy b');
      // Nothing unauthenticated is released: the damaged file is not there at all, not even in part.
      expect(await filesBelow(join(cwd, 'out'))).toEqual(['src/a.txt', 'src/b.txt']);
    });

    it('a truncated blob: even verify without --read-data exits 4', async () => {
      const blob = await vaultWithBlob();
      await truncate(blob, (await stat(blob)).size - 100);
      const verify = await cli('verify', 'vault');
      expect(verify.code).toBe(4);
      expect(verify.stderr).toMatch(/^coffer: warning: /u);
      const restore = await cli('restore', 'vault', '/src/big.bin', '/src/a.txt', '--to', 'out');
      expect(restore.code).toBe(4);
      expect(await filesBelow(join(cwd, 'out'))).toEqual(['a.txt']);
    });
  });
});
