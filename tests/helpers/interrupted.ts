import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';

/**
 * Leaves a closed vault as a crash in the middle of a commit would: `index.sqlite` with some of an uncommitted
 * transaction's pages already written into it (every record zeroed, the tree snapshot gone) and the hot journal
 * that holds their old contents beside it. Made on a scratch copy whose page cache is too small to hold the
 * transaction, so SQLite writes changed pages into the database before the commit, as it does for any large one;
 * both files are copied while the transaction is open, then the scratch copy is rolled back and removed.
 */
export function leaveHotJournal(vaultDir: string): void {
  const scratch = mkdtempSync(join(tmpdir(), 'coffer-crash-'));
  const index = join(scratch, 'index.sqlite');
  try {
    copyFileSync(join(vaultDir, 'index.sqlite'), index);
    const db = new Database(index);
    try {
      db.pragma('cache_size = 2');
      db.exec('BEGIN IMMEDIATE');
      db.prepare('UPDATE nodes SET record = zeroblob(length(record))').run();
      db.prepare("DELETE FROM meta WHERE key = 'tree_snapshot'").run();
      copyFileSync(index, join(vaultDir, 'index.sqlite'));
      copyFileSync(`${index}-journal`, join(vaultDir, 'index.sqlite-journal'));
      db.exec('ROLLBACK');
    } finally {
      db.close();
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The records of an index read without its journal: what a reader that ignored the journal would see. */
export function recordsIgnoringJournal(vaultDir: string): Buffer[] {
  const scratch = mkdtempSync(join(tmpdir(), 'coffer-crash-'));
  try {
    copyFileSync(join(vaultDir, 'index.sqlite'), join(scratch, 'index.sqlite'));
    const db = new Database(join(scratch, 'index.sqlite'), { readonly: true });
    try {
      return db.prepare('SELECT record FROM nodes').pluck().all() as Buffer[];
    } finally {
      db.close();
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
