import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { VaultLockedError } from '../core/errors.js';
import { checkName } from '../core/names.js';

/** The folder below the data folder that holds the decrypted copies opened with another app. */
export const OPEN_COPIES_DIR = 'open';

/**
 * Decrypted copies of vault files written for "Open with the default app": the one place the app puts plaintext
 * on disk by itself. Each copy is `<dataDir>/open/<random>/<name>`: folders 0700, the file 0600, so only the user
 * (and the app they open it with) can read it, and its own folder keeps its real name free of clashes. A copy is
 * written under a temporary name and renamed to its name only once every chunk authenticated, so the other app
 * never sees a partial or unauthenticated file. Copies are removed when their vault locks or closes, when the back
 * end is disposed (quit), and at the next start (after a crash or a kill).
 */
export class OpenCopies {
  readonly #root: string;
  /** The folders of each vault's copies (by vault id). */
  readonly #byVault = new Map<string, Set<string>>();

  constructor(dataDir: string) {
    this.#root = join(dataDir, OPEN_COPIES_DIR);
  }

  /** Removes every copy, including those an earlier run left behind. Never throws. */
  removeAll(): void {
    this.#byVault.clear();
    removeQuietly(this.#root);
  }

  /** Removes the copies of one vault (at its lock or close). Never throws. */
  removeFor(vaultId: string): void {
    for (const dir of this.#byVault.get(vaultId) ?? []) removeQuietly(dir);
    this.#byVault.delete(vaultId);
  }

  /** Removes one copy (no app could open it). Never throws. */
  discard(vaultId: string, path: string): void {
    const dir = dirname(path);
    this.#byVault.get(vaultId)?.delete(dir);
    removeQuietly(dir);
  }

  /**
   * Writes the plaintext `chunks` as a copy named `name` and returns its path.
   * @throws {@link InvalidArgumentError} for a name that is not one file name; {@link VaultLockedError} when the
   * vault locked meanwhile; the stream's error (damaged data) or the file system's. Nothing of the copy is left.
   */
  async write(vaultId: string, name: string, chunks: AsyncIterable<Uint8Array>): Promise<string> {
    const fileName = checkName(name);
    mkdirSync(this.#root, { recursive: true, mode: 0o700 });
    // mkdir's mode does not change a folder that already exists (made by an older version, say).
    chmodSync(this.#root, 0o700);
    const dir = join(this.#root, randomBytes(16).toString('hex'));
    mkdirSync(dir, { mode: 0o700 });
    const copies = this.#byVault.get(vaultId) ?? new Set<string>();
    this.#byVault.set(vaultId, copies);
    copies.add(dir);
    // A lock meanwhile replaced (or dropped) the vault's set and removed the folder: the copy must not stay.
    const lockedMeanwhile = (): boolean => this.#byVault.get(vaultId) !== copies;
    try {
      const partial = join(dir, `.partial-${randomBytes(8).toString('hex')}`);
      const file = await open(partial, 'wx', 0o600);
      try {
        for await (const chunk of chunks) await file.write(chunk);
      } finally {
        await file.close();
      }
      const path = join(dir, fileName);
      await rename(partial, path);
      if (lockedMeanwhile()) throw new VaultLockedError();
      return path;
    } catch (error) {
      copies.delete(dir);
      removeQuietly(dir);
      throw lockedMeanwhile() ? new VaultLockedError() : error;
    }
  }
}

function removeQuietly(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true, maxRetries: 3 });
  } catch (error) {
    // Another app may still hold the file open (Windows refuses then); the next start tries again.
    console.warn('coffer: a decrypted copy could not be removed yet:', (error as Error).message);
  }
}
