import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { configureHostRuntime, hostRuntime, Vault } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { passphrase, tempDir, track, writeTree } from '../helpers/vault.js';

/** sodium-native's exports: the same object the engine's backend calls into, so a stand-in here is seen there. */
const sodiumNative = createRequire(import.meta.url)('sodium-native') as {
  sodium_malloc: (size: number) => Buffer;
};
const realMalloc = sodiumNative.sodium_malloc;
let mallocCalls = 0;

beforeEach(() => {
  mallocCalls = 0;
  sodiumNative.sodium_malloc = (size) => {
    mallocCalls += 1;
    return realMalloc(size);
  };
});
afterEach(() => {
  sodiumNative.sodium_malloc = realMalloc;
  configureHostRuntime({ guardedKeyMemory: true });
});

/** Creates a vault, adds a file, locks, unlocks and restores it: every place the engine holds a long-lived key. */
async function roundTrip(): Promise<Buffer> {
  const root = tempDir();
  await writeTree(join(root, 'src'), { 'a.txt': 'attack at dawn' });
  const dir = join(root, 'vault');
  const vault = track(await Vault.create(dir, passphrase(), { kdf: 'interactive', sodium: nativeSodium }));
  await vault.add([join(root, 'src', 'a.txt')], '/');
  vault.lock();
  await vault.unlock(passphrase());
  await vault.restore(['/a.txt'], join(root, 'out'));
  return readFile(join(root, 'out', 'a.txt'));
}

describe('key memory under Electron (guardedKeyMemory off)', () => {
  it('defaults to guarded memory outside Electron', () => {
    expect(process.versions.electron).toBeUndefined();
    expect(hostRuntime().guardedKeyMemory).toBe(true);
  });

  it('creates, unlocks, adds and restores without ever calling sodium_malloc', async () => {
    configureHostRuntime({ guardedKeyMemory: false });
    expect((await roundTrip()).toString()).toBe('attack at dawn');
    expect(mallocCalls).toBe(0);
  });

  it('uses sodium_malloc for the same work when guarded memory is on (the switch is what changes it)', async () => {
    configureHostRuntime({ guardedKeyMemory: true });
    expect((await roundTrip()).toString()).toBe('attack at dawn');
    expect(mallocCalls).toBeGreaterThan(0);
  });

  it('still wipes keys on lock with plain buffers', () => {
    configureHostRuntime({ guardedKeyMemory: false });
    const key = nativeSodium.secureAlloc(32);
    key.fill(7);
    nativeSodium.memzero(key);
    expect(key.every((byte) => byte === 0)).toBe(true);
    expect(mallocCalls).toBe(0);
  });
});

describe('the better-sqlite3 addon the index loads (sqliteNativeBinding)', () => {
  afterEach(() => {
    configureHostRuntime({ sqliteNativeBinding: undefined });
  });

  it('loads the addon named, so Electron can use its own build', async () => {
    configureHostRuntime({ sqliteNativeBinding: join(tempDir(), 'no-such-addon.node') });
    await expect(
      Vault.create(join(tempDir(), 'vault'), passphrase(), { kdf: 'interactive', sodium: nativeSodium }),
    ).rejects.toThrow(/no-such-addon\.node/);
  });

  it('works with an explicitly named build', async () => {
    const require = createRequire(import.meta.url);
    const addon = join(
      require.resolve('better-sqlite3/package.json'),
      '..',
      'build',
      'Release',
      'better_sqlite3.node',
    );
    configureHostRuntime({ sqliteNativeBinding: addon });
    const vault = track(
      await Vault.create(join(tempDir(), 'vault'), passphrase(), {
        kdf: 'interactive',
        sodium: nativeSodium,
      }),
    );
    expect(vault.list('/')).toEqual([]);
  });
});
