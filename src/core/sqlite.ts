import Database from 'better-sqlite3';

import { hostRuntime } from './host-runtime.js';

/** How {@link openSqlite} opens a database. */
export interface SqliteOpenOptions {
  /** Open without writing; default false. */
  readonly readOnly?: boolean;
  /** Create the file when it is missing; default false (a missing file is an error). */
  readonly create?: boolean;
  /**
   * How long to wait for another connection's lock, in milliseconds; default 0: a lock held elsewhere fails at once
   * (`SQLITE_BUSY`), which is how Coffer tells that a vault or a restore record is in use.
   */
  readonly busyTimeoutMs?: number;
}

/**
 * Opens a SQLite database with the better-sqlite3 addon the host needs (Electron loads its own build, see
 * {@link HostRuntime.sqliteNativeBinding}): the one way Coffer opens a database, so no caller forgets the addon or
 * waits on a lock by better-sqlite3's default of five seconds.
 * @throws better-sqlite3's `SqliteError` (or the file system's error) as it comes: callers map it.
 */
export function openSqlite(path: string, options: SqliteOpenOptions = {}): Database.Database {
  return new Database(path, {
    readonly: options.readOnly ?? false,
    fileMustExist: options.create !== true,
    timeout: options.busyTimeoutMs ?? 0,
    nativeBinding: hostRuntime().sqliteNativeBinding,
  });
}
