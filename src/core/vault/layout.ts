import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  type Dirent,
} from 'node:fs';
import { join } from 'node:path';

import { ID_BYTES } from '../crypto/constants.js';
import { IntegrityError } from '../errors.js';
import { asIoError } from './durable.js';

/** Names inside a vault folder (FORMAT.md section 8). */
export const HEADER_FILE = 'coffer.header';
/** The header's copy, written after it and used when it is damaged (FORMAT.md 4.7). */
export const HEADER_BACKUP_FILE = 'coffer.header.bak';
export const INDEX_FILE = 'index.sqlite';
export const BLOB_DIR = 'blobs';
export const PACK_DIR = 'packs';
export const TEMP_DIR = 'tmp';
/** The sealed activity log (FORMAT.md section 10) and the count of failed unlocks beside it (section 10.5). */
export const ACTIVITY_LOG_FILE = 'activity.log';
export const UNLOCK_FAILURES_FILE = 'unlock-failures';

/** Mode of every folder Coffer creates in a vault folder (FORMAT.md section 8.1): its owner's alone. */
export const PRIVATE_FOLDER_MODE = 0o700;

/**
 * Files up to this size (16 chunks) go into packs, many to a file (FORMAT.md section 8.4); larger ones get a blob
 * file each. Below about a MiB the cost of a file of its own (create, rename, fsyncs, a transaction) outweighed
 * the encryption: 2,000 files of 1-200 KiB, two thirds over 64 KiB, took 3.1 s to add with 64 KiB here.
 */
export const SMALL_FILE_LIMIT = 1024 * 1024;

/**
 * The name a file or pack id gets in the vault folder: the lowercase hex of its 16 bytes. Every path inside the
 * vault is built here, from bytes, so no value read from the index or a record can steer a path elsewhere.
 */
function idName(id: Buffer): string {
  if (!Buffer.isBuffer(id) || id.length !== ID_BYTES)
    throw new Error('internal error: a vault file name is built only from a 16-byte id');
  return id.toString('hex');
}

/** Where a large file's blob lives, and where it is written before it is renamed there. */
export function blobPaths(vaultDir: string, fileId: Buffer): { temp: string; target: string } {
  const name = idName(fileId);
  return {
    temp: join(vaultDir, TEMP_DIR, `${name}.tmp`),
    target: join(vaultDir, BLOB_DIR, name.slice(0, 2), name),
  };
}

export function blobPath(vaultDir: string, fileId: Buffer): string {
  return blobPaths(vaultDir, fileId).target;
}

/** Where a pack lives, and where it is written before it is renamed there. */
export function packPaths(vaultDir: string, packId: Buffer): { temp: string; target: string } {
  const name = idName(packId);
  return {
    temp: join(vaultDir, TEMP_DIR, `${name}.tmp`),
    target: join(vaultDir, PACK_DIR, `${name}.pack`),
  };
}

/**
 * Flags for opening a pack or blob file to read: never through a symbolic link, and never waiting on a FIFO planted
 * in its place (FORMAT.md section 8.1). Windows has neither flag; there {@link checkVaultFolder} and the
 * regular-file check after opening are what refuse them.
 */
export const VAULT_READ_FLAGS =
  constants.O_RDONLY | platformFlag(constants.O_NOFOLLOW) | platformFlag(constants.O_NONBLOCK);

/** An `fs.constants` flag, or none where the platform lacks it (Node's types claim every platform has them all). */
function platformFlag(flag: number | undefined): number {
  return flag ?? 0;
}

/**
 * Refuses a pack or blob file that is not a regular file (a directory, a device, a FIFO), with the code
 * {@link NOT_REGULAR} that callers turn into an {@link IntegrityError}.
 */
export function requireRegularFile(stats: { isFile(): boolean }, path: string): void {
  if (!stats.isFile())
    throw Object.assign(new Error(`${path} is not a regular file`), { code: NOT_REGULAR, path });
}

/** The error code of {@link requireRegularFile} ("inappropriate file type", as BSD names it). */
const NOT_REGULAR = 'EFTYPE';

/** Whether a read failed because the file is a symbolic link or not a regular file. */
export function isNotRegular(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ELOOP' || code === NOT_REGULAR || code === 'EISDIR';
}

/** Packs are written up to a few MiB; anything far larger is not one of this vault's, and is not read whole. */
export const MAX_PACK_BYTES = 256 * 1024 * 1024;

/**
 * A pack's bytes when `wanted(size)` says they are needed and it is no larger than {@link MAX_PACK_BYTES};
 * undefined when it is missing, a symbolic link or not a regular file (FORMAT.md section 8.1: damage for verify
 * to report, never followed).
 */
export function readStoredPack(path: string, wanted: (size: number) => boolean): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, VAULT_READ_FLAGS);
  } catch {
    return undefined;
  }
  try {
    const stats = fstatSync(fd);
    return stats.isFile() && wanted(stats.size) && stats.size <= MAX_PACK_BYTES
      ? readFileSync(fd)
      : undefined;
  } finally {
    closeSync(fd);
  }
}

const SHARD_NAME = /^[0-9a-f]{2}$/;

/** SQLite's own files beside the index: a link there would have SQLite write through it. */
const INDEX_SIDE_FILES = ['-journal', '-wal', '-shm'].map((suffix) => INDEX_FILE + suffix);

/**
 * Checks the rule of FORMAT.md section 8.1 (at open, and again before every operation that writes to the vault
 * folder: a sync service may deliver a link while the vault is open): the vault's own files (header, index and
 * SQLite's files beside it) are regular files, its folders (blobs/ and each shard in it, packs/, tmp/) real
 * folders, and blobs/ holds no symbolic link, so nothing Coffer reads, writes or deletes there can be redirected
 * outside the vault folder. Missing ones pass (the caller decides what a missing one means). Synchronous (a few
 * lstat calls and one listing of blobs/), so that operations that do not wait, such as a rename, check it too.
 * @throws {@link IntegrityError} naming the first one that breaks the rule and saying what to do.
 * @throws {@link IoError} when the folder cannot be read.
 */
export function checkVaultFolder(vaultDir: string): void {
  try {
    checkEntries(vaultDir);
  } catch (error) {
    throw asIoError(error, `Could not check the vault folder "${vaultDir}"`);
  }
}

function checkEntries(vaultDir: string): void {
  for (const name of [
    HEADER_FILE,
    HEADER_BACKUP_FILE,
    INDEX_FILE,
    ...INDEX_SIDE_FILES,
    ACTIVITY_LOG_FILE,
    UNLOCK_FAILURES_FILE,
  ])
    expectKind(vaultDir, name, 'file');
  for (const name of [PACK_DIR, TEMP_DIR, BLOB_DIR]) expectKind(vaultDir, name, 'folder');
  let shards: Dirent[];
  try {
    shards = readdirSync(join(vaultDir, BLOB_DIR), { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    shards = [];
  }
  // Any link here, whatever its name, since a sweep of blobs/ may look inside every folder it lists; other files
  // (a .DS_Store, say) are left alone.
  for (const shard of shards) {
    if (shard.isSymbolicLink() || (SHARD_NAME.test(shard.name) && !shard.isDirectory()))
      expectKind(vaultDir, join(BLOB_DIR, shard.name), 'folder');
  }
}

function expectKind(vaultDir: string, name: string, kind: 'file' | 'folder'): void {
  let stats;
  try {
    stats = lstatSync(join(vaultDir, name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (kind === 'file' ? stats.isFile() : stats.isDirectory()) return;
  const link = stats.isSymbolicLink();
  throw new IntegrityError('malformed', {
    subject: `${kind === 'file' ? 'file' : 'folder'} "${name}" in the vault folder "${vaultDir}" (it is ${
      link ? 'a symbolic link' : kind === 'file' ? 'not a regular file' : 'not a folder'
    })`,
    advice: link
      ? `Coffer never follows a link inside a vault. Put the real ${kind} there in place of the link, then open the vault again.`
      : `Move it out of the vault folder and put the vault's own ${kind} back (from a backup if need be), then open the vault again.`,
  });
}
