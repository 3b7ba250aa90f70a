import { join } from 'node:path';

/** Names inside a vault folder (FORMAT.md section 8). */
export const HEADER_FILE = 'coffer.header';
export const INDEX_FILE = 'index.sqlite';
export const BLOB_DIR = 'blobs';
export const TEMP_DIR = 'tmp';

/** Files whose plaintext fits one chunk are stored inside the index: no file, rename or fsync of their own. */
export const INLINE_LIMIT = 64 * 1024;

export function blobPath(vaultDir: string, fileIdHex: string): string {
  return join(vaultDir, BLOB_DIR, fileIdHex.slice(0, 2), fileIdHex);
}
