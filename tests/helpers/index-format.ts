import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';

import { IndexCommitter } from '../../src/core/crypto/index-commitment.js';
import { RecordSealer } from '../../src/core/crypto/record.js';
import { unlockVaultKeys, type UnlockedKeys } from '../../src/core/crypto/vault-header.js';
import { IndexDb } from '../../src/core/vault/index-db.js';
import { nativeSodium } from './backends.js';
import { passphrase } from './vault.js';

/** A closed vault's keys, as a writer holding its passphrase has them. */
async function keysOf(dir: string): Promise<UnlockedKeys> {
  return unlockVaultKeys(nativeSodium, readFileSync(join(dir, 'coffer.header')), passphrase());
}

/** Runs `change` on a closed vault's index with plain SQLite, as a modifier (or a crashed writer) would. */
export function editIndex(dir: string, change: (db: Database.Database) => void): void {
  const db = new Database(join(dir, 'index.sqlite'));
  try {
    change(db);
  } finally {
    db.close();
  }
}

/**
 * Edits a closed vault's index by hand and then seals the index commitment over the result, as a writer with the
 * passphrase would: for tests that need an index state Coffer's own operations do not make (a compaction that
 * failed, say), without that state counting as tampering.
 */
export async function editIndexAsWriter(dir: string, edit: (db: Database.Database) => void): Promise<void> {
  editIndex(dir, edit);
  await withCommitter(dir, false, (db, committer) => {
    db.recommit(committer);
  });
}

/**
 * A closed vault's `meta.contents_sum` as stored, opened, and the sum its contents rows add up to (FORMAT.md 8.7).
 */
export async function contentsSums(
  dir: string,
): Promise<{ stored: Buffer | undefined; opened: Buffer | undefined; rows: Buffer }> {
  return withCommitter(dir, true, (db, committer) => ({
    stored: db.getMeta('contents_sum'),
    opened: db.openContentsSum(committer),
    rows: db.contentsRowsSum(committer),
  }));
}

/** Runs `use` on a closed vault's index with a committer under its active key (the test passphrase's). */
async function withCommitter<T>(
  dir: string,
  readOnly: boolean,
  use: (db: IndexDb, committer: IndexCommitter) => T,
): Promise<T> {
  const keys = await keysOf(dir);
  const db = IndexDb.open(join(dir, 'index.sqlite'), { readOnly, create: false, vaultId: keys.vaultId });
  const committer = new IndexCommitter(nativeSodium, keys.keyring, keys.vaultId, keys.keyring.activeKeyId);
  try {
    return use(db, committer);
  } finally {
    db.close();
    keys.wipe();
  }
}

/**
 * Rewrites a closed format 1.1 vault's index as Coffer 1.0 wrote it (index schema 3): records sealed with the 1.0
 * AAD, no version column, no commitment, no snapshot.
 */
export async function toFormat10(dir: string): Promise<void> {
  const keys = await keysOf(dir);
  const sealer = new RecordSealer(nativeSodium, keys.keyring, keys.vaultId);
  const db = new Database(join(dir, 'index.sqlite'));
  try {
    const rows = db.prepare('SELECT id, key_id, record, version FROM nodes').all() as {
      id: Buffer;
      key_id: number;
      record: Buffer;
      version: number;
    }[];
    const update = db.prepare('UPDATE nodes SET record = ? WHERE id = ?');
    db.transaction(() => {
      for (const row of rows) {
        const plaintext = sealer.open(
          { recordId: row.id, keyId: row.key_id, version: BigInt(row.version) },
          row.record,
        );
        update.run(sealer.seal({ recordId: row.id, keyId: row.key_id }, plaintext), row.id);
      }
      db.exec(`
        ALTER TABLE nodes DROP COLUMN version;
        DELETE FROM meta WHERE key IN ('index_commitment', 'contents_sum', 'tree_snapshot');
      `);
      const schema = Buffer.alloc(4);
      schema.writeUInt32LE(3);
      db.prepare("UPDATE meta SET value = ? WHERE key = 'index_schema'").run(schema);
    })();
  } finally {
    db.close();
    sealer.wipe();
    keys.wipe();
  }
}
