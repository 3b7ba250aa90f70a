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

/**
 * Whether fsyncing a folder failed only because the platform cannot do it: Windows does not open folders for fsync
 * (EPERM/EISDIR), and there the rename itself is what NTFS journals. Anywhere else the same error is a real one.
 */
export function folderSyncUnsupported(error: unknown, platform: NodeJS.Platform = process.platform): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return platform === 'win32' && (code === 'EPERM' || code === 'EISDIR');
}

/**
 * Makes a folder's entries durable (new names in it survive a crash). Synchronous: it also runs on worker threads.
 * @throws the file system's error, but for {@link folderSyncUnsupported}.
 */
export function fsyncDirectorySync(path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    fsyncSync(fd);
  } catch (error) {
    if (folderSyncUnsupported(error)) return;
    throw error;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Writes a new file atomically and durably: `bytes` into a new temp file, fsynced, renamed to `target`, and the
 * target's folder fsynced, so a crash leaves either nothing or the whole file (packs, FORMAT.md section 8.4; the
 * vault header). Synchronous: it runs on worker threads too. On failure the temp file is removed and the file
 * system's error thrown. `beforeRename` runs once the temp file is durable (the crash tests' hook).
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
