import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

import { fsyncDirectorySync } from './publish.js';

/**
 * Writes a new pack (FORMAT.md section 8.4): `bytes` into a new temp file, fsynced, renamed to `target`, and the
 * packs folder fsynced, so the pack survives a crash before any row names it. Synchronous: it runs on worker
 * threads too. On failure the temp file is removed and the file system's error thrown.
 */
export function writePackSync(paths: { temp: string; target: string }, bytes: Uint8Array): void {
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
    renameSync(paths.temp, paths.target);
  } catch (error) {
    rmSync(paths.temp, { force: true });
    throw error;
  }
  fsyncDirectorySync(dirname(paths.target));
}
