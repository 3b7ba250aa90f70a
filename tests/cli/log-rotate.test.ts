import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { requireBuiltCli, runCli, tempDir, type RunResult } from './helpers.js';

requireBuiltCli();

interface LogJson {
  entries: {
    seq: number;
    time: number;
    kind: string;
    outcome: string;
    counts: Record<string, number>;
    flags: string[];
    keyId: number;
  }[];
  dropped: number;
  problems: { kind: string; message: string }[];
}

describe('coffer log and coffer rotate', () => {
  let cwd: string;
  const cli = (...args: string[]): Promise<RunResult> => runCli(args, { cwd });
  const logJson = async (): Promise<LogJson> => {
    const result = await cli('log', 'vault', '--json');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    return JSON.parse(result.stdout) as LogJson;
  };

  beforeAll(async () => {
    cwd = tempDir();
    await mkdir(join(cwd, 'src', 'sub'), { recursive: true });
    await writeFile(join(cwd, 'src', 'a.txt'), 'alpha');
    await writeFile(join(cwd, 'src', 'sub', 'b.txt'), 'bravo');
    expect((await cli('init', 'vault', '--kdf', 'interactive')).code).toBe(0);
  });

  it('log --json lists each command with its counts, failed unlocks included', async () => {
    expect((await cli('add', 'vault', 'src')).code).toBe(0);
    const wrong = await runCli(['ls', 'vault'], { cwd, passphrase: 'wrong' });
    expect(wrong.code).toBe(3);
    expect((await cli('rm', 'vault', '/src/sub')).code).toBe(0);
    const log = await logJson();
    expect(log.problems).toEqual([]);
    expect(log.dropped).toBe(0);
    expect(log.entries.map((entry) => [entry.kind, entry.counts])).toEqual([
      ['unlock', { failedAttempts: 0 }],
      ['add', { files: 2, folders: 2, bytes: 10, problems: 0 }],
      ['unlock', { failedAttempts: 1 }],
      ['delete', { entries: 2 }],
      ['unlock', { failedAttempts: 0 }],
    ]);
    expect(log.entries.map((entry) => entry.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(log.entries.every((entry) => entry.keyId === 1 && entry.outcome === 'done')).toBe(true);
  });

  it('log prints one line per entry, in words', async () => {
    const result = await cli('log', 'vault');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const lines = result.stdout.trim().split('\n');
    expect(lines[1]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d {2}#1 {2}added 2 files and 2 folders \(10 B\)$/u);
    expect(lines[2]).toMatch(/#2 {2}unlocked, after 1 failed attempt since the previous unlock$/u);
    expect(lines[3]).toMatch(/#3 {2}deleted 2 entries$/u);
  });

  it('rotate adds key 2; info --json lists the key ids; new data goes under it and old data still reads', async () => {
    const headerBefore = readFileSync(join(cwd, 'vault', 'coffer.header'));
    const rotated = await cli('rotate', 'vault');
    expect(rotated).toMatchObject({ code: 0, stderr: '' });
    expect(rotated.stdout).toMatch(/New data key 2/u);
    expect(readFileSync(join(cwd, 'vault', 'coffer.header')).length).toBe(headerBefore.length + 76);
    const info = await cli('info', 'vault', '--json');
    expect((JSON.parse(info.stdout) as { keyIds: number[] }).keyIds).toEqual([1, 2]);
    expect((await cli('info', 'vault')).stdout).toMatch(/Data keys: +1, 2 \(new data under 2\)/u);

    await writeFile(join(cwd, 'src', 'c.txt'), 'charlie');
    expect((await cli('add', 'vault', 'src/c.txt')).code).toBe(0);
    expect((await cli('restore', 'vault', '/', '--to', 'out')).code).toBe(0);
    expect(readFileSync(join(cwd, 'out', 'src', 'a.txt'), 'utf8')).toBe('alpha');
    expect(readFileSync(join(cwd, 'out', 'c.txt'), 'utf8')).toBe('charlie');
    expect((await cli('verify', 'vault', '--read-data')).code).toBe(0);

    const log = await logJson();
    const rotate = log.entries.find((entry) => entry.kind === 'rotate');
    expect(rotate?.counts).toEqual({ keyId: 2, previousKeyId: 1 });
    expect(rotate?.keyId).toBe(2);
    expect(log.entries.at(-1)?.keyId).toBe(2);

    const again = await cli('rotate', 'vault', '--json');
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(again.stdout)).toEqual({ keyId: 3, previousKeyId: 2 });
  });

  it('a torn last entry is repaired by the next unlock and shown as such; a damaged one is exit 4', async () => {
    const path = join(cwd, 'vault', 'activity.log');
    const before = readFileSync(path);
    // What a crash during an append leaves. `coffer log` itself repairs it when it logs its own unlock, so the
    // damage is made where that unlock's entry will follow it: in the middle, it no longer looks like a crash.
    truncateSync(path, before.length - 40);
    const torn = await cli('log', 'vault', '--json');
    expect(torn.code).toBe(0);
    const repaired = JSON.parse(torn.stdout) as LogJson;
    expect(repaired.entries.at(-2)).toMatchObject({ kind: 'log-repaired', counts: { tornBytes: 60 } });

    const bytes = readFileSync(path);
    bytes.writeUInt8(bytes.readUInt8(32 + 100 + 50) ^ 1, 32 + 100 + 50);
    writeFileSync(path, bytes);
    const damaged = await cli('log', 'vault');
    expect(damaged.code).toBe(4);
    expect(damaged.stderr).toMatch(/Entry 2 of the activity log does not open/u);
    const verified = await cli('verify', 'vault');
    expect(verified.code).toBe(4);
    expect(verified.stderr).toMatch(/\(activity log\): Entry 2 of the activity log does not open/u);
  });

  it('rotate, with or without --reencrypt, refuses a wrong passphrase without touching the header', async () => {
    const header = readFileSync(join(cwd, 'vault', 'coffer.header'));
    expect((await cli('rotate', 'vault', 'extra')).code).toBe(2);
    expect((await runCli(['rotate', 'vault'], { cwd, passphrase: 'wrong' })).code).toBe(3);
    expect((await runCli(['rotate', 'vault', '--reencrypt'], { cwd, passphrase: 'wrong' })).code).toBe(3);
    expect(readFileSync(join(cwd, 'vault', 'coffer.header'))).toEqual(header);
  });
});
