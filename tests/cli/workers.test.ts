import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { requireBuiltCli, runCli, tempDir } from './helpers.js';

requireBuiltCli();

/** Every file below `dir`, relative to it, with its bytes. */
async function tree(dir: string): Promise<Map<string, Buffer>> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  const files = entries.filter((entry) => entry.isFile());
  return new Map(
    await Promise.all(
      files.map(async (entry) => {
        const path = join(entry.parentPath, entry.name);
        return [path.slice(dir.length + 1), await readFile(path)] as const;
      }),
    ),
  );
}

// COFFER_CRYPTO_WORKERS=0 turns the worker pool off: every byte then goes through the calling thread's paths
// (what runs when worker threads or sodium-native are unavailable). With the pool on, the built command must find
// its worker (beside the bundle) or it warns, failing the empty-stderr checks. Enough small files that a pooled run
// batches them, and a file of several batches.
describe.each<{ mode: string; env: Record<string, string> }>([
  { mode: 'with worker threads', env: {} },
  { mode: 'without worker threads', env: { COFFER_CRYPTO_WORKERS: '0' } },
])('coffer $mode', ({ env }) => {
  it('adds, restores and verifies many small files and a large one, byte for byte', async () => {
    const cwd = tempDir();
    await mkdir(join(cwd, 'src', 'small'), { recursive: true });
    for (let i = 0; i < 300; i++)
      await writeFile(join(cwd, 'src', 'small', `f${i}.bin`), randomBytes(i * 37));
    await writeFile(join(cwd, 'src', 'large.bin'), randomBytes(3 * 1024 * 1024 + 123));
    const cli = (...args: string[]) => runCli(args, { cwd, env });

    expect(await cli('init', 'vault', '--kdf', 'interactive')).toMatchObject({ code: 0, stderr: '' });
    expect(await cli('add', 'vault', 'src')).toMatchObject({ code: 0, stderr: '' });
    expect(await cli('restore', 'vault', '/src', '--to', 'out')).toMatchObject({ code: 0, stderr: '' });
    const restored = await tree(join(cwd, 'out', 'src'));
    const original = await tree(join(cwd, 'src'));
    expect([...restored.keys()].sort()).toEqual([...original.keys()].sort());
    for (const [path, bytes] of original) expect(restored.get(path)?.equals(bytes), path).toBe(true);
    const verified = await cli('verify', 'vault', '--read-data');
    expect(verified).toMatchObject({ code: 0, stderr: '' });
    expect(verified.stdout).toMatch(/301 files checked/);
  });
});
