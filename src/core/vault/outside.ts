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
async function isSameOrInside(
  path: string,
  folder: Stats,
  followLast: boolean,
  folders: FolderAnswers = new Map(),
): Promise<boolean> {
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
  const start = follow ? at : dirname(at);
  let answer = folders.get(start);
  if (answer === undefined) {
    answer = isOrIsIn(start, folder);
    folders.set(start, answer);
  }
  return answer;
}

/** Whether the existing folder `start`, once its links are resolved, is `folder` or inside it. */
async function isOrIsIn(start: string, folder: Stats): Promise<boolean> {
  let real = await realpath(start);
  for (;;) {
    if (sameFile(await stat(real), folder)) return true;
    const parent = dirname(real);
    if (parent === real) return false;
    real = parent;
  }
}

/**
 * What {@link isOrIsIn} answered for each folder, within one check of many paths against one folder: the files of
 * a selection share their folder, whose walk up to "/" (a realpath and a stat per ancestor) was most of the cost
 * of checking them (about 150 ms for 1,000 picked files).
 */
type FolderAnswers = Map<string, Promise<boolean>>;

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
  const folders: FolderAnswers = new Map();
  const check = async (source: string, vault: Stats): Promise<'inside' | 'contains' | undefined> => {
    if (await isSameOrInside(source, vault, false, folders)) return 'inside';
    const stats = await statOrUndefined(source, false);
    return stats?.isDirectory() && (await isSameOrInside(vaultDir, stats, true)) ? 'contains' : undefined;
  };
  const vault = await stat(vaultDir).catch((error: unknown) => {
    throw asIoError(error, `Could not check where "${vaultDir}" is`);
  });
  // All at once (each is a few file system calls, most of them waiting), then judged in the order given, so the
  // source named is the first that fails, whichever check finished first.
  const found = await Promise.allSettled(sources.map((source) => check(source, vault)));
  for (const [index, source] of sources.entries()) {
    const outcome = found[index] as PromiseSettledResult<'inside' | 'contains' | undefined>;
    if (outcome.status === 'rejected')
      throw asIoError(outcome.reason, `Could not check where "${source}" is`);
    const where = outcome.value;
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
