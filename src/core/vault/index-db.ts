import Database from 'better-sqlite3';

import { IntegrityError, UnsupportedFormatError, VaultInUseError } from '../errors.js';
import { hostRuntime } from '../host-runtime.js';

/** Version of the index schema below (FORMAT.md section 8.2); bumped with a migration when it changes. */
export const INDEX_SCHEMA_VERSION = 2;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS nodes (
  id BLOB PRIMARY KEY CHECK (length(id) = 16),
  key_id INTEGER NOT NULL,
  record BLOB NOT NULL
) WITHOUT ROWID;
-- A rowid table: schema 1's inline blobs run to 64 KiB, and WITHOUT ROWID b-trees suit only small rows (measured:
-- inserts and lookups of 16 KiB rows took ~90 us each that way).
CREATE TABLE IF NOT EXISTS contents (
  file_id BLOB NOT NULL UNIQUE CHECK (length(file_id) = 16),
  node_id BLOB NOT NULL UNIQUE REFERENCES nodes(id) ON DELETE CASCADE,
  inline_blob BLOB,
  pack_id BLOB CHECK (pack_id IS NULL OR length(pack_id) = 16),
  pack_offset INTEGER,
  pack_length INTEGER
);
`;

/** Schema 1 to 2: small files' blobs move from inline_blob to packs (old inline blobs stay, and are read). */
const ADD_PACK_COLUMNS = `
ALTER TABLE contents ADD COLUMN pack_id BLOB CHECK (pack_id IS NULL OR length(pack_id) = 16);
ALTER TABLE contents ADD COLUMN pack_offset INTEGER;
ALTER TABLE contents ADD COLUMN pack_length INTEGER;
`;

/** Finding a pack's rows: sweeping orphans and reclaiming space after a delete. */
const PACK_INDEX = 'CREATE INDEX IF NOT EXISTS contents_pack ON contents(pack_id) WHERE pack_id IS NOT NULL';

/** One row of the nodes table: a sealed metadata record and the key id it was sealed under. */
export interface NodeRow {
  readonly id: Buffer;
  readonly key_id: number;
  readonly record: Buffer;
}

/** A blob's place in a pack. */
export interface PackedBlob {
  readonly packId: Buffer;
  readonly offset: number;
  readonly length: number;
}

/** Where a file's blob is (FORMAT.md section 8.4). `inline` only in rows an index schema 1 wrote. */
export type BlobLocation =
  | { readonly kind: 'file' }
  | ({ readonly kind: 'pack' } & PackedBlob)
  | { readonly kind: 'inline'; readonly bytes: Buffer };

/** One row of the contents table, as written: a blob file under blobs/, or a place in a pack. */
export interface ContentRow {
  readonly file_id: Buffer;
  readonly node_id: Buffer;
  readonly location: Exclude<BlobLocation, { kind: 'inline' }>;
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
const SCHEMA_META = 'index_schema';
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

  /** False for a schema 1 index opened read-only (it cannot be upgraded): it has no pack columns. */
  readonly #hasPacks: boolean;

  private constructor(db: Database.Database, readOnly: boolean, schema: number) {
    this.#db = db;
    this.readOnly = readOnly;
    this.#hasPacks = schema >= 2;
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
      db = new Database(path, {
        readonly: options.readOnly,
        fileMustExist: !options.create,
        timeout: 0,
        nativeBinding: hostRuntime().sqliteNativeBinding,
      });
      // Set before the first access, so the lock is taken then and held until close.
      db.pragma('locking_mode = EXCLUSIVE');
      // Only takes effect on a new database. The largest page size SQLite has, chosen when inline blobs (up to
      // 64 KiB, index schema 1) were most of the index: fewer, larger pages meant fewer overflow pages and write
      // calls (measured on 10,000 small files: about a tenth less CPU for add and restore than with 16 KiB pages,
      // a fifth less than with 4 KiB).
      if (options.create) db.pragma('page_size = 65536');
      if (!options.readOnly) {
        // A rollback journal, not WAL: every commit lands in the database file itself (one self-contained file to
        // copy or read from read-only media), and when inline blobs made most of the index's bytes WAL wrote each
        // twice and slowed reading them back (restoring 10,000 small files spent a fifth of its time in WAL page
        // lookups). Also converts an index left in WAL mode by an older build.
        db.pragma('journal_mode = DELETE');
        db.pragma('synchronous = FULL');
        if (process.platform === 'darwin') db.pragma('fullfsync = ON');
      }
      db.pragma('foreign_keys = ON');
      if (!options.readOnly) {
        const writable = db;
        writable
          .transaction(() => {
            writable.exec(SCHEMA);
            upgradeSchema(writable);
          })
          .immediate();
      }
      const schema = schemaOf(db);
      refuseNewerSchema(schema);
      return new IndexDb(db, options.readOnly, schema);
    } catch (error) {
      db?.close();
      if (error instanceof UnsupportedFormatError) throw error;
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
   * Where a file id's blob is, or `undefined` when no row names it. Reads only that row's blob columns:
   * restoring many small files calls this per file.
   */
  blobOf(fileId: Buffer): BlobLocation | undefined {
    const row = this.#sql(
      this.#hasPacks
        ? 'SELECT pack_id, pack_offset, pack_length, inline_blob FROM contents WHERE file_id = ?'
        : 'SELECT NULL, NULL, NULL, inline_blob FROM contents WHERE file_id = ?',
    )
      .raw()
      .get(fileId) as [Buffer | null, number | null, number | null, Buffer | null] | undefined;
    if (!row) return undefined;
    const [packId, offset, length, inline] = row;
    if (packId) return { kind: 'pack', packId, offset: offset ?? 0, length: length ?? 0 };
    return inline ? { kind: 'inline', bytes: inline } : { kind: 'file' };
  }

  /**
   * Whether a contents row keeps this file id's blob as a file under blobs/, for sweeping orphans. One lookup per
   * blob file found: listing every row instead read the whole contents table, blobs and all, at every open.
   */
  hasExternalBlob(fileId: Buffer): boolean {
    const packed = this.#hasPacks ? ' AND pack_id IS NULL' : '';
    return (
      this.#sql(`SELECT 1 FROM contents WHERE file_id = ? AND inline_blob IS NULL${packed}`)
        .pluck()
        .get(fileId) !== undefined
    );
  }

  /** Every pack some row names. */
  packIds(): Buffer[] {
    if (!this.#hasPacks) return [];
    return this.#sql('SELECT DISTINCT pack_id FROM contents WHERE pack_id IS NOT NULL')
      .pluck()
      .all() as Buffer[];
  }

  /** Whether any row names this pack, for sweeping orphans. */
  hasPack(packId: Buffer): boolean {
    return (
      this.#hasPacks &&
      this.#sql('SELECT 1 FROM contents WHERE pack_id = ? LIMIT 1').pluck().get(packId) !== undefined
    );
  }

  /** Every blob a pack's rows name, in pack order. */
  packContents(packId: Buffer): (PackedBlob & { fileId: Buffer })[] {
    if (!this.#hasPacks) return [];
    const rows = this.#sql(
      'SELECT file_id, pack_offset, pack_length FROM contents WHERE pack_id = ? ORDER BY pack_offset',
    )
      .raw()
      .all(packId) as [Buffer, number, number][];
    return rows.map(([fileId, offset, length]) => ({ fileId, packId, offset, length }));
  }

  /** Points a blob's row at its new place (after compaction copied it there). */
  moveBlob(fileId: Buffer, to: PackedBlob): void {
    this.#requireTransaction();
    this.#sql('UPDATE contents SET pack_id = ?, pack_offset = ?, pack_length = ? WHERE file_id = ?').run(
      to.packId,
      to.offset,
      to.length,
      fileId,
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
    const packed = row.location.kind === 'pack' ? row.location : undefined;
    this.#sql(
      'INSERT INTO contents (file_id, node_id, pack_id, pack_offset, pack_length) VALUES (?, ?, ?, ?, ?)',
    ).run(row.file_id, row.node_id, packed?.packId ?? null, packed?.offset ?? null, packed?.length ?? null);
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

/** The schema version an index records (FORMAT.md section 8.2). */
function schemaOf(db: Database.Database): number {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(SCHEMA_META) as
    Buffer | undefined;
  return row && row.length === 4 ? row.readUInt32LE(0) : 1;
}

/** @throws {@link UnsupportedFormatError} for an index from a newer Coffer. */
function refuseNewerSchema(schema: number): void {
  if (schema > INDEX_SCHEMA_VERSION)
    throw new UnsupportedFormatError('vault index', schema, INDEX_SCHEMA_VERSION);
}

/**
 * Brings a writable index to {@link INDEX_SCHEMA_VERSION}, inside the caller's transaction.
 * @throws {@link UnsupportedFormatError} for an index from a newer Coffer.
 */
function upgradeSchema(db: Database.Database): void {
  const schema = schemaOf(db);
  refuseNewerSchema(schema);
  if (schema === INDEX_SCHEMA_VERSION) return;
  // A new index already has the pack columns (from SCHEMA); a schema 1 index gets them.
  const columns = db.prepare("SELECT name FROM pragma_table_info('contents')").pluck().all() as string[];
  if (!columns.includes('pack_id')) db.exec(ADD_PACK_COLUMNS);
  db.exec(PACK_INDEX);
  const version = Buffer.alloc(4);
  version.writeUInt32LE(INDEX_SCHEMA_VERSION);
  db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(SCHEMA_META, version);
}
