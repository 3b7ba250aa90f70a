import { closeSync, openSync, statSync } from 'node:fs';

import Database from 'better-sqlite3';

import { HASH_BYTES, ID_BYTES } from '../crypto/constants.js';
import {
  addInto,
  commitmentKeyId,
  ROW_TABLE,
  rowsDoNotMatch,
  type IndexCommitter,
  type SqlValue,
} from '../crypto/index-commitment.js';
import { parseContentPadding, type ContentPadding } from '../crypto/padding.js';
import {
  IntegrityError,
  ReadOnlyVaultError,
  UnsupportedFormatError,
  VaultInUseError,
  type IntegrityReason,
} from '../errors.js';
import { ioError } from './durable.js';
import { openSqlite } from '../sqlite.js';
import { announceWrite } from '../test-hooks.js';
import { snapshotGeneration, snapshotKeyId } from './snapshot.js';

/** Version of the index schema (FORMAT.md section 8.2); bumped with a migration when it changes. */
export const INDEX_SCHEMA_VERSION = 4;
/**
 * The schema an index is brought to when it is opened writable, without keys. Schema 4 (format 1.1: record versions
 * and the index commitment) needs the keys, so {@link IndexDb.upgradeToCommitted} makes it at the first unlock.
 */
const KEYLESS_SCHEMA = 3;
/** The first schema of format 1.1 (FORMAT.md section 1, "Versioning"). */
const COMMITTED_SCHEMA = 4;

/** Schema 4: each record's version (FORMAT.md section 7), bound into its AAD and bumped at every reseal. */
const ADD_VERSION_COLUMN = 'ALTER TABLE nodes ADD COLUMN version INTEGER NOT NULL DEFAULT 0';

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
-- Schema 3: files an operation is about to write, or has just stopped naming, so that recovery after a crash
-- removes exactly those no committed row names, and nothing else (FORMAT.md section 8.5).
CREATE TABLE IF NOT EXISTS intents (
  kind TEXT NOT NULL CHECK (kind IN ('blob', 'pack')),
  id BLOB NOT NULL CHECK (typeof(id) = 'blob' AND length(id) = 16),
  PRIMARY KEY (kind, id)
) WITHOUT ROWID;
`;

/** Schema 1 to 2: small files' blobs move from inline_blob to packs (old inline blobs stay, and are read). */
const ADD_PACK_COLUMNS = `
ALTER TABLE contents ADD COLUMN pack_id BLOB CHECK (pack_id IS NULL OR length(pack_id) = 16);
ALTER TABLE contents ADD COLUMN pack_offset INTEGER;
ALTER TABLE contents ADD COLUMN pack_length INTEGER;
`;

/** Finding a pack's rows: recovery, finding packs no row names and reclaiming space after a delete. */
const PACK_INDEX = 'CREATE INDEX IF NOT EXISTS contents_pack ON contents(pack_id) WHERE pack_id IS NOT NULL';

/** What an intent names: a blob file (`blobs/xx/<id>`) or a pack (`packs/<id>.pack`). */
export type IntentKind = 'blob' | 'pack';

/** A file an operation is about to write or has just stopped naming (the intents table, FORMAT.md section 8.5). */
export interface Intent {
  readonly kind: IntentKind;
  readonly id: Buffer;
}

/** One row of the nodes table: a sealed metadata record and the key id it was sealed under. */
export interface NodeRow {
  readonly id: Buffer;
  readonly key_id: number;
  readonly record: Buffer;
  /** The record's version (FORMAT.md section 7); `undefined` in a format 1.0 index (schema 3 or older). */
  readonly version: bigint | undefined;
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

const INDEX_SUBJECT = 'vault index (index.sqlite)';

const VAULT_ID_META = 'vault_id';
const CONTENT_PADDING_META = 'content_padding';
/** How many of the tables every Coffer index has had since schema 1 (meta, nodes, contents) a database must have. */
const COFFER_TABLES = 3;

/**
 * The error for an index that is not this vault's. Never answered with a new, empty index: that would show the
 * vault as empty and its stored files as unreferenced.
 */
function indexDamaged(reason: IntegrityReason, detail = ''): IntegrityError {
  return new IntegrityError(reason, {
    subject: `vault index (index.sqlite${detail})`,
    advice:
      "Nothing in the vault folder was changed, and its stored files are still there. Put back this vault's " +
      "own index.sqlite (from a backup, or from your sync service's file history), then try again.",
  });
}

/**
 * Whether a value read from the index is an id: a 16-byte BLOB. SQLite's CHECK (length(...) = 16) also passes a
 * 16-character TEXT such as "../../victim/abc", so the type is checked here, where the value leaves the database.
 */
function isId(value: unknown): value is Buffer {
  return Buffer.isBuffer(value) && value.length === ID_BYTES;
}

/** Whether a value read from the index is a byte offset or length: a non-negative safe integer. */
function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** {@link isCount} for a value read with INTEGERs as bigint: the count, or `undefined` (a REAL is not one). */
function exactCount(value: SqlValue | undefined): number | undefined {
  return typeof value === 'bigint' && value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(value)
    : undefined;
}

/** The error for a contents row whose columns are not what a writer stores (a damaged or modified index). */
function malformedRow(fileId: unknown): IntegrityError {
  const id = Buffer.isBuffer(fileId) ? fileId.toString('hex') : '(not an id)';
  return new IntegrityError('malformed', {
    subject: `contents row of file id ${id} in the ${INDEX_SUBJECT}`,
    fileId: id,
  });
}

/** SQLite's primary result codes that are the OS's I/O errors by another name, as the errno whose words fit. */
const SQLITE_AS_ERRNO: Record<string, string> = {
  SQLITE_FULL: 'ENOSPC',
  SQLITE_IOERR: 'EIO',
  SQLITE_PERM: 'EPERM',
  SQLITE_AUTH: 'EACCES',
  // The index was there a moment before (it is checked first): what stops SQLite opening it is its permissions.
  SQLITE_CANTOPEN: 'EACCES',
};

/**
 * SQLite's failure as the engine's error: a damaged index is damage ({@link IntegrityError}), a full disk or an I/O
 * error is the same {@link IoError} the rest of the vault gives for them, a file that cannot be written is a
 * read-only vault, and another holder of the lock is {@link VaultInUseError}. Anything else (a bug) passes
 * through. The one place SQLite's errors are mapped: {@link IndexDb.open} routes every call through it.
 */
function asIndexError(error: unknown): unknown {
  if (isUnreadableDatabase(error)) return new IntegrityError('malformed', { subject: INDEX_SUBJECT });
  const code = error instanceof Database.SqliteError ? /^SQLITE_[A-Z]+/u.exec(error.code)?.[0] : undefined;
  switch (code) {
    case undefined:
      return error;
    case 'SQLITE_CORRUPT':
      return new IntegrityError('corrupt', { subject: INDEX_SUBJECT });
    // Coffer's own statements meet its own schema's constraints and types; a refusal means the tables' stored
    // definitions were changed (a damaged or edited index).
    case 'SQLITE_CONSTRAINT':
    case 'SQLITE_MISMATCH':
      // SQLite's words kept: were it a bug in Coffer's statements instead, they say which.
      return new IntegrityError('malformed', {
        subject: `${INDEX_SUBJECT}, which refused a change (${(error as Error).message})`,
      });
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED':
      return new VaultInUseError();
    case 'SQLITE_READONLY':
      return new ReadOnlyVaultError();
  }
  const errno = SQLITE_AS_ERRNO[code];
  if (errno === undefined) return error;
  return ioError(
    errno,
    `Could not ${code === 'SQLITE_FULL' ? 'write to' : 'use'} the ${INDEX_SUBJECT}`,
    error,
  );
}

/** `db` with every method's SQLite errors mapped by {@link asIndexError}; other properties as they are. */
function mappingErrors(db: IndexDb): IndexDb {
  return new Proxy(db, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      // Called on the target itself: its private fields are not visible through the proxy.
      return (...args: unknown[]) => {
        try {
          return method.apply(target, args);
        } catch (error) {
          throw asIndexError(error);
        }
      };
    },
  });
}

/**
 * Thrown by {@link IndexDb.open} read-only when the index has a hot journal (a write was interrupted mid-commit):
 * SQLite must play the journal back before the index can be read, and a read-only connection cannot. Never leaves
 * the engine: `openIndex` answers it with a rolled-back private copy (FORMAT.md section 8.2).
 */
export class HotJournalError extends Error {
  constructor() {
    super('internal: the index has a hot journal and was opened read-only');
  }
}

/**
 * SQLite's answers to a file it cannot read as a database: not one at all, or one whose header names a schema
 * format beyond any SQLite's (a damaged header: the index is always written by the SQLite this build carries).
 */
function isUnreadableDatabase(error: unknown): boolean {
  if (!(error instanceof Database.SqliteError)) return false;
  return (
    error.code === 'SQLITE_NOTADB' ||
    (error.code === 'SQLITE_ERROR' && error.message === 'unsupported file format')
  );
}

/** SQLite's answer to reading, through a read-only connection, an index whose hot journal needs playing back. */
function isHotJournal(error: unknown): boolean {
  return error instanceof Database.SqliteError && error.code === 'SQLITE_READONLY_ROLLBACK';
}

/**
 * Plays back the hot journal of a private copy of an index (FORMAT.md section 8.2): the first read through a
 * writable connection makes SQLite restore the pages the interrupted write changed and delete the journal.
 * @throws {@link IntegrityError} when the copy is damaged, {@link IoError} when it cannot be written.
 */
export function rollBackHotJournal(path: string): void {
  let db: Database.Database | undefined;
  try {
    db = openSqlite(path);
    db.prepare('SELECT count(*) FROM sqlite_master').pluck().get();
  } catch (error) {
    throw asIndexError(error);
  } finally {
    db?.close();
  }
}

/**
 * How much of the index SQLite keeps in memory, in KiB (its default, 2 MiB, is 31 pages of 64 KiB). New rows go to
 * random places of the nodes b-tree (their ids are random), so with the default nearly every insert of an add read
 * a page back and wrote one out again: with 64 MiB, inserting 100,000 format 1.1 rows in transactions of 1,000 took
 * a fifth less CPU (3.5 s against 4.3-4.7 s). Pages are held only once read, so a small index stays small.
 */
const INDEX_CACHE_KIB = 65536;
/** How much of the index {@link IndexDb.nodeCount} maps at most (SQLite reads the rest as usual). */
const COUNT_MMAP_BYTES = 1 << 30;

const SCHEMA_META = 'index_schema';
const GENERATION_META = 'generation';
const SNAPSHOT_META = 'tree_snapshot';
const COMMITMENT_META = 'index_commitment';
const CONTENTS_SUM_META = 'contents_sum';
/**
 * The meta rows the index commitment leaves out (FORMAT.md 8.7): the generation is bound by the seal instead, and
 * the contents rows' part of the sum is checked against the sealed sum instead.
 */
const UNCOVERED_META = [GENERATION_META, SNAPSHOT_META, COMMITMENT_META, CONTENTS_SUM_META];
const NODE_COLUMNS = 'id, key_id, record, version';
const CONTENT_COLUMNS = 'file_id, node_id, inline_blob, pack_id, pack_offset, pack_length';
type CoveredTable = (typeof ROW_TABLE)[keyof typeof ROW_TABLE];
/** Every row the commitment covers, per table, in its encoding's column order (FORMAT.md 8.7). */
const COVERED_ROWS: Record<CoveredTable, string> = {
  [ROW_TABLE.nodes]: `SELECT ${NODE_COLUMNS} FROM nodes`,
  [ROW_TABLE.contents]: `SELECT ${CONTENT_COLUMNS} FROM contents`,
  [ROW_TABLE.meta]: `SELECT key, value FROM meta WHERE key NOT IN (${UNCOVERED_META.map((key) => `'${key}'`).join(', ')})`,
};

/**
 * The vault's SQLite index. Holds an exclusive lock on the database for as long as it is open, which is also the
 * vault's "in use" lock: the kernel drops it when the process dies, so a crash never leaves a stale lock.
 */
export class IndexDb {
  readonly #db: Database.Database;
  readonly readOnly: boolean;
  readonly #statements = new Map<string, Database.Statement>();
  /** Statements whose INTEGERs come back as bigint, so rows are hashed exactly as SQLite stores them. */
  readonly #exactStatements = new Map<string, Database.Statement>();
  #contentPadding: ContentPadding | undefined;
  /**
   * The sealed tree snapshot as last read (null: none stored), until the snapshot is written or deleted: 7 MB for
   * 100,000 entries, whose read took 110–150 ms the first time in a process and 30–60 ms later. Ciphertext only,
   * and nothing else writes the index while it is open (it holds the exclusive lock).
   */
  #sealedSnapshot: Buffer | null | undefined;
  /**
   * The count of `nodes` rows, kept while this connection changes no row of any table (SQLite's `total_changes()`,
   * which counts writes made outside {@link IndexDb.transaction} too, such as storing the snapshot at lock). Nothing
   * else writes the index while it is open (it holds the exclusive lock), and an index with triggers, which could
   * change `nodes` inside such a write, does not open. Counting took 15–20 ms for 100,000 entries at every
   * unlock on this project's machine.
   */
  #countedNodes: { readonly changes: number; readonly count: number } | undefined;

  /** False for a schema 1 index opened read-only (it cannot be upgraded): it has no pack columns. */
  readonly #hasPacks: boolean;
  /** False for an index older than schema 3 opened read-only: it has no intents table (and needs none). */
  readonly #hasIntents: boolean;
  #schema: number;
  /** Hashes rows and seals the commitment, while the vault is unlocked (format 1.1). */
  #committer: IndexCommitter | undefined;
  /**
   * What the rows changed so far in the running transaction add to the commitment's sum, mod 2^256: the contents
   * rows' part apart, since `meta.contents_sum` changes by it too.
   */
  #delta: { others: Buffer; contents: Buffer; contentsChanged: boolean } | undefined;

  /** Removes the private copy this index was read from, if it is one. */
  readonly #afterClose: (() => void) | undefined;

  private constructor(
    db: Database.Database,
    readOnly: boolean,
    schema: number,
    afterClose: (() => void) | undefined,
  ) {
    this.#db = db;
    this.#afterClose = afterClose;
    this.readOnly = readOnly;
    this.#hasPacks = schema >= 2;
    this.#hasIntents = schema >= 3;
    this.#schema = schema;
  }

  /** The index schema (FORMAT.md section 8.2): 4 is format 1.1, 1 to 3 format 1.0. */
  get schema(): number {
    return this.#schema;
  }

  /** Whether this index is format 1.1: versioned records and a commitment (FORMAT.md sections 7 and 8.7). */
  get committed(): boolean {
    return this.#schema >= COMMITTED_SCHEMA;
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

  /** Like {@link IndexDb.#sql}, with INTEGERs as bigint (FORMAT.md 8.7 hashes INTEGER and REAL differently). */
  #exact(text: string): Database.Statement {
    let statement = this.#exactStatements.get(text);
    if (!statement) {
      statement = this.#db.prepare(text).safeIntegers(true);
      this.#exactStatements.set(text, statement);
    }
    return statement;
  }

  /**
   * Opens the index of the vault `vaultId` and takes the vault lock; with `create`, creates it (only a new vault
   * does). Anything but this vault's own index is refused before anything is written to it.
   * @throws {@link VaultInUseError} when another process holds the vault.
   * @throws {@link IntegrityError} when the index is missing (`missing`), empty (`empty`), not a Coffer index
   * (`malformed`), another vault's (`wrong-file`), or damaged (`corrupt`); every method of the index returned throws
   * that too when it meets a damaged page later, and {@link IoError} (disk full, I/O error) or
   * {@link ReadOnlyVaultError} when the file cannot be written.
   * @throws {@link HotJournalError} when opened read-only and a write left a hot journal (FORMAT.md section 8.2).
   */
  static open(
    path: string,
    options: {
      readOnly: boolean;
      create: boolean;
      vaultId: Buffer;
      contentPadding?: ContentPadding;
      /** Called once the index is closed (or failed to open): removes a private copy. */
      afterClose?: () => void;
    },
  ): IndexDb {
    let db: Database.Database | undefined;
    try {
      if (options.create) {
        // Created private before SQLite opens it: SQLite gives a new file 0644, and its journal the index's mode.
        closeSync(openSync(path, 'a', 0o600));
      } else {
        refuseMissingOrEmpty(path);
      }
      db = openSqlite(path, { readOnly: options.readOnly, create: options.create });
      // Set before the first access, so the lock is taken then and held until close.
      db.pragma('locking_mode = EXCLUSIVE');
      if (!options.create) refuseOtherIndex(db, options.vaultId);
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
      db.pragma(`cache_size = -${INDEX_CACHE_KIB}`);
      if (!options.readOnly) {
        const writable = db;
        writable
          .transaction(() => {
            writable.exec(SCHEMA);
            upgradeSchema(writable);
            if (options.create) {
              const insert = writable.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
              insert.run(VAULT_ID_META, options.vaultId);
              insert.run(CONTENT_PADDING_META, Buffer.from(options.contentPadding ?? 'none', 'latin1'));
            }
          })
          .immediate();
      }
      const schema = schemaOf(db);
      refuseNewerSchema(schema);
      refuseMissingColumns(db, schema);
      return mappingErrors(new IndexDb(db, options.readOnly, schema, options.afterClose));
    } catch (error) {
      db?.close();
      options.afterClose?.();
      if (error instanceof UnsupportedFormatError || error instanceof IntegrityError) throw error;
      if (isHotJournal(error)) throw new HotJournalError();
      if (isUnreadableDatabase(error)) throw indexDamaged('malformed', ', not a SQLite database');
      // Opening runs only Coffer's own fixed statements: an error in them means the tables' stored definitions
      // are not Coffer's ("no such column" after a damaged byte in a CREATE TABLE).
      if (!options.create && error instanceof Database.SqliteError && error.code === 'SQLITE_ERROR')
        throw indexDamaged('malformed', ', whose tables are not as Coffer made them');
      throw asIndexError(error);
    }
  }

  /**
   * Settings the durability promises (and, `cacheSize`, the speed of adds) rest on, for tests and `verify`;
   * `mmapSize` is 0 but while {@link IndexDb.nodeCount} counts.
   */
  pragmas(): {
    journalMode: string;
    lockingMode: string;
    synchronous: number;
    foreignKeys: number;
    cacheSize: number;
    mmapSize: number;
  } {
    return {
      journalMode: String(this.#db.pragma('journal_mode', { simple: true })),
      lockingMode: String(this.#db.pragma('locking_mode', { simple: true })),
      synchronous: Number(this.#db.pragma('synchronous', { simple: true })),
      foreignKeys: Number(this.#db.pragma('foreign_keys', { simple: true })),
      cacheSize: Number(this.#db.pragma('cache_size', { simple: true })),
      mmapSize: Number(this.#db.pragma('mmap_size', { simple: true })),
    };
  }

  /**
   * A meta value; `undefined` when the key is absent.
   * @throws {@link IntegrityError} (`malformed`) for a value that is not a BLOB (FORMAT.md 8.2).
   */
  getMeta(key: string): Buffer | undefined {
    const row = this.#sql('SELECT value FROM meta WHERE key = ?').get(key) as { value: unknown } | undefined;
    if (row === undefined) return undefined;
    if (!Buffer.isBuffer(row.value))
      throw indexDamaged('malformed', `, its meta value "${key}" is not a BLOB`);
    return row.value;
  }

  /**
   * How this vault pads the blobs it writes (FORMAT.md section 5.7), fixed when it was created.
   * @throws {@link IntegrityError} (`malformed`) for a value this build does not know.
   */
  contentPadding(): ContentPadding {
    this.#contentPadding ??= parseContentPadding(this.getMeta(CONTENT_PADDING_META));
    return this.#contentPadding;
  }

  /**
   * Stores a meta value. In format 1.1 a value the commitment covers (any key but the generation, the snapshot and
   * the commitment, FORMAT.md 8.7) changes only inside {@link IndexDb.transaction}, which counts it.
   */
  setMeta(key: string, value: Buffer): void {
    if (this.committed && !UNCOVERED_META.includes(key)) {
      if (!this.#delta) throw new Error(`internal error: meta "${key}" changes only inside a transaction`);
      const before = this.#exact('SELECT key, value FROM meta WHERE key = ?').raw().get(key) as
        SqlValue[] | undefined;
      if (before) this.#uncount(ROW_TABLE.meta, before);
      this.#count(ROW_TABLE.meta, [key, value]);
    }
    if (key === SNAPSHOT_META) this.#sealedSnapshot = undefined;
    this.#sql('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(key, value);
  }

  /**
   * Counts committed write transactions (FORMAT.md section 8.6): every {@link IndexDb.transaction} bumps it, so a
   * tree snapshot sealed at one generation is known to be out of date after any later change.
   */
  generation(): bigint {
    const stored = this.getMeta(GENERATION_META);
    if (stored === undefined) return 0n;
    if (stored.length !== 8) throw indexDamaged('malformed', ', its meta value "generation" is not 8 bytes');
    return stored.readBigUInt64LE(0);
  }

  /**
   * The sealed tree snapshot, if one was stored: read once, then kept until it is written or deleted (the caller
   * must not change it).
   * @throws {@link IntegrityError} (`malformed`) for a value that is not a BLOB.
   */
  snapshot(): Buffer | undefined {
    if (this.#sealedSnapshot !== undefined) return this.#sealedSnapshot ?? undefined;
    const stored = this.getMeta(SNAPSHOT_META);
    // Kept only when read outside a transaction, which could still be rolled back.
    if (!this.#db.inTransaction) this.#sealedSnapshot = stored ?? null;
    return stored;
  }

  /**
   * The sealed tree snapshot when it claims the index's current generation, the only one an unlock may use
   * (FORMAT.md 8.6); otherwise `undefined`.
   * @throws {@link IntegrityError} (`malformed`) for a snapshot or generation value a writer does not store.
   */
  currentSnapshot(): Buffer | undefined {
    const stored = this.snapshot();
    return stored && snapshotGeneration(stored) === this.generation() ? stored : undefined;
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
    this.#sealedSnapshot = undefined;
    this.#sql('DELETE FROM meta WHERE key = ?').run(SNAPSHOT_META);
  }

  /**
   * How many `nodes` rows there are, counted again only after a change (see `#countedNodes`). Counting reads every
   * page of the table; through SQLite's page cache, the first count after opening copied 50 MB for 100,000 entries
   * into fresh memory (about 120 ms, the largest part of a first unlock), so it reads them through a memory map
   * instead, which is unmapped again at once: a read error in a mapped file stops the process instead of failing
   * the read, so no longer than this.
   */
  nodeCount(): number {
    // Not kept inside a transaction: a rollback takes rows back but not the count of changes.
    const changes = this.#db.inTransaction ? undefined : this.#totalChanges();
    if (changes !== undefined && this.#countedNodes?.changes === changes) return this.#countedNodes.count;
    this.#db.pragma(`mmap_size = ${COUNT_MMAP_BYTES}`);
    let count: number;
    try {
      count = this.#sql('SELECT count(*) FROM nodes').pluck().get() as number;
    } finally {
      this.#db.pragma('mmap_size = 0');
    }
    if (changes !== undefined) this.#countedNodes = { changes, count };
    return count;
  }

  #totalChanges(): number {
    return this.#sql('SELECT total_changes()').pluck().get() as number;
  }

  /**
   * Reads (and keeps) what loading the tree at unlock reads before it needs a key: the sealed snapshot and the
   * count of rows. Never throws (an unlock calls it while its key derivation is pending): a read that fails here
   * is not kept, fails again when the tree is loaded, and is reported then.
   * @returns the sealed snapshot when it claims the index's current generation (the one an unlock may use).
   */
  readAheadForUnlock(): Buffer | undefined {
    try {
      const stored = this.currentSnapshot();
      this.nodeCount();
      return stored;
    } catch {
      // Reported by the load, as above.
      return undefined;
    }
  }

  /**
   * Every node row, for building the in-memory tree at unlock. A row whose columns are not what a writer stores (an
   * id that is not a 16-byte blob, say) is left out and handed to `malformed` with the hex of its id's bytes. With
   * `sum` (format 1.1), adds h of every node row, left out or not, to `sum.into` in the same read: the nodes part of
   * {@link IndexDb.computeSum}, which reading the rows a second time made the larger part of an unlock from the rows.
   */
  nodes(
    malformed: (id: string, error: IntegrityError) => void,
    sum?: { readonly committer: IndexCommitter; readonly into: Buffer },
  ): NodeRow[] {
    // Raw rows are arrays: building an object per row was a third of unlocking a 100,000-entry vault. INTEGERs as
    // bigint, so that the rows are hashed exactly as SQLite stores them.
    // In id order (the primary key's, so no sort): of two entries whose names clash, the first stays (8.3).
    const rows = this.#exact(
      `${this.committed ? COVERED_ROWS[ROW_TABLE.nodes] : 'SELECT id, key_id, record FROM nodes'} ORDER BY id`,
    )
      .raw()
      .all() as SqlValue[][];
    const out: NodeRow[] = [];
    for (const values of rows) {
      sum?.committer.addRow(sum.into, ROW_TABLE.nodes, values);
      const [id, storedKeyId, record, storedVersion] = values;
      const key_id = exactCount(storedKeyId);
      const version = this.committed ? exactCount(storedVersion) : undefined;
      if (
        isId(id) &&
        key_id !== undefined &&
        Buffer.isBuffer(record) &&
        this.committed === (version !== undefined)
      )
        out.push({ id, key_id, record, version: version === undefined ? undefined : BigInt(version) });
      else {
        const hex = (Buffer.isBuffer(id) ? id : Buffer.from(String(id))).toString('hex');
        malformed(
          hex,
          new IntegrityError('malformed', { subject: `node row ${hex} in the ${INDEX_SUBJECT}` }),
        );
      }
    }
    return out;
  }

  /**
   * Where a file id's blob is, or `undefined` when no row names it. Reads only that row's blob columns:
   * restoring many small files calls this per file.
   * @throws {@link IntegrityError} when the row's columns are not what a writer stores (its pack id not a 16-byte
   * blob, say): that file's contents cannot be found, the rest of the vault is unaffected.
   */
  blobOf(fileId: Buffer): BlobLocation | undefined {
    const row = this.#sql(
      this.#hasPacks
        ? 'SELECT pack_id, pack_offset, pack_length, inline_blob FROM contents WHERE file_id = ?'
        : 'SELECT NULL, NULL, NULL, inline_blob FROM contents WHERE file_id = ?',
    )
      .raw()
      .get(fileId) as [unknown, unknown, unknown, unknown] | undefined;
    if (!row) return undefined;
    const [packId, offset, length, inline] = row;
    if (packId !== null) {
      if (!isId(packId) || !isCount(offset) || !isCount(length)) throw malformedRow(fileId);
      return { kind: 'pack', packId, offset, length };
    }
    if (inline === null) return { kind: 'file' };
    if (!Buffer.isBuffer(inline)) throw malformedRow(fileId);
    return { kind: 'inline', bytes: inline };
  }

  /**
   * Whether a contents row keeps this file id's blob as a file under blobs/, for recovery and for finding blob
   * files no row names. One lookup per blob file: listing every row instead read the whole contents table.
   */
  hasExternalBlob(fileId: Buffer): boolean {
    const packed = this.#hasPacks ? ' AND pack_id IS NULL' : '';
    return (
      this.#sql(`SELECT 1 FROM contents WHERE file_id = ? AND inline_blob IS NULL${packed}`)
        .pluck()
        .get(fileId) !== undefined
    );
  }

  /** Every pack some row names. Values that are not ids name no pack: {@link IndexDb.blobOf} reports their rows. */
  packIds(): Buffer[] {
    if (!this.#hasPacks) return [];
    return this.#sql('SELECT DISTINCT pack_id FROM contents WHERE pack_id IS NOT NULL')
      .pluck()
      .all()
      .filter(isId);
  }

  /** Whether any row names this pack, for recovery and for finding packs no row names. */
  hasPack(packId: Buffer): boolean {
    return (
      this.#hasPacks &&
      this.#sql('SELECT 1 FROM contents WHERE pack_id = ? LIMIT 1').pluck().get(packId) !== undefined
    );
  }

  /**
   * Every blob a pack's rows name, in pack order.
   * @throws {@link IntegrityError} when one of those rows is not what a writer stores.
   */
  packContents(packId: Buffer): (PackedBlob & { fileId: Buffer })[] {
    if (!this.#hasPacks) return [];
    const rows = this.#sql(
      'SELECT file_id, pack_offset, pack_length FROM contents WHERE pack_id = ? ORDER BY pack_offset',
    )
      .raw()
      .all(packId) as [unknown, unknown, unknown][];
    return rows.map(([fileId, offset, length]) => {
      if (!isId(fileId) || !isCount(offset) || !isCount(length)) throw malformedRow(fileId);
      return { fileId, packId, offset, length };
    });
  }

  /** Points a blob's row at its new place (after compaction copied it there). */
  moveBlob(fileId: Buffer, to: PackedBlob): void {
    this.#requireTransaction();
    const before = this.#exact(`SELECT ${CONTENT_COLUMNS} FROM contents WHERE file_id = ?`)
      .raw()
      .get(fileId) as SqlValue[] | undefined;
    if (!before) return;
    this.#sql('UPDATE contents SET pack_id = ?, pack_offset = ?, pack_length = ? WHERE file_id = ?').run(
      to.packId,
      to.offset,
      to.length,
      fileId,
    );
    this.#uncount(ROW_TABLE.contents, before);
    this.#count(ROW_TABLE.contents, [...before.slice(0, 3), to.packId, BigInt(to.offset), BigInt(to.length)]);
  }

  /**
   * Records that these files are about to be written, or are no longer named (FORMAT.md section 8.5). Durable on
   * return when called outside a transaction (its own commit, which leaves the generation alone: no row changed);
   * inside one, it commits with that transaction's rows.
   */
  recordIntents(intents: Iterable<Intent>): void {
    const statement = this.#sql('INSERT OR IGNORE INTO intents (kind, id) VALUES (?, ?)');
    this.#db
      .transaction(() => {
        for (const { kind, id } of intents) statement.run(kind, id);
      })
      .immediate();
  }

  /** Forgets intents that are settled: committed with rows that name their files, or their files removed. */
  clearIntents(intents: Iterable<Intent>): void {
    if (!this.#hasIntents) return;
    const statement = this.#sql('DELETE FROM intents WHERE kind = ? AND id = ?');
    this.#db
      .transaction(() => {
        for (const { kind, id } of intents) statement.run(kind, id);
      })
      .immediate();
  }

  /** Every recorded intent, for recovery. Ids that are not 16 bytes are left out: no path is built from them. */
  intents(): Intent[] {
    if (!this.#hasIntents) return [];
    const rows = this.#sql('SELECT kind, id FROM intents').raw().all() as [unknown, unknown][];
    return rows.flatMap(([kind, id]) =>
      (kind === 'blob' || kind === 'pack') && Buffer.isBuffer(id) && id.length === 16 ? [{ kind, id }] : [],
    );
  }

  /** Whether a committed row names this intent's file (its blob file or its pack). */
  names({ kind, id }: Intent): boolean {
    return kind === 'pack' ? this.hasPack(id) : this.hasExternalBlob(id);
  }

  /**
   * Inserts a node row (version 1) or replaces the record of an existing one (its version plus 1: the record was
   * sealed for that version, FORMAT.md section 7). Not REPLACE, which deletes first, cascading to its contents.
   * @throws Error (an internal error) when an existing row's version is not the one before `row.version`: the record
   * was sealed for a state of the row that is gone, and storing it would reuse or skip a version.
   */
  putNode(row: NodeRow): void {
    this.#requireTransaction();
    const { version } = row;
    if (version === undefined) throw new Error('internal error: a format 1.1 record has a version');
    const values: SqlValue[] = [row.id, BigInt(row.key_id), row.record, version];
    if (version === 1n) {
      this.#sql('INSERT INTO nodes (id, key_id, record, version) VALUES (?, ?, ?, ?)').run(values);
    } else {
      const before = this.#exact(`SELECT ${NODE_COLUMNS} FROM nodes WHERE id = ?`).raw().get(row.id) as
        SqlValue[] | undefined;
      if (before?.[3] !== version - 1n)
        throw new Error('internal error: a record was sealed for a version of its row that is not current');
      this.#sql('UPDATE nodes SET key_id = ?, record = ?, version = ? WHERE id = ?').run(
        row.key_id,
        row.record,
        version,
        row.id,
      );
      this.#uncount(ROW_TABLE.nodes, before);
    }
    this.#count(ROW_TABLE.nodes, values);
  }

  /** Whether a node row with this id exists (whether or not its record opens). */
  hasNode(id: Buffer): boolean {
    return this.#sql('SELECT 1 FROM nodes WHERE id = ?').pluck().get(id) !== undefined;
  }

  /** The version of a node row's record (FORMAT.md section 7): 0 when there is no such row. */
  nodeVersion(id: Buffer): bigint {
    const version = this.#exact('SELECT version FROM nodes WHERE id = ?').pluck().get(id);
    return typeof version === 'bigint' ? version : 0n;
  }

  putContent(row: ContentRow): void {
    this.#requireTransaction();
    const packed = row.location.kind === 'pack' ? row.location : undefined;
    const values: SqlValue[] = [
      row.file_id,
      row.node_id,
      null,
      packed?.packId ?? null,
      packed ? BigInt(packed.offset) : null,
      packed ? BigInt(packed.length) : null,
    ];
    this.#sql(`INSERT INTO contents (${CONTENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`).run(values);
    this.#count(ROW_TABLE.contents, values);
  }

  /**
   * Points a file at a new blob: its contents row for `oldFileId` goes and `row` takes its place (re-encryption,
   * FORMAT.md section 11), inside the caller's transaction.
   */
  replaceContent(oldFileId: Buffer, row: ContentRow): void {
    this.#requireTransaction();
    const before = this.#exact(`SELECT ${CONTENT_COLUMNS} FROM contents WHERE file_id = ?`)
      .raw()
      .get(oldFileId) as SqlValue[] | undefined;
    if (before) {
      this.#uncount(ROW_TABLE.contents, before);
      this.#sql('DELETE FROM contents WHERE file_id = ?').run(oldFileId);
    }
    this.putContent(row);
  }

  /**
   * The key ids the index names (FORMAT.md 11.1): its records', its snapshot's and its commitment's. Values that are
   * not key ids are left out (they are damage, reported where they are read).
   */
  keyIdsNamed(): Set<number> {
    const named = new Set(this.#sql('SELECT DISTINCT key_id FROM nodes').pluck().all().filter(isCount));
    const stored = this.snapshot();
    for (const keyId of [stored && snapshotKeyId(stored), this.commitmentKeyId()]) {
      if (keyId !== undefined) named.add(keyId);
    }
    return named;
  }

  /** The ids of the node rows whose records are sealed under another key than `keyId`, whether or not they open. */
  nodeIdsNotUnder(keyId: number): Buffer[] {
    return this.#sql('SELECT id FROM nodes WHERE key_id IS NOT ?').pluck().all(keyId).filter(isId);
  }

  /**
   * Moves the index commitment to another key (FORMAT.md 8.7, "Key id"), in one write transaction: the sum of the
   * rows under the old key must equal the sealed one, then the sum under `to` is sealed at the next generation.
   * @throws {@link IntegrityError} (nothing changed) when the stored commitment does not open or the rows do not
   * match it: the index was changed behind Coffer's back, which `verify` reports.
   */
  rekeyCommitment(from: IndexCommitter, to: IndexCommitter): void {
    this.#db
      .transaction(() => {
        const sealed = this.openCommitment(from);
        if (!this.computeSum(from).equals(sealed)) throw rowsDoNotMatch();
        this.#commitAll(to);
      })
      .immediate();
    announceWrite('committed');
  }

  /** Deletes nodes and their contents rows. */
  deleteNodes(ids: readonly Buffer[]): void {
    this.#requireTransaction();
    const node = this.#exact(`SELECT ${NODE_COLUMNS} FROM nodes WHERE id = ?`).raw();
    const contents = this.#exact(`SELECT ${CONTENT_COLUMNS} FROM contents WHERE node_id = ?`).raw();
    // Explicitly, not only through ON DELETE CASCADE: the commitment subtracts exactly the rows that go.
    const deleteContents = this.#sql('DELETE FROM contents WHERE node_id = ?');
    const deleteNode = this.#sql('DELETE FROM nodes WHERE id = ?');
    for (const id of ids) {
      for (const row of contents.all(id) as SqlValue[][]) this.#uncount(ROW_TABLE.contents, row);
      const before = node.get(id) as SqlValue[] | undefined;
      if (before) this.#uncount(ROW_TABLE.nodes, before);
      deleteContents.run(id);
      deleteNode.run(id);
    }
  }

  /** Adds a row written in the running transaction to the commitment's pending change (format 1.1). */
  #count(table: number, values: readonly SqlValue[]): void {
    const into = this.#deltaFor(table);
    if (into && this.#committer) this.#committer.addRow(into, table, values);
  }

  /** Takes a row the running transaction deletes or replaces, as it was, out of the pending change. */
  #uncount(table: number, values: readonly SqlValue[]): void {
    const from = this.#deltaFor(table);
    if (from && this.#committer) this.#committer.subtractRow(from, table, values);
  }

  #deltaFor(table: number): Buffer | undefined {
    const delta = this.#delta;
    if (!delta || table !== ROW_TABLE.contents) return delta?.others;
    delta.contentsChanged = true;
    return delta.contents;
  }

  /**
   * Lets write transactions advance the index commitment (format 1.1), with the unlocked vault's keys; `undefined`
   * at lock. Without it, a format 1.1 index refuses every write transaction.
   */
  attachCommitter(committer: IndexCommitter | undefined): void {
    this.#committer = committer;
  }

  /** The key id the stored commitment names (unauthenticated), if there is one. */
  commitmentKeyId(): number | undefined {
    const stored = this.getMeta(COMMITMENT_META);
    return stored ? commitmentKeyId(stored) : undefined;
  }

  /**
   * The sealed commitment's sum at the current generation (FORMAT.md 8.7).
   * @throws {@link IntegrityError} when it is missing or does not open at `meta.generation`.
   */
  openCommitment(committer: IndexCommitter): Buffer {
    return committer.open(this.getMeta(COMMITMENT_META), this.generation());
  }

  /** The stored (sealed) commitment's bytes, for remembering which state of the index was seen. */
  sealedCommitment(): Buffer | undefined {
    return this.getMeta(COMMITMENT_META);
  }

  /**
   * The commitment's sum recomputed from every covered row (FORMAT.md 8.7): O(rows), for unlock and verify. A part
   * given in `known` is taken as it is instead of read: the nodes rows' part that {@link IndexDb.nodes} added up as
   * it read them, or the contents rows' part that `meta.contents_sum` keeps (an unlock, never `verify`).
   */
  computeSum(committer: IndexCommitter, known: { nodes?: Buffer; contents?: Buffer } = {}): Buffer {
    const sum = Buffer.alloc(HASH_BYTES);
    addInto(sum, known.nodes ?? this.#tableSum(committer, ROW_TABLE.nodes));
    addInto(sum, known.contents ?? this.contentsRowsSum(committer));
    addInto(sum, this.#tableSum(committer, ROW_TABLE.meta));
    return sum;
  }

  /** Σ h over the contents rows, mod 2^256: what `meta.contents_sum` should hold (FORMAT.md 8.7). */
  contentsRowsSum(committer: IndexCommitter): Buffer {
    return this.#tableSum(committer, ROW_TABLE.contents);
  }

  /** Σ h over one table's covered rows, mod 2^256. */
  #tableSum(committer: IndexCommitter, table: CoveredTable): Buffer {
    const sum = Buffer.alloc(HASH_BYTES);
    for (const row of this.#exact(COVERED_ROWS[table]).raw().iterate() as IterableIterator<SqlValue[]>)
      committer.addRow(sum, table, row);
    return sum;
  }

  /**
   * Stores a sealed `meta.contents_sum` where it was absent (FORMAT.md 8.7), outside any write transaction: like the
   * tree snapshot it repeats what the rows say, and the generation stays as it is.
   */
  putContentsSum(sealed: Buffer): void {
    this.setMeta(CONTENTS_SUM_META, sealed);
  }

  /**
   * Opens `meta.contents_sum` (FORMAT.md 8.7), the contents rows' part of the sum.
   * @returns it, or `undefined` when it is absent.
   * @throws {@link IntegrityError} when it is not a BLOB or does not open (see {@link IndexCommitter.openContentsSum}).
   */
  openContentsSum(committer: IndexCommitter): Buffer | undefined {
    const row = this.#sql('SELECT value FROM meta WHERE key = ?').get(CONTENTS_SUM_META) as
      { value: unknown } | undefined;
    if (row === undefined) return undefined;
    return committer.openContentsSum(Buffer.isBuffer(row.value) ? row.value : Buffer.alloc(0));
  }

  /**
   * `meta.contents_sum` opened for a write, which leaves it as it is when it is absent or does not open (unlock and
   * `verify` report that).
   */
  #usableContentsSum(committer: IndexCommitter): Buffer | undefined {
    try {
      return this.openContentsSum(committer);
    } catch (error) {
      if (error instanceof IntegrityError) return undefined;
      throw error;
    }
  }

  /**
   * Brings a format 1.0 index (schema 3) to format 1.1 (schema 4, FORMAT.md section 8.2) in one transaction: adds
   * the version column, seals every record again at version 1 with `reseal` (a row it returns `undefined` for, one
   * that does not open, stays as it is, and is reported as damaged), and stores the commitment of the result.
   */
  upgradeToCommitted(committer: IndexCommitter, reseal: (row: NodeRow) => Buffer | undefined): void {
    if (this.committed) return;
    this.#db
      .transaction(() => {
        const columns = this.#db.prepare("SELECT name FROM pragma_table_info('nodes')").pluck().all();
        if (!columns.includes('version')) this.#db.exec(ADD_VERSION_COLUMN);
        const rows = this.#db.prepare('SELECT id, key_id, record FROM nodes').raw().all() as [
          unknown,
          unknown,
          unknown,
        ][];
        const update = this.#db.prepare('UPDATE nodes SET record = ?, version = 1 WHERE id = ?');
        for (const [id, key_id, record] of rows) {
          if (!isId(id) || !isCount(key_id) || !Buffer.isBuffer(record)) continue;
          const resealed = reseal({ id, key_id, record, version: undefined });
          if (resealed) update.run(resealed, id);
        }
        this.setMeta(SCHEMA_META, schemaValue(COMMITTED_SCHEMA));
        this.#commitAll(committer);
      })
      .immediate();
    this.#schema = COMMITTED_SCHEMA;
  }

  /**
   * Stores the commitment of the rows as they are now, in a write transaction of its own (`verify --repair`, after
   * it reported that they did not match).
   */
  recommit(committer: IndexCommitter): void {
    this.#db
      .transaction(() => {
        this.#commitAll(committer);
      })
      .immediate();
    announceWrite('committed');
  }

  /**
   * Advances the generation and seals the sum of every covered row at it, inside the caller's transaction, with
   * `meta.contents_sum` its contents rows' part.
   */
  #commitAll(committer: IndexCommitter): void {
    const generation = this.generation() + 1n;
    this.#setGeneration(generation);
    const contents = this.contentsRowsSum(committer);
    this.setMeta(COMMITMENT_META, committer.seal(this.computeSum(committer, { contents }), generation));
    this.setMeta(CONTENTS_SUM_META, committer.sealContentsSum(contents));
  }

  #setGeneration(generation: bigint): void {
    const value = Buffer.alloc(8);
    value.writeBigUInt64LE(generation);
    this.setMeta(GENERATION_META, value);
  }

  /** Each contents row's file id and node id, for checking them against the records (`verify`, FORMAT.md 8.7). */
  contentsLinks(): [unknown, unknown][] {
    return this.#sql('SELECT file_id, node_id FROM contents').raw().all() as [unknown, unknown][];
  }

  /**
   * Runs `work` in one write transaction, which also bumps the generation and, in format 1.1, advances the index
   * commitment by the rows `work` changed: all of it is durable on return, or none of it happened.
   * @throws {@link IntegrityError} (nothing changed) in format 1.1 when the stored commitment does not open at the
   * current generation, or the vault is locked.
   */
  transaction<T>(work: () => T): T {
    const committed = this.#db
      .transaction(() => {
        const generation = this.generation();
        let sum: Buffer | undefined;
        if (this.committed) {
          // No committer: the commitment names a key this vault does not have (reported at unlock).
          if (!this.#committer)
            throw new IntegrityError('unknown-key', { subject: 'vault index as a whole (its commitment)' });
          sum = this.openCommitment(this.#committer);
          this.#delta = {
            others: Buffer.alloc(HASH_BYTES),
            contents: Buffer.alloc(HASH_BYTES),
            contentsChanged: false,
          };
        }
        try {
          const result = work();
          this.#setGeneration(generation + 1n);
          if (sum && this.#delta && this.#committer) {
            addInto(sum, this.#delta.others);
            addInto(sum, this.#delta.contents);
            this.setMeta(COMMITMENT_META, this.#committer.seal(sum, generation + 1n));
            const contentsSum = this.#delta.contentsChanged
              ? this.#usableContentsSum(this.#committer)
              : undefined;
            if (contentsSum) {
              addInto(contentsSum, this.#delta.contents);
              this.setMeta(CONTENTS_SUM_META, this.#committer.sealContentsSum(contentsSum));
            }
          }
          announceWrite('pending');
          return result;
        } finally {
          this.#delta = undefined;
        }
      })
      .immediate();
    announceWrite('committed');
    return committed;
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
    this.#afterClose?.();
  }
}

/** The schema version an index records (FORMAT.md section 8.2). */
/** @throws {@link IntegrityError} (`malformed`) for an `index_schema` that is not a 4-byte BLOB. */
function schemaOf(db: Database.Database): number {
  const row: unknown = db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(SCHEMA_META);
  if (row === undefined) return 1;
  // Not read as schema 1: that would take a 1.1 index for a 1.0 one, whose records it then fails to open.
  if (!Buffer.isBuffer(row) || row.length !== 4)
    throw indexDamaged('malformed', ', its meta value "index_schema" is not a 4-byte BLOB');
  return row.readUInt32LE(0);
}

/** Each column a reader uses, by table, and the schema it came with (FORMAT.md 8.2). */
const REQUIRED_COLUMNS: readonly (readonly [table: string, column: string, since: number])[] = [
  ['meta', 'key', 1],
  ['meta', 'value', 1],
  ['nodes', 'id', 1],
  ['nodes', 'key_id', 1],
  ['nodes', 'record', 1],
  ['nodes', 'version', 4],
  ['contents', 'file_id', 1],
  ['contents', 'node_id', 1],
  ['contents', 'inline_blob', 1],
  ['contents', 'pack_id', 2],
  ['contents', 'pack_offset', 2],
  ['contents', 'pack_length', 2],
  ['intents', 'kind', 3],
  ['intents', 'id', 3],
];

/**
 * Refuses an index whose tables lack a column its schema has: read on, it failed midway with SQLite's own words.
 * @throws {@link IntegrityError} (`malformed`) naming the table and column.
 */
function refuseMissingColumns(db: Database.Database, schema: number): void {
  const columnsOf = new Map<string, string[]>();
  for (const [table, column, since] of REQUIRED_COLUMNS) {
    if (schema < since) continue;
    let columns = columnsOf.get(table);
    if (!columns) {
      columns = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(table) as string[];
      columnsOf.set(table, columns);
    }
    if (!columns.includes(column)) {
      throw indexDamaged(
        'malformed',
        `, its table "${table}" has no column "${column}" (index schema ${schema})`,
      );
    }
  }
}

/** @throws {@link UnsupportedFormatError} for an index from a newer Coffer. */
function refuseNewerSchema(schema: number): void {
  if (schema > INDEX_SCHEMA_VERSION)
    throw new UnsupportedFormatError('vault index', schema, INDEX_SCHEMA_VERSION);
}

/**
 * Brings a writable index to {@link KEYLESS_SCHEMA} (schema 4 needs the keys: {@link IndexDb.upgradeToCommitted}),
 * inside the caller's transaction.
 * @throws {@link UnsupportedFormatError} for an index from a newer Coffer.
 */
function upgradeSchema(db: Database.Database): void {
  const schema = schemaOf(db);
  refuseNewerSchema(schema);
  if (schema >= KEYLESS_SCHEMA) return;
  // A new index already has the pack columns (from SCHEMA); a schema 1 index gets them. The intents table of
  // schema 3 comes from SCHEMA for every index.
  const columns = db.prepare("SELECT name FROM pragma_table_info('contents')").pluck().all() as string[];
  if (!columns.includes('pack_id')) db.exec(ADD_PACK_COLUMNS);
  db.exec(PACK_INDEX);
  db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(
    SCHEMA_META,
    schemaValue(KEYLESS_SCHEMA),
  );
}

function schemaValue(schema: number): Buffer {
  const value = Buffer.alloc(4);
  value.writeUInt32LE(schema);
  return value;
}

/** @throws {@link IntegrityError} (`missing`, `empty`) before SQLite could take a missing or empty file for new. */
function refuseMissingOrEmpty(path: string): void {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw indexDamaged('missing');
    throw error;
  }
  if (size === 0) throw indexDamaged('empty');
}

/**
 * Checks, before anything is written, that a database is a Coffer index and records `vaultId` as its vault.
 * @throws {@link IntegrityError} (`malformed`, `wrong-file`) when it is not this vault's index;
 * {@link UnsupportedFormatError} when a newer Coffer wrote it.
 */
function refuseOtherIndex(db: Database.Database, vaultId: Buffer): void {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('contents', 'meta', 'nodes')")
    .pluck()
    .all() as string[];
  if (tables.length !== COFFER_TABLES) throw indexDamaged('malformed', ', which has no Coffer tables');
  const stored = db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(VAULT_ID_META);
  if (!Buffer.isBuffer(stored)) throw indexDamaged('malformed', ', which records no vault id');
  if (!stored.equals(vaultId)) throw indexDamaged('wrong-file');
  // A newer Coffer's index is refused as such (FORMAT.md 8.2), whatever else it holds.
  refuseNewerSchema(schemaOf(db));
  // A trigger runs SQL of the file's choosing inside Coffer's writes (refusing them, or changing other rows);
  // Coffer makes neither triggers nor views.
  const foreign = db
    .prepare("SELECT count(*) FROM sqlite_master WHERE type IN ('trigger', 'view')")
    .pluck()
    .get();
  if (foreign !== 0) throw indexDamaged('malformed', ', which holds triggers or views Coffer never makes');
}
