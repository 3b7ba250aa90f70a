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

const FALLBACK_WARNING =
  'coffer: warning: the native libsodium module could not be loaded; using the slower WebAssembly build.\n';

/**
 * A `--require` hook that makes `sodium-native` fail to load, in the CLI and in any worker it starts, as it
 * would on a platform without a prebuilt binary. Returns NODE_OPTIONS for the child.
 */
async function withoutSodiumNative(dir: string): Promise<Record<string, string>> {
  const hook = join(dir, 'no-sodium-native.cjs');
  await writeFile(
    hook,
    `const Module = require('node:module');
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === 'sodium-native') throw Object.assign(new Error('no sodium-native here'), { code: 'MODULE_NOT_FOUND' });
  return load.call(this, request, ...rest);
};
`,
  );
  return { NODE_OPTIONS: `--require ${JSON.stringify(hook)}` };
}

// COFFER_CRYPTO_WORKERS=0 turns the worker pool off: every byte then goes through the calling thread's paths
// (what runs when worker threads are unavailable). With the pool on, the built command must find its worker
// (beside the bundle) or it warns, failing the stderr checks. Without sodium-native, every command warns once
// and works on the WebAssembly build, without workers. Enough small files that a pooled run batches them, and a
// file of several batches.
describe.each<{ mode: string; env: (dir: string) => Promise<Record<string, string>>; stderr: string }>([
  { mode: 'with worker threads', env: () => Promise.resolve({}), stderr: '' },
  {
    mode: 'without worker threads',
    env: () => Promise.resolve({ COFFER_CRYPTO_WORKERS: '0' }),
    stderr: '',
  },
  { mode: 'without sodium-native', env: withoutSodiumNative, stderr: FALLBACK_WARNING },
])('coffer $mode', ({ env: environment, stderr }) => {
  it('adds, restores and verifies many small files and a large one, byte for byte', async () => {
    const cwd = tempDir();
    await mkdir(join(cwd, 'src', 'small'), { recursive: true });
    for (let i = 0; i < 300; i++)
      await writeFile(join(cwd, 'src', 'small', `f${i}.bin`), randomBytes(i * 37));
    await writeFile(join(cwd, 'src', 'large.bin'), randomBytes(3 * 1024 * 1024 + 123));
    const env = await environment(cwd);
    const cli = (...args: string[]) => runCli(args, { cwd, env });

    expect(await cli('init', 'vault', '--kdf', 'interactive')).toMatchObject({ code: 0, stderr });
    expect(await cli('add', 'vault', 'src')).toMatchObject({ code: 0, stderr });
    expect(await cli('restore', 'vault', '/src', '--to', 'out')).toMatchObject({ code: 0, stderr });
    const restored = await tree(join(cwd, 'out', 'src'));
    const original = await tree(join(cwd, 'src'));
    expect([...restored.keys()].sort()).toEqual([...original.keys()].sort());
    for (const [path, bytes] of original) expect(restored.get(path)?.equals(bytes), path).toBe(true);
    const verified = await cli('verify', 'vault', '--read-data');
    expect(verified).toMatchObject({ code: 0, stderr });
    expect(verified.stdout).toMatch(/301 files checked/);
  });
});
