import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { requireBuiltCli, runCli, tempDir, type RunResult } from './helpers.js';

requireBuiltCli();

describe('coffer add --on-existing', () => {
  let cwd: string;
  const cli = (...args: string[]): Promise<RunResult> => runCli(args, { cwd });
  const listed = async (): Promise<{ path: string; size: number }[]> =>
    (JSON.parse((await cli('ls', 'vault', '--json')).stdout) as { path: string; size: number }[]).map(
      ({ path, size }) => ({ path, size }),
    );

  beforeAll(async () => {
    cwd = tempDir();
    await mkdir(join(cwd, 'old'));
    await mkdir(join(cwd, 'new'));
    await writeFile(join(cwd, 'old', 'doc.txt'), 'old');
    await writeFile(join(cwd, 'new', 'doc.txt'), 'newer bytes');
    expect((await cli('init', 'vault', '--kdf', 'interactive')).code).toBe(0);
    expect((await cli('add', 'vault', 'old/doc.txt')).code).toBe(0);
  });

  it('fails by default (exit 1, a warning), then keeps both, skips and replaces as asked', async () => {
    const refused = await cli('add', 'vault', 'new/doc.txt');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/already in the vault/u);

    const both = await cli('add', 'vault', 'new/doc.txt', '--on-existing', 'keep-both');
    expect(both).toMatchObject({ code: 0, stderr: '' });
    expect(await listed()).toEqual([
      { path: '/doc (2).txt', size: 11 },
      { path: '/doc.txt', size: 3 },
    ]);

    const skipped = await cli('add', 'vault', 'new/doc.txt', '--on-existing', 'skip');
    expect(skipped).toMatchObject({ code: 0, stderr: '' });
    expect(skipped.stdout).toMatch(/1 existing name skipped as asked/u);

    const replaced = await cli('add', 'vault', 'new/doc.txt', '--on-existing', 'replace');
    expect(replaced).toMatchObject({ code: 0, stderr: '' });
    expect(replaced.stdout).toMatch(/1 file replaced/u);
    expect(await listed()).toEqual([
      { path: '/doc (2).txt', size: 11 },
      { path: '/doc.txt', size: 11 },
    ]);
  });

  it('refuses an unknown choice as a usage error', async () => {
    const result = await cli('add', 'vault', 'new/doc.txt', '--on-existing', 'overwrite');
    expect(result.code).toBe(2);
  });
});
