import { closeSync, existsSync, fsyncSync, linkSync, openSync, renameSync, unlinkSync } from 'node:fs';

/**
 * Puts a finished temp file at `target`. With `replace` (overwriting was asked for, or the folder was created by
 * this restore, where nothing was in the way a moment ago and a rename saves the link-then-unlink pair), an atomic
 * rename. Otherwise a hard link publishes it only if nothing is there (atomic no-clobber); file systems without
 * hard links fall back to check-then-rename. Synchronous: it also runs on worker threads.
 * @returns `exists` when something is already at `target` (the temp file is left for the caller).
 * @throws the file system's error for anything else.
 */
export function publishFile(temp: string, target: string, replace: boolean): 'published' | 'exists' {
  if (replace) {
    renameSync(temp, target);
    return 'published';
  }
  try {
    linkSync(temp, target);
    unlinkSync(temp);
    return 'published';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return 'exists';
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV') throw error;
    if (existsSync(target)) return 'exists';
    renameSync(temp, target);
    return 'published';
  }
}

/** Makes a folder's entries durable (new names in it survive a crash). Windows cannot, and needs not. */
export function fsyncDirectorySync(path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    fsyncSync(fd);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (process.platform === 'win32' && (code === 'EPERM' || code === 'EISDIR')) return;
    throw error;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
