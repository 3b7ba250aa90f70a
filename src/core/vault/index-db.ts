import Database from 'better-sqlite3';

import { IntegrityError, VaultInUseError } from '../errors.js';

/** Version of the index schema below; bumped with a numbered migration when it changes. */
export const INDEX_SCHEMA_VERSION = 1;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS nodes (
  id BLOB PRIMARY KEY CHECK (length(id) = 16),
  key_id INTEGER NOT NULL,
  record BLOB NOT NULL
) WITHOUT ROWID;
-- A rowid table: inline blobs run to 64 KiB, and WITHOUT ROWID b-trees suit only small rows (measured: inserts and
-- lookups of 16 KiB rows took ~90 us each that way).
CREATE TABLE IF NOT EXISTS contents (
  file_id BLOB NOT NULL UNIQUE CHECK (length(file_id) = 16),
  node_id BLOB NOT NULL UNIQUE REFERENCES nodes(id) ON DELETE CASCADE,
  inline_blob BLOB
);
`;

/** One row of the nodes table: a sealed metadata record and the key id it was sealed under. */
export interface NodeRow {
  readonly id: Buffer;
  readonly key_id: number;
  readonly record: Buffer;
}

/** One row of the contents table: where a file's blob is (inline bytes, or NULL for a file under blobs/). */
export interface ContentRow {
  readonly file_id: Buffer;
  readonly node_id: Buffer;
  readonly inline_blob: Buffer | null;
}

function isBusy(error: unknown): boolean {
  return (
    error instanceof Error &&
    'code' in error &&
    (error.code === 'SQLITE_BUSY' || error.code === 'SQLITE_LOCKED')
  );
}

function isCorrupt(error: unknown): boolean {
  return (
    error instanceof Error &&
    'code' in error &&
    (error.code === 'SQLITE_CORRUPT' || error.code === 'SQLITE_NOTADB')
  );
}

const INDEX_SUBJECT = 'vault index (index.sqlite)';
const GENERATION_META = 'generation';
const SNAPSHOT_META = 'tree_snapshot';

/**
 * The vault's SQLite index. Holds an exclusive lock on the database for as long as it is open, which is also the
 * vault's "in use" lock: the kernel drops it when the process dies, so a crash never leaves a stale lock.
 */
export class IndexDb {
  readonly #db: Database.Database;
  readonly readOnly: boolean;
  readonly #statements = new Map<string, Database.Statement>();

  private constructor(db: Database.Database, readOnly: boolean) {
    this.#db = db;
    this.readOnly = readOnly;
  }

  /** A prepared statement, compiled once per connection: preparing per call cost more than running it. */
  #sql(text: string): Database.Statement {
    let statement = this.#statements.get(text);
    if (!statement) {
      statement = this.#db.prepare(text);
      this.#statements.set(text, statement);
    }
    return statement;
  }

  /**
   * Opens (or, with `create`, creates) the index and takes the vault lock.
   * @throws {@link VaultInUseError} when another process holds the vault.
   * @throws {@link IntegrityError} (`malformed`) when the file is not a usable SQLite database.
   */
  static open(path: string, options: { readOnly: boolean; create: boolean }): IndexDb {
    let db: Database.Database | undefined;
    try {
      db = new Database(path, { readonly: options.readOnly, fileMustExist: !options.create, timeout: 0 });
      // Set before the first access, so the lock is taken then and held until close.
      db.pragma('locking_mode = EXCLUSIVE');
      // Only takes effect on a new database. The largest page size SQLite has: inline blobs (up to 64 KiB) are most of
      // the index, and fewer, larger pages mean fewer overflow pages and write calls (measured on 10,000 small
      // files: about a tenth less CPU for add and restore than with 16 KiB pages, a fifth less than with 4 KiB).
      if (options.create) db.pragma('page_size = 65536');
      if (!options.readOnly) {
        // A rollback journal, not WAL: inline blobs make most of the index's bytes, and WAL wrote each of them twice
        // (log, then checkpoint) and made reading them back markedly slower (measured: restoring 10,000 small files
        // spent a fifth of its time in WAL page lookups). Also converts an index left in WAL mode by an older build.
        db.pragma('journal_mode = DELETE');
        db.pragma('synchronous = FULL');
        if (process.platform === 'darwin') db.pragma('fullfsync = ON');
      }
      db.pragma('foreign_keys = ON');
      if (options.readOnly) db.prepare('SELECT count(*) FROM sqlite_master').get();
      else {
        db.exec('BEGIN IMMEDIATE');
        db.exec(SCHEMA);
        db.exec('COMMIT');
      }
      return new IndexDb(db, options.readOnly);
    } catch (error) {
      db?.close();
      if (isBusy(error)) throw new VaultInUseError();
      if (isCorrupt(error)) {
        throw new IntegrityError('malformed', { subject: INDEX_SUBJECT });
      }
      throw error;
    }
  }

  /** Settings the durability promises rest on, for tests and `verify`. */
  pragmas(): { journalMode: string; synchronous: number; foreignKeys: number } {
    return {
      journalMode: String(this.#db.pragma('journal_mode', { simple: true })),
      synchronous: Number(this.#db.pragma('synchronous', { simple: true })),
      foreignKeys: Number(this.#db.pragma('foreign_keys', { simple: true })),
    };
  }

  getMeta(key: string): Buffer | undefined {
    const row = this.#sql('SELECT value FROM meta WHERE key = ?').get(key) as { value: Buffer } | undefined;
    return row?.value;
  }

  setMeta(key: string, value: Buffer): void {
    this.#sql('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(key, value);
  }

  /**
   * Counts committed write transactions (FORMAT.md section 8.6): every {@link IndexDb.transaction} bumps it, so a
   * tree snapshot sealed at one generation is known to be out of date after any later change.
   */
  generation(): bigint {
    return this.getMeta(GENERATION_META)?.readBigUInt64LE(0) ?? 0n;
  }

  /** The sealed tree snapshot, if one was stored. */
  snapshot(): Buffer | undefined {
    return this.getMeta(SNAPSHOT_META);
  }

  /** Stores a sealed tree snapshot. A cache, not a change to the vault: the generation stays as it is. */
  putSnapshot(sealed: Buffer): void {
    this.#db
      .transaction(() => {
        this.setMeta(SNAPSHOT_META, sealed);
      })
      .immediate();
  }

  deleteSnapshot(): void {
    this.#sql('DELETE FROM meta WHERE key = ?').run(SNAPSHOT_META);
  }

  nodeCount(): number {
    return this.#sql('SELECT count(*) FROM nodes').pluck().get() as number;
  }

  /** Every node row, for building the in-memory tree at unlock. */
  nodes(): NodeRow[] {
    // Raw rows are arrays: building an object per row was a third of unlocking a 100,000-entry vault.
    const rows = this.#sql('SELECT id, key_id, record FROM nodes').raw().all() as [Buffer, number, Buffer][];
    return rows.map(([id, key_id, record]) => ({ id, key_id, record }));
  }

  /**
   * Where a file id's blob is: its bytes when the index holds it inline, `null` when it is a file under blobs/,
   * `undefined` when no row names it. Only the blob column is read: restoring many small files calls this per file.
   */
  blobOf(fileId: Buffer): Buffer | null | undefined {
    return this.#sql('SELECT inline_blob FROM contents WHERE file_id = ?').pluck().get(fileId) as
      Buffer | null | undefined;
  }

  /**
   * Whether a contents row keeps this file id's blob as a file under blobs/, for sweeping orphans. One lookup per
   * blob file found: listing every row instead read the whole contents table, inline blobs and all, at every open.
   */
  hasExternalBlob(fileId: Buffer): boolean {
    return (
      this.#sql('SELECT 1 FROM contents WHERE file_id = ? AND inline_blob IS NULL').pluck().get(fileId) !==
      undefined
    );
  }

  /** Inserts or updates a node row. An upsert, not REPLACE: REPLACE deletes first, cascading to its contents. */
  putNode(row: NodeRow): void {
    this.#requireTransaction();
    this.#sql(
      'INSERT INTO nodes (id, key_id, record) VALUES (?, ?, ?) ' +
        'ON CONFLICT(id) DO UPDATE SET key_id = excluded.key_id, record = excluded.record',
    ).run(row.id, row.key_id, row.record);
  }

  putContent(row: ContentRow): void {
    this.#requireTransaction();
    this.#sql('INSERT INTO contents (file_id, node_id, inline_blob) VALUES (?, ?, ?)').run(
      row.file_id,
      row.node_id,
      row.inline_blob,
    );
  }

  /** Deletes nodes; their contents rows go with them (ON DELETE CASCADE). */
  deleteNodes(ids: readonly Buffer[]): void {
    this.#requireTransaction();
    const statement = this.#sql('DELETE FROM nodes WHERE id = ?');
    for (const id of ids) statement.run(id);
  }

  /**
   * Runs `work` in one write transaction, which also bumps the generation: all of it is durable on return, or none
   * of it happened.
   */
  transaction<T>(work: () => T): T {
    return this.#db
      .transaction(() => {
        const result = work();
        const next = Buffer.alloc(8);
        next.writeBigUInt64LE(this.generation() + 1n);
        this.setMeta(GENERATION_META, next);
        return result;
      })
      .immediate();
  }

  // Rows change only inside transaction(), or the generation would not see the change and a stale snapshot
  // would be taken for current.
  #requireTransaction(): void {
    if (!this.#db.inTransaction)
      throw new Error('internal error: index rows change only inside a transaction');
  }

  /** `PRAGMA integrity_check`: "ok", or SQLite's list of problems. */
  integrityCheck(): string[] {
    return (this.#db.pragma('integrity_check') as { integrity_check: string }[]).map(
      (row) => row.integrity_check,
    );
  }

  /**
   * Releases the lock. Every commit already went into the database file itself, so a closed vault's index is one
   * self-contained file that can be copied, synced or opened from read-only media.
   */
  close(): void {
    this.#db.close();
  }
}
