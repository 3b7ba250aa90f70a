import { readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

import { describe, expect, it } from 'vitest';

import type { SodiumBackend } from '../../src/core/crypto/sodium.js';
import { CancelledError, Vault, VaultLockedError } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { passphrase, tempDir, track, writeTree } from '../helpers/vault.js';

// Everything in this thread, so every key the vault uses passes through the recording backend below (the worker
// pool's copies are transferred to and wiped in the workers; see pool.test.ts).
process.env.COFFER_CRYPTO_WORKERS = '0';

const BIG = 8 * 1024 * 1024;

/** The native backend, keeping every buffer used as a key: KEK and DEKs (secure memory), subkeys (their uses). */
function recordingSodium(): { sodium: SodiumBackend; keys: Uint8Array[] } {
  const keys: Uint8Array[] = [];
  const keep = (key: Uint8Array | undefined): void => {
    if (key && !keys.includes(key)) keys.push(key);
  };
  const sodium: SodiumBackend = {
    ...nativeSodium,
    secureAlloc(length) {
      const buffer = nativeSodium.secureAlloc(length);
      keep(buffer);
      return buffer;
    },
    aeadEncrypt(plaintext, aad, nonce, key) {
      keep(key);
      return nativeSodium.aeadEncrypt(plaintext, aad, nonce, key);
    },
    aeadDecrypt(ciphertext, aad, nonce, key) {
      keep(key);
      return nativeSodium.aeadDecrypt(ciphertext, aad, nonce, key);
    },
    aeadEncryptDetached(ciphertext, tag, message, aad, nonce, key) {
      keep(key);
      nativeSodium.aeadEncryptDetached(ciphertext, tag, message, aad, nonce, key);
    },
    aeadDecryptDetached(message, ciphertext, tag, aad, nonce, key) {
      keep(key);
      return nativeSodium.aeadDecryptDetached(message, ciphertext, tag, aad, nonce, key);
    },
    blake2b(outLength, message, key) {
      keep(key);
      return nativeSodium.blake2b(outLength, message, key);
    },
    blake2bInto(out, message, key) {
      keep(key);
      nativeSodium.blake2bInto(out, message, key);
    },
  };
  return { sodium, keys };
}

/** Keys that still hold something other than zeros. */
function liveKeys(keys: readonly Uint8Array[]): number {
  return keys.filter((key) => key.some((byte) => byte !== 0)).length;
}

async function vaultWithBigFile() {
  const { sodium, keys } = recordingSodium();
  const root = tempDir();
  const dir = join(root, 'vault');
  const vault = track(await Vault.create(dir, passphrase(), { kdf: 'interactive', sodium }));
  await writeTree(join(root, 'src'), { 'big.bin': Buffer.alloc(BIG, 0x42) });
  await vault.add([join(root, 'src', 'big.bin')]);
  return { vault, dir, root, keys };
}

/** A progress callback that locks the vault once some bytes are done, and what it found right after the lock. */
function lockMidway(vault: Vault, keys: readonly Uint8Array[]) {
  const seen: { liveAfterLock?: number } = {};
  const onProgress = (progress: { bytesDone: number }): void => {
    if (seen.liveAfterLock !== undefined || progress.bytesDone === 0) return;
    vault.lock();
    seen.liveAfterLock = liveKeys(keys);
  };
  return { onProgress, seen };
}

/** The file descriptors of this process open on `path` (Linux: read from /proc/self/fd). */
function openDescriptorsOf(path: string): string[] {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(join('/proc/self/fd', fd)) === path;
    } catch {
      return false; // closed while listed (the listing's own descriptor, say)
    }
  });
}

function errorOf(stream: Readable): Promise<unknown> {
  return new Promise((resolve) => stream.once('error', resolve));
}

describe('locking', () => {
  it('wipes every key at once while a read stream is paused, and ends the stream without it being read', async () => {
    const { vault, keys } = await vaultWithBigFile();
    const stream = vault.read('/big.bin');
    await new Promise((resolve) => stream.once('data', resolve));
    stream.pause();
    // Decrypting ahead until the stream's buffers are full: the stream's own subkey is among the live keys.
    expect(liveKeys(keys)).toBeGreaterThan(0);
    const failed = errorOf(stream);
    vault.lock();
    expect(liveKeys(keys)).toBe(0);
    expect(await failed).toBeInstanceOf(CancelledError);
    await vault.released();
    expect(stream.destroyed).toBe(true);
  });

  it('a read stream made before a lock and first read after it fails as locked', async () => {
    const { vault } = await vaultWithBigFile();
    const stream = vault.read('/big.bin');
    vault.lock();
    const failed = errorOf(stream);
    stream.resume();
    expect(await failed).toBeInstanceOf(VaultLockedError);
  });

  it('stops an add in flight: its keys are wiped at once, and it leaves nothing behind', async () => {
    const { sodium, keys } = recordingSodium();
    const root = tempDir();
    const dir = join(root, 'vault');
    const vault = track(await Vault.create(dir, passphrase(), { kdf: 'interactive', sodium }));
    await writeTree(join(root, 'src'), { 'big.bin': Buffer.alloc(BIG, 0x43) });
    const { onProgress, seen } = lockMidway(vault, keys);
    const adding = vault.add([join(root, 'src', 'big.bin')], '/', { onProgress });
    await expect(adding).rejects.toBeInstanceOf(CancelledError);
    expect(seen.liveAfterLock).toBe(0);
    await vault.released();
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
    expect(readdirSync(join(dir, 'blobs'))).toEqual([]);
    await vault.unlock(passphrase());
    expect(vault.list('/')).toEqual([]);
  });

  it.runIf(process.platform === 'linux').each(['lock', 'cancel'] as const)(
    'a %s as a large file is about to be opened leaves none of its source open, and nothing behind',
    async (stop) => {
      const root = tempDir();
      const dir = join(root, 'vault');
      const vault = track(
        await Vault.create(dir, passphrase(), { kdf: 'interactive', sodium: nativeSodium }),
      );
      const source = join(root, 'src', 'big.bin');
      await writeTree(join(root, 'src'), { 'big.bin': Buffer.alloc(BIG, 0x44) });
      const controller = new AbortController();
      // The add announces the file it starts on, then opens it: the stop lands between the two.
      const onProgress = (progress: { current?: string }): void => {
        if (progress.current !== source) return;
        if (stop === 'lock') vault.lock();
        else controller.abort();
      };
      const adding = vault.add([source], '/', { onProgress, signal: controller.signal });
      await expect(adding).rejects.toBeInstanceOf(CancelledError);
      await vault.released();
      expect(openDescriptorsOf(source)).toEqual([]);
      expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
      expect(readdirSync(join(dir, 'blobs'))).toEqual([]);
    },
  );

  it('stops a restore in flight: its keys are wiped at once, and it leaves no partial file', async () => {
    const { vault, root, keys } = await vaultWithBigFile();
    const out = join(root, 'out');
    const { onProgress, seen } = lockMidway(vault, keys);
    const restoring = vault.restore(['/big.bin'], out, { onProgress });
    await expect(restoring).rejects.toBeInstanceOf(CancelledError);
    expect(seen.liveAfterLock).toBe(0);
    await vault.released();
    expect(readdirSync(out)).toEqual([]);
  });
});
