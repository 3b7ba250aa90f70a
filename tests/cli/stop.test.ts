/**
 * How the CLI stops when it is asked to (SIGTERM, SIGHUP), killed (SIGKILL), or when nobody reads its output any
 * more (a closed pipe). Run as real processes: signals and pipes are the point.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { SMALL_FILE_LIMIT } from '../../src/core/index.js';
import { requireBuiltCli, runCli, startCli, tempDir, type RunResult } from './helpers.js';

requireBuiltCli();

const TEMP = /^\.coffer-restore-/u;

/** Output and exit of a started CLI; `onStdoutLine` sees each stdout line as it comes. */
function finish(
  child: ChildProcess,
  onStdoutLine: (line: string) => void = () => undefined,
): Promise<RunResult & { signal: NodeJS.Signals | null }> {
  let stdout = '';
  let stderr = '';
  let pending = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    pending += chunk;
    for (let at = pending.indexOf('\n'); at >= 0; at = pending.indexOf('\n')) {
      onStdoutLine(pending.slice(0, at));
      pending = pending.slice(at + 1);
    }
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((done, fail) => {
    child.on('error', fail);
    child.on('close', (code, signal) => {
      done({ code, signal, stdout, stderr });
    });
  });
}

/** Every `.coffer-restore-*` file below `dir`. */
async function restoreTemps(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => TEMP.test(entry.name)).map((entry) => join(entry.parentPath, entry.name));
}

async function newVault(cwd: string): Promise<void> {
  expect((await runCli(['init', 'vault', '--kdf', 'interactive'], { cwd })).code).toBe(0);
}

describe('a closed output pipe', () => {
  it('ends ls --recursive and ls --json quietly with 141, and the vault is closed cleanly', async () => {
    const cwd = tempDir();
    await newVault(cwd);
    // Some 500 KiB of listing, far more than a pipe holds (64 KiB), so the CLI is still writing when the reader
    // goes. (With less, its last write can fit into the pipe, and then nothing fails: no SIGPIPE for `ls` either.)
    const long = 'n'.repeat(200);
    await mkdir(join(cwd, 'src'));
    for (let i = 0; i < 2000; i++) await writeFile(join(cwd, 'src', `${long}${i}`), '');
    expect((await runCli(['add', 'vault', 'src'], { cwd })).code).toBe(0);

    for (const args of [
      ['ls', 'vault', '/', '--recursive'],
      ['ls', 'vault', '/', '--recursive', '--json'],
    ]) {
      const child = startCli(args, { cwd });
      // Like `| head -c10`: read a little, then close the pipe.
      child.stdout?.once('data', () => child.stdout?.destroy());
      const result = await finish(child);
      expect(result.stderr, args.join(' ')).toBe('');
      expect(result.code, args.join(' ')).toBe(141);
    }
    expect(await runCli(['verify', 'vault'], { cwd })).toMatchObject({ code: 0, stderr: '' });
  });

  it('ends verify --read-data quietly with 141 when nobody reads its output at all', async () => {
    const cwd = tempDir();
    await newVault(cwd);
    await writeFile(join(cwd, 'a.bin'), randomBytes(SMALL_FILE_LIMIT + 1024));
    expect((await runCli(['add', 'vault', 'a.bin'], { cwd })).code).toBe(0);
    // Like `| true`: the reader is gone before anything is written.
    const child = startCli(['verify', 'vault', '--read-data'], { cwd });
    child.stdout?.destroy();
    const result = await finish(child);
    expect(result).toMatchObject({ code: 141, stderr: '' });
    expect(await runCli(['verify', 'vault'], { cwd })).toMatchObject({ code: 0, stderr: '' });
  });
});

describe('SIGTERM and SIGHUP', () => {
  async function vaultAndSource(cwd: string, count: number): Promise<void> {
    await newVault(cwd);
    await mkdir(join(cwd, 'src'));
    // Each just large enough for a blob file, so committed (and reported) on its own.
    for (let i = 0; i < count; i++)
      await writeFile(join(cwd, 'src', `f${i}.bin`), randomBytes(SMALL_FILE_LIMIT + 1024));
  }

  it.each([
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)('%s cancels add cleanly, with a message and exit %i', async (signal, code) => {
    const cwd = tempDir();
    // Enough files that the add is still running when the signal lands (as for the restore below).
    await vaultAndSource(cwd, 48);
    const child = startCli(['add', 'vault', 'src', '--verbose'], { cwd });
    const result = await finish(child, (line) => {
      if (line === 'added /src/f0.bin') child.kill(signal);
    });
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(/^coffer: Cancelled\. [^\n]+\n$/u);
    const reported = result.stdout
      .split('\n')
      .filter((line) => line.startsWith('added '))
      .map((line) => line.slice('added '.length))
      .sort();
    expect(reported.length).toBeLessThan(48);
    const listed = await runCli(['ls', 'vault', '/', '--recursive', '--json'], { cwd });
    expect((JSON.parse(listed.stdout) as { path: string }[]).map((entry) => entry.path).sort()).toEqual(
      reported,
    );
  });

  it('SIGTERM cancels restore with exit 143 and leaves no temp file', async () => {
    const cwd = tempDir();
    // Enough files that the restore is still running when the signal lands: eight were all restored before it on
    // a faster host, which then reported an interrupted exit, not a cancelled restore.
    await vaultAndSource(cwd, 48);
    expect((await runCli(['add', 'vault', 'src'], { cwd })).code).toBe(0);
    const child = startCli(['restore', 'vault', '/', '--to', 'out', '--verbose'], { cwd });
    const result = await finish(child, (line) => {
      if (line.startsWith('restored /src/')) child.kill('SIGTERM');
    });
    expect(result.code).toBe(143);
    expect(result.stderr).toMatch(/^coffer: Cancelled\. Files reported restored are complete/u);
    expect(await restoreTemps(join(cwd, 'out'))).toEqual([]);
  });
});

describe('a restore killed with SIGKILL', () => {
  it('leaves a partial temp file that the next restore removes', async () => {
    const cwd = tempDir();
    await newVault(cwd);
    await mkdir(join(cwd, 'src'));
    await writeFile(join(cwd, 'src', 'big.bin'), randomBytes(48 * 1024 * 1024));
    expect((await runCli(['add', 'vault', 'src'], { cwd })).code).toBe(0);

    const out = join(cwd, 'out');
    const child = startCli(['restore', 'vault', '/', '--to', out], { cwd });
    const done = finish(child);
    // Kill it while the file is being decrypted: once its temp file exists.
    let left: string[] = [];
    while (child.exitCode === null && left.length === 0) {
      left = await restoreTemps(out).catch(() => []);
    }
    child.kill('SIGKILL');
    expect((await done).signal, 'the restore was killed, not finished').toBe('SIGKILL');
    expect(left).toHaveLength(1);
    expect(await restoreTemps(out)).toEqual(left);

    const again = await runCli(['restore', 'vault', '/src/big.bin', '--to', join(cwd, 'elsewhere')], { cwd });
    expect(again.code).toBe(0);
    expect(await restoreTemps(out)).toEqual([]);
  });
});
