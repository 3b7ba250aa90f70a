import { open } from 'node:fs/promises';
import { join } from 'node:path';

import Database from 'better-sqlite3';

/**
 * Overwrites the b-tree page header of `table`'s root page in a closed vault's index: the file still opens (its
 * first page, the schema, is intact), and SQLite finds the damage when it reads that table.
 */
export async function damageIndexPage(vaultDir: string, table: string): Promise<void> {
  const path = join(vaultDir, 'index.sqlite');
  const db = new Database(path, { readonly: true });
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const rootPage = db
    .prepare('SELECT rootpage FROM sqlite_master WHERE name = ?')
    .pluck()
    .get(table) as number;
  db.close();
  // Page 1 holds the schema: damage there is found at open, which is not what this is for.
  if (!(rootPage > 1)) throw new Error(`table ${table} has no page of its own in ${path}`);
  const handle = await open(path, 'r+');
  try {
    await handle.write(Buffer.alloc(12, 0xa5), 0, 12, (rootPage - 1) * pageSize);
  } finally {
    await handle.close();
  }
}
