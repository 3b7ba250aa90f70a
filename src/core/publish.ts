import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';

/**
 * Puts a finished temp file at `target`. With `replace` (overwriting was asked for), an atomic rename. Otherwise a
 * hard link publishes it only if nothing is there (atomic no-clobber: the file system itself says whether the name
 * is taken, under whatever name aliasing it has); file systems without hard links fall back to check-then-rename.
 * Synchronous: it also runs on worker threads.
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

/**
 * Writes a new file atomically and durably: `bytes` into a new temp file, fsynced, renamed to `target`, and the
 * target's folder fsynced, so a crash leaves either nothing or the whole file (packs, FORMAT.md section 8.4; the
 * vault header). Synchronous: it runs on worker threads too. On failure the temp file is removed and the file
 * system's error thrown.
 */
export function writeFileAtomicSync(
  paths: { temp: string; target: string },
  bytes: Uint8Array,
  beforeRename?: () => void,
): void {
  const fd = openSync(paths.temp, 'wx', 0o600);
  try {
    for (let at = 0; at < bytes.byteLength;) at += writeSync(fd, bytes, at);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(paths.temp, { force: true });
    throw error;
  }
  closeSync(fd);
  try {
    beforeRename?.();
    renameSync(paths.temp, paths.target);
  } catch (error) {
    rmSync(paths.temp, { force: true });
    throw error;
  }
  fsyncDirectorySync(dirname(paths.target));
}
