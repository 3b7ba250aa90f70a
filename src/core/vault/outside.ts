import type { Stats } from 'node:fs';
import { lstat, realpath, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

import { InvalidArgumentError } from '../errors.js';
import { asIoError } from './durable.js';

/**
 * Whether two stats are of the same file or folder. Device and inode: no spelling of a path (a symlink, "..", a
 * different case on a case-insensitive disk, a bind mount) changes them.
 */
export function sameFile(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

async function statOrUndefined(path: string, follow: boolean): Promise<Stats | undefined> {
  try {
    return await (follow ? stat(path) : lstat(path));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Not there (or a file on the way, which creating it would trip over later, with its own error).
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/**
 * Whether `path` is `folder` or inside it, on disk. A path that does not exist yet is judged by its longest existing
 * ancestor (what creating it would go through). Its parents are found through realpath, so a symlink or ".." on
 * the way cannot hide the folder; `followLast` says whether a symlink at `path` itself counts as its target (as it
 * does for a folder written into) or as a link (as it does for a file added, which is skipped).
 */
async function isSameOrInside(path: string, folder: Stats, followLast: boolean): Promise<boolean> {
  let at = resolve(path);
  let follow = followLast;
  let stats = await statOrUndefined(at, follow);
  while (!stats) {
    const parent = dirname(at);
    if (parent === at) return false;
    at = parent;
    follow = true;
    stats = await statOrUndefined(at, true);
  }
  if (sameFile(stats, folder)) return true;
  let real = await realpath(follow ? at : dirname(at));
  for (;;) {
    if (sameFile(await stat(real), folder)) return true;
    const parent = dirname(real);
    if (parent === real) return false;
    real = parent;
  }
}

/**
 * Refuses a restore destination in the vault folder: decrypted files must never be written there.
 * @returns the vault folder's stats, for checking folders met during the restore (see {@link sameFile}).
 * @throws {@link InvalidArgumentError} when `destination` is the vault folder or inside it.
 */
export async function refuseRestoreIntoVault(vaultDir: string, destination: string): Promise<Stats> {
  const check = async (): Promise<{ vault: Stats; inside: boolean }> => {
    const vault = await stat(vaultDir);
    return { vault, inside: await isSameOrInside(destination, vault, true) };
  };
  const { vault, inside } = await check().catch((error: unknown) => {
    throw asIoError(error, `Could not check where "${destination}" is`);
  });
  if (inside) {
    throw new InvalidArgumentError(
      `Cannot restore into "${destination}": it is in the vault folder "${vaultDir}", and decrypted files must ` +
        'never be written there. Choose a folder outside the vault folder.',
    );
  }
  return vault;
}

/**
 * Refuses to add the vault to itself: a source that is the vault folder, is inside it, or contains it.
 * @throws {@link InvalidArgumentError} naming the source; nothing has been added then.
 */
export async function refuseAddingVault(vaultDir: string, sources: readonly string[]): Promise<void> {
  const check = async (source: string, vault: Stats): Promise<'inside' | 'contains' | undefined> => {
    if (await isSameOrInside(source, vault, false)) return 'inside';
    const stats = await statOrUndefined(source, false);
    return stats?.isDirectory() && (await isSameOrInside(vaultDir, stats, true)) ? 'contains' : undefined;
  };
  const vault = await stat(vaultDir).catch((error: unknown) => {
    throw asIoError(error, `Could not check where "${vaultDir}" is`);
  });
  for (const source of sources) {
    const where = await check(source, vault).catch((error: unknown) => {
      throw asIoError(error, `Could not check where "${source}" is`);
    });
    if (where === 'inside') {
      throw new InvalidArgumentError(
        `Cannot add "${source}": it is in the vault folder "${vaultDir}", and a vault cannot store its own ` +
          'files. Add files from outside the vault folder.',
      );
    }
    if (where === 'contains') {
      throw new InvalidArgumentError(
        `Cannot add "${source}": the vault folder "${vaultDir}" is inside it, and a vault cannot store itself. ` +
          'Add the files and folders beside the vault folder instead.',
      );
    }
  }
}
