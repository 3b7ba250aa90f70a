import { existsSync, statfsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { damageIndexPage } from '../helpers/damage.js';
import { announceSkip, canMount, mountTmpfs, mountUnavailableReason, unmountAll } from '../helpers/mounts.js';
import { filesBelow, requireBuiltCli, runCli, tempDir, type RunResult } from './helpers.js';

requireBuiltCli();

/** stderr is exactly one "coffer: …" line: no stack trace, no "unexpected error". */
function expectOneClearLine(result: RunResult): void {
  expect(result.stderr).toMatch(/^coffer: [^\n]+\n$/u);
  expect(result.stderr).not.toMatch(/unexpected error/iu);
}

describe('damage and a full disk under the index', () => {
  afterEach(() => {
    unmountAll();
  });

  it('a damaged index page: verify exits 4 with one line naming the index and what to do', async () => {
    const cwd = tempDir();
    await mkdir(join(cwd, 'src'));
    await writeFile(join(cwd, 'src', 'a.txt'), 'alpha');
    expect((await runCli(['init', 'vault', '--kdf', 'interactive'], { cwd })).code).toBe(0);
    expect((await runCli(['add', 'vault', 'src'], { cwd })).code).toBe(0);
    await damageIndexPage(join(cwd, 'vault'), 'contents');

    const result = await runCli(['verify', 'vault'], { cwd });
    expect(result.code).toBe(4);
    expectOneClearLine(result);
    expect(result.stderr).toContain('index.sqlite');
    expect(result.stderr).toMatch(/damaged/u);
    expect(result.stderr).toMatch(/backup/u);
  });

  if (!canMount) announceSkip('the CLI disk-full test', mountUnavailableReason ?? 'mount unavailable');
  it.skipIf(!canMount)(
    'the index running out of disk: add exits 1 saying the disk is full, and the vault still verifies',
    async () => {
      const cwd = tempDir();
      const mount = mountTmpfs(4 * 1024 * 1024);
      const vault = join(mount, 'vault');
      for (let i = 0; i < 400; i++) {
        await mkdir(join(cwd, 'many'), { recursive: true });
        await writeFile(join(cwd, 'many', `f${i}.txt`), `${'x'.repeat(200)}${i}`);
      }
      expect((await runCli(['init', vault, '--kdf', 'interactive'], { cwd })).code).toBe(0);
      // An unlock starts the activity log, whose first page would otherwise come out of the space measured below.
      expect((await runCli(['info', vault], { cwd })).code).toBe(0);
      // The pack of 400 small files fits in what is left; the index's 64 KiB pages and their journal do not.
      const { bavail, bsize } = statfsSync(mount);
      await writeFile(join(mount, 'filler'), Buffer.alloc(bavail * bsize - 270 * 1024));

      const result = await runCli(['add', vault, 'many'], { cwd });
      expect(result.code).toBe(1);
      expectOneClearLine(result);
      expect(result.stderr).toMatch(/index\.sqlite.*the disk is full\. Free some space and try again\./u);
      expect(await filesBelow(join(vault, 'packs'))).toEqual([]);
      expect(await filesBelow(join(vault, 'tmp'))).toEqual([]);
      expect(existsSync(join(vault, 'index.sqlite-journal'))).toBe(false);

      const verify = await runCli(['verify', vault], { cwd });
      expect(verify.stderr).toBe('');
      expect(verify.code).toBe(0);
    },
  );
});

describe('the vault folder is off limits', () => {
  let cwd: string;

  beforeEach(async () => {
    cwd = tempDir();
    await mkdir(join(cwd, 'src'));
    await writeFile(join(cwd, 'src', 'a.txt'), 'alpha');
    expect((await runCli(['init', 'vault', '--kdf', 'interactive'], { cwd })).code).toBe(0);
    expect((await runCli(['add', 'vault', 'src'], { cwd })).code).toBe(0);
  });

  it('restore --to the vault folder or a folder in it exits 1 with one line, and writes nothing there', async () => {
    const before = await filesBelow(join(cwd, 'vault'));
    for (const destination of ['vault', 'vault/tmp', 'src/../vault/new']) {
      const result = await runCli(['restore', 'vault', '/', '--to', destination], { cwd });
      expect(result.code, destination).toBe(1);
      expectOneClearLine(result);
      expect(result.stderr).toContain(`Cannot restore into "${destination}"`);
      expect(result.stderr).toMatch(/Choose a folder outside the vault folder/u);
    }
    expect(await filesBelow(join(cwd, 'vault'))).toEqual(before);
    expect(existsSync(join(cwd, 'vault', 'new'))).toBe(false);
  });

  it('add of the vault folder, a path in it, or a folder holding it exits 1 with one line, and adds nothing', async () => {
    for (const [source, message] of [
      ['vault', /is in the vault folder/u],
      ['vault/tmp', /is in the vault folder/u],
      ['.', /the vault folder "vault" is inside it/u],
    ] as const) {
      const result = await runCli(['add', 'vault', source], { cwd });
      expect(result.code, source).toBe(1);
      expectOneClearLine(result);
      expect(result.stderr).toContain(`Cannot add "${source}"`);
      expect(result.stderr).toMatch(message);
    }
    const listing = await runCli(['ls', 'vault', '/', '--recursive'], { cwd });
    expect(listing.code).toBe(0);
    expect(listing.stdout.trim().split('\n')).toHaveLength(2);
  });
});
