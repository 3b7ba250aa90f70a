import { randomBytes } from 'node:crypto';
import { mkdir, open, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, resolve, sep, toNamespacedPath } from 'node:path';

import { IoError } from '../errors.js';
import { folderSyncUnsupported, writeFileAtomicSync } from '../publish.js';

/**
 * fsyncs a directory so a rename or create inside it survives power loss.
 * @throws the file system's error, but for {@link folderSyncUnsupported} (Windows).
 */
export async function fsyncDirectory(path: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, 'r');
    await handle.sync();
  } catch (error) {
    if (folderSyncUnsupported(error)) return;
    throw error;
  } finally {
    await handle?.close();
  }
}

/** fsyncs a folder; one that is not there holds nothing to make durable (a shard folder never made, say). */
export async function fsyncFolderIfThere(folder: string): Promise<void> {
  try {
    await fsyncDirectory(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/**
 * Creates the folder `path` and any missing above it. A new folder survives a power cut only once the folder it
 * was made in is fsynced, so this answers those folders, outermost first (none when `path` was there), for the
 * caller to fsync before it counts on anything inside.
 * @throws the file system's error when a folder cannot be made.
 */
export async function makeFolders(path: string, mode?: number): Promise<string[]> {
  const target = resolve(path);
  const first = await mkdir(target, { recursive: true, mode });
  if (first === undefined) return [];
  // `first` is the outermost folder made: `target` or one of the folders above it (in its long form on Windows,
  // hence the namespaced lengths).
  const outermost = toNamespacedPath(first).length;
  const made: string[] = [];
  for (let folder = target; toNamespacedPath(folder).length >= outermost; folder = dirname(folder)) {
    made.unshift(folder);
  }
  return made.map((folder) => dirname(folder));
}

/** A random tag for temp names: 12 hex digits. */
export function newTempPrefix(): string {
  return randomBytes(6).toString('hex');
}

/** Random per process, so temp names never collide with another process's; a counter makes them unique here. */
const TEMP_PREFIX = newTempPrefix();
let tempCounter = 0;

/**
 * A unique temp-file name beside `target`, so the final rename stays within one filesystem:
 * `.coffer-<label>-<prefix>-<counter in base 36>.tmp`, the prefix this process's own unless one is given.
 */
export function tempPathBeside(target: string, label: string, prefix: string = TEMP_PREFIX): string {
  tempCounter++;
  // Concatenated, not joined: dirname() is already normalised (ending in a separator only at a root), and a
  // restore asks once per file.
  const dir = dirname(target);
  return `${dir.endsWith(sep) ? dir : dir + sep}.coffer-${label}-${prefix}-${tempCounter.toString(36)}.tmp`;
}

/** Whether `name` is exactly a name {@link tempPathBeside} makes with this label and prefix (12 hex digits). */
export function isTempName(name: string, label: string, prefix: string): boolean {
  return (
    /^[0-9a-f]{12}$/u.test(prefix) &&
    new RegExp(`^\\.coffer-${label}-${prefix}-[0-9a-z]+\\.tmp$`, 'u').test(name)
  );
}

/**
 * Writes `data` to `target` atomically and durably (see {@link writeFileAtomicSync}). A crash leaves either the old
 * file or the new one, never a mix.
 * @throws {@link IoError} when the disk refuses (full, read-only, permissions); the temp file is removed.
 */
export function writeFileAtomic(target: string, data: Uint8Array): void {
  try {
    writeFileAtomicSync({ temp: tempPathBeside(target, 'write'), target }, data);
  } catch (error) {
    throw asIoError(error, `Could not write ${target}`);
  }
}

/** Deletes a file, ignoring "already gone"; used only for cleanup, where a leftover is swept later. */
export async function removeQuietly(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch {
    // Cleanup of temp files and reclaimed blobs; anything left is found and swept by the next open or verify.
  }
}

const IO_HINTS: Record<string, string> = {
  ENOSPC: 'the disk is full. Free some space and try again',
  EDQUOT: 'the disk quota is exceeded. Free some space and try again',
  EROFS: 'the file system is read-only',
  EACCES: 'permission was denied',
  EPERM: 'the operation is not permitted',
  EIO: 'the disk reported an input/output error. Check the drive',
  EMFILE: 'too many files are open. Close some programs and try again',
};

/** Wraps an OS error as an {@link IoError} whose message says what happened in words; other errors pass through. */
export function asIoError(error: unknown, what: string): unknown {
  if (error instanceof Error && 'code' in error && typeof error.code === 'string' && 'syscall' in error) {
    return ioError(error.code, what, error);
  }
  return error;
}

/** An {@link IoError} for an OS error code (`ENOSPC`, ...), saying in words what `what` ran into. */
export function ioError(code: string, what: string, cause: unknown): IoError {
  const hint = IO_HINTS[code] ?? `the system reported ${code}`;
  return new IoError(`${what}: ${hint}.`, { cause });
}
