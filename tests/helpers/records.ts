import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';

import { RecordSealer } from '../../src/core/crypto/record.js';
import { unlockVaultKeys, type UnlockedKeys } from '../../src/core/crypto/vault-header.js';
import { nativeSodium } from './backends.js';
import { editIndexAsWriter } from './index-format.js';
import { newVault, passphrase, writeTree } from './vault.js';

/** A row of a closed vault's `nodes` table, with its record opened. */
export interface OpenedRow {
  readonly id: Buffer;
  readonly key_id: number;
  /** The row's version (format 1.1, FORMAT.md section 7), bound into its record's AAD. */
  readonly version: bigint;
  /** The record's plaintext (JSON, FORMAT.md section 8.3). */
  readonly plaintext: Buffer;
}

/** What {@link withRecords} lends: the vault's keys, its record sealer, its index and its rows opened. */
export interface RecordAccess {
  readonly keys: UnlockedKeys;
  readonly sealer: RecordSealer;
  readonly db: Database.Database;
  readonly rows: readonly OpenedRow[];
}

/**
 * Unlocks a closed vault's keys with the test passphrase and opens every row of its index, as whoever holds the
 * passphrase could, for tests that forge what such a person could write. The one place tests open and seal
 * records, so a change to how records are sealed is made here once. Keys are wiped and the index closed after.
 */
export async function withRecords<T>(dir: string, use: (access: RecordAccess) => T): Promise<T> {
  const keys = await unlockVaultKeys(nativeSodium, readFileSync(join(dir, 'coffer.header')), passphrase());
  const sealer = new RecordSealer(nativeSodium, keys.keyring, keys.vaultId);
  const db = new Database(join(dir, 'index.sqlite'));
  try {
    const stored = db.prepare('SELECT id, key_id, record, version FROM nodes').all() as {
      id: Buffer;
      key_id: number;
      record: Buffer;
      version: number;
    }[];
    const rows = stored.map((row) => ({
      id: row.id,
      key_id: row.key_id,
      version: BigInt(row.version),
      plaintext: sealer.open(
        { recordId: row.id, keyId: row.key_id, version: BigInt(row.version) },
        row.record,
      ),
    }));
    return use({ keys, sealer, db, rows });
  } finally {
    db.close();
    sealer.wipe();
    keys.wipe();
  }
}

/**
 * Rewrites a node's record in a closed vault: lets `change` edit the parsed object (any keys, any values) or give
 * the exact plaintext bytes, and seals the result back into the same row at its next version, with the index
 * commitment resealed over the result, as a writer with the passphrase would. The tree snapshot is dropped, so the
 * next unlock reads the rows.
 * @param pick - Chooses the row to rewrite, from its decoded record.
 */
export async function rewriteRecord(
  dir: string,
  pick: (record: Record<string, unknown>) => boolean,
  change: (record: Record<string, unknown>) => Record<string, unknown> | Buffer,
): Promise<void> {
  const rewritten = await withRecords(dir, ({ sealer, rows }) => {
    const parse = (row: OpenedRow): Record<string, unknown> =>
      JSON.parse(row.plaintext.toString('utf8')) as Record<string, unknown>;
    const target = rows.find((row) => pick(parse(row)));
    if (!target) throw new Error('rewriteRecord: no record matches');
    const changed = change(parse(target));
    const plaintext = Buffer.isBuffer(changed) ? changed : Buffer.from(JSON.stringify(changed), 'utf8');
    const version = target.version + 1n;
    return {
      id: target.id,
      version,
      sealed: sealer.seal({ recordId: target.id, keyId: target.key_id, version }, plaintext),
    };
  });
  // As a writer would: the row at its next version, and the index commitment over the rows as they now are.
  await editIndexAsWriter(dir, (db) => {
    db.prepare('UPDATE nodes SET record = ?, version = ? WHERE id = ?').run(
      rewritten.sealed,
      rewritten.version,
      rewritten.id,
    );
    db.prepare("DELETE FROM meta WHERE key = 'tree_snapshot'").run();
  });
}

/** A closed vault of /a.txt and /b.txt, of the same size, and their rows' ids with their records' names and `c`. */
export async function twoFilesOfOneSize() {
  const { vault, dir, root } = await newVault();
  await writeTree(join(root, 'in'), { 'a.txt': 'same size', 'b.txt': 'same-size' });
  await vault.add([join(root, 'in', 'a.txt'), join(root, 'in', 'b.txt')]);
  vault.close();
  const records = await withRecords(dir, ({ rows }) =>
    rows.map((row) => ({
      id: row.id,
      ...(JSON.parse(row.plaintext.toString()) as { n: string; c: string }),
    })),
  );
  const [a, b] = ['a.txt', 'b.txt'].map((name) => records.find((record) => record.n === name));
  if (!a || !b) throw new Error('two records expected');
  return { dir, a, b };
}
