import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmdirSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Mount points made by {@link mountTmpfs}, unmounted by {@link unmountAll}. */
const mounted: string[] = [];

function run(command: string, args: readonly string[]): void {
  execFileSync(command, args, { stdio: 'pipe' });
}

function firstLine(error: unknown): string {
  const stderr = (error as { stderr?: Buffer | string }).stderr;
  const text = stderr !== undefined && String(stderr).trim() !== '' ? String(stderr) : String(error);
  return text.trim().split('\n')[0] ?? '';
}

function removeMountPoint(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Still mounted (busy) or already gone: nothing more a test can do about it.
  }
}

/** Why tmpfs mounts cannot be made here, or undefined when they can (tried once, when this module loads). */
function probeMount(): string | undefined {
  if (process.platform !== 'linux') return `tmpfs mounts are Linux-only and this is ${process.platform}`;
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), 'coffer-mount-probe-'));
    run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]);
    try {
      run('mount', ['-o', 'remount,ro', dir]);
    } finally {
      run('umount', [dir]);
    }
    return undefined;
  } catch (error) {
    return `"mount -t tmpfs" is not permitted here (${firstLine(error)}); run the tests as root or with CAP_SYS_ADMIN to include them`;
  } finally {
    if (dir !== undefined) removeMountPoint(dir);
  }
}

/** Why the mount-based tests are skipped; undefined when they run. */
export const mountUnavailableReason: string | undefined = probeMount();
export const canMount = mountUnavailableReason === undefined;

/** Mounts a fresh tmpfs of `sizeBytes` and returns its mount point. Unmounted by {@link unmountAll}. */
export function mountTmpfs(sizeBytes: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'coffer-tmpfs-'));
  try {
    run('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0700`, 'tmpfs', dir]);
  } catch (error) {
    removeMountPoint(dir);
    throw error;
  }
  mounted.push(dir);
  return dir;
}

/** Makes a mounted tmpfs read-only. Every file on it must be closed for writing first. */
export function remountReadOnly(dir: string): void {
  run('mount', ['-o', 'remount,ro', dir]);
}

/**
 * Unmounts every tmpfs made by {@link mountTmpfs} (lazily if something still holds it) and removes the mount
 * points. Close vaults living on them before calling this.
 */
export function unmountAll(): void {
  for (const dir of mounted.splice(0).reverse()) {
    try {
      run('umount', [dir]);
    } catch {
      try {
        run('umount', ['-l', dir]);
      } catch {
        // Leave it: reported by the next mount listing rather than failing an unrelated test.
      }
    }
    removeMountPoint(dir);
  }
}

/** /dev/shm when it exists and has `bytesNeeded` free, else why not. */
export function sharedMemoryDir(bytesNeeded: number): { dir: string } | { reason: string } {
  const dir = '/dev/shm';
  if (!existsSync(dir)) return { reason: `${dir} does not exist on this machine` };
  const fs = statfsSync(dir);
  const free = fs.bavail * fs.bsize;
  if (free < bytesNeeded) {
    return {
      reason: `${dir} has ${Math.floor(free / 2 ** 20)} MiB free and the test needs ${Math.ceil(bytesNeeded / 2 ** 20)} MiB`,
    };
  }
  return { dir };
}

/** Prints why a test was skipped, so a skip never passes unnoticed. */
export function announceSkip(what: string, reason: string): void {
  console.warn(`\n[coffer tests] SKIPPED ${what}: ${reason}.\n`);
}
