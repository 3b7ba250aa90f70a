import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';

/** Offset of the key id in a blob header (FORMAT.md 5.1). */
const BLOB_KEY_ID_OFFSET = 16;
const LOG_HEADER_BYTES = 32;
const LOG_ENTRY_BYTES = 100;
/** Offset of the DEK count in the vault header (FORMAT.md 4.1). */
const DEK_COUNT_OFFSET = 30;

/** Straight from a closed vault's index: each file's record key id and its blob's key id, by content file id. */
export function keyIdsOnDisk(dir: string): { records: number[]; blobs: number[] } {
  const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
  try {
    const records = db.prepare('SELECT key_id FROM nodes ORDER BY key_id').pluck().all() as number[];
    const rows = db.prepare('SELECT file_id, pack_id, pack_offset FROM contents').all() as {
      file_id: Buffer;
      pack_id: Buffer | null;
      pack_offset: number | null;
    }[];
    const blobs = rows
      .map((row) => {
        const hex = row.file_id.toString('hex');
        const bytes =
          row.pack_id === null
            ? readFileSync(join(dir, 'blobs', hex.slice(0, 2), hex))
            : readFileSync(join(dir, 'packs', `${row.pack_id.toString('hex')}.pack`)).subarray(
                row.pack_offset ?? 0,
              );
        return bytes.readUInt32LE(BLOB_KEY_ID_OFFSET);
      })
      .sort();
    return { records, blobs };
  } finally {
    db.close();
  }
}

/**
 * Every other key id a closed vault's files name (FORMAT.md 4.1, 8.6, 8.7, 10.2): the header's and its backup's
 * DEK counts, the tree snapshot's and the index commitment's key ids, and each activity-log entry's, as sets.
 */
export function otherKeyIdsOnDisk(dir: string): {
  headerDeks: number;
  backupDeks: number;
  snapshot: number | undefined;
  commitment: number | undefined;
  log: number[];
} {
  const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
  const meta = (key: string): Buffer | undefined =>
    db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(key) as Buffer | undefined;
  try {
    const log = readFileSync(join(dir, 'activity.log'));
    const logKeys = new Set<number>();
    for (let at = LOG_HEADER_BYTES; at + LOG_ENTRY_BYTES <= log.length; at += LOG_ENTRY_BYTES)
      logKeys.add(log.readUInt32LE(at + 8));
    return {
      headerDeks: readFileSync(join(dir, 'coffer.header')).readUInt16LE(DEK_COUNT_OFFSET),
      backupDeks: readFileSync(join(dir, 'coffer.header.bak')).readUInt16LE(DEK_COUNT_OFFSET),
      snapshot: meta('tree_snapshot')?.readUInt32LE(0),
      commitment: meta('index_commitment')?.readUInt32LE(0),
      log: [...logKeys].sort(),
    };
  } finally {
    db.close();
  }
}
