import { join } from 'node:path';

/** Names inside a vault folder (FORMAT.md section 8). */
export const HEADER_FILE = 'coffer.header';
export const INDEX_FILE = 'index.sqlite';
export const BLOB_DIR = 'blobs';
export const PACK_DIR = 'packs';
export const TEMP_DIR = 'tmp';

/** Mode of every folder Coffer creates in a vault folder (FORMAT.md section 8.1): its owner's alone. */
export const PRIVATE_FOLDER_MODE = 0o700;

/**
 * Files up to this size (16 chunks) go into packs, many to a file (FORMAT.md section 8.4); larger ones get a blob
 * file each. Below about a MiB the cost of a file of its own (create, rename, fsyncs, a transaction) outweighed
 * the encryption: 2,000 files of 1-200 KiB, two thirds over 64 KiB, took 3.1 s to add with 64 KiB here.
 */
export const SMALL_FILE_LIMIT = 1024 * 1024;

export function blobPath(vaultDir: string, fileIdHex: string): string {
  return join(vaultDir, BLOB_DIR, fileIdHex.slice(0, 2), fileIdHex);
}

/** Where a pack lives, and where it is written before it is renamed there. */
export function packPaths(vaultDir: string, packIdHex: string): { temp: string; target: string } {
  return {
    temp: join(vaultDir, TEMP_DIR, `${packIdHex}.tmp`),
    target: join(vaultDir, PACK_DIR, `${packIdHex}.pack`),
  };
}
