import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';

import { RecordSealer } from '../../src/core/crypto/record.js';
import { unlockVaultKeys } from '../../src/core/crypto/vault-header.js';
import { nativeSodium } from './backends.js';
import { passphrase } from './vault.js';

/**
 * Rewrites a node's record in a closed vault as whoever holds the passphrase could: opens the row's sealed JSON,
 * lets `change` edit the parsed object (any keys, any values) or give the exact plaintext bytes, and seals the result
 * back into the same row. The tree snapshot is dropped, so the next unlock reads the rows. The one place tests forge
 * records, so a change to how records are sealed is made here once.
 * @param pick - Chooses the row to rewrite, from its decoded record.
 */
export async function rewriteRecord(
  dir: string,
  pick: (record: Record<string, unknown>) => boolean,
  change: (record: Record<string, unknown>) => Record<string, unknown> | Buffer,
): Promise<void> {
  const keys = await unlockVaultKeys(nativeSodium, readFileSync(join(dir, 'coffer.header')), passphrase());
  const sealer = new RecordSealer(nativeSodium, keys.keyring, keys.vaultId);
  const db = new Database(join(dir, 'index.sqlite'));
  try {
    const rows = db.prepare('SELECT id, key_id, record FROM nodes').all() as {
      id: Buffer;
      key_id: number;
      record: Buffer;
    }[];
    const target = rows.find((row) => {
      const opened = sealer.open({ recordId: row.id, keyId: row.key_id }, row.record);
      return pick(JSON.parse(opened.toString('utf8')) as Record<string, unknown>);
    });
    if (!target) throw new Error('rewriteRecord: no record matches');
    const binding = { recordId: target.id, keyId: target.key_id };
    const record = JSON.parse(sealer.open(binding, target.record).toString('utf8')) as Record<
      string,
      unknown
    >;
    const changed = change(record);
    const plaintext = Buffer.isBuffer(changed) ? changed : Buffer.from(JSON.stringify(changed), 'utf8');
    const sealed = sealer.seal(binding, plaintext);
    db.prepare('UPDATE nodes SET record = ? WHERE id = ?').run(sealed, target.id);
    db.prepare("DELETE FROM meta WHERE key = 'tree_snapshot'").run();
  } finally {
    db.close();
    sealer.wipe();
    keys.wipe();
  }
}
