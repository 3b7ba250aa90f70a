import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

import type Database from 'better-sqlite3';

import { openSqlite } from '../sqlite.js';
import { asIoError, isTempName, newTempPrefix, tempPathBeside } from './durable.js';

/**
 * A restore decrypts each file into a temp file beside its target (`.coffer-restore-<prefix>-<n>.tmp`), and only
 * an authenticated, complete file is renamed into place. A process killed meanwhile (kill -9, power cut, a crash)
 * leaves partial plaintext in that temp file, in a folder outside the vault that nothing else would clean. So each
 * restore keeps a record, outside both the vault and the destination, of the temp-name prefix it uses and every
 * folder it creates temp files in; the next restore (and the desktop app at start) removes, in the folders of
 * records whose restore is gone, exactly the files with that prefix.
 *
 * A record is a small SQLite database in `<state dir>/restores/`, held with an exclusive lock while its restore
 * runs: the kernel drops the lock when the process dies, however it dies, so "is that restore still running?" is
 * answered without trusting process ids (which are reused, across reboots too).
 *
 * Why not sweep the destination for `.coffer-restore-*.tmp` instead: another restore into the same folder may be
 * running, and its temp files are not leftovers; and a destination such as a home folder can be a huge tree.
 * A record names the exact folders and a prefix no other run uses.
 */

const RECORDS = 'restores';
const RECORD_NAME = /^[0-9a-f]{32}\.sqlite$/u;
const TEMP_LABEL = 'restore';

/**
 * The per-user folder for Coffer's state kept outside any vault: `COFFER_STATE_DIR` when set (tests use it), else
 * `$XDG_STATE_HOME/coffer` (an absolute XDG_STATE_HOME only, as the XDG spec says), `~/.local/state/coffer`,
 * `%LOCALAPPDATA%\Coffer\State` on Windows, `~/Library/Application Support/Coffer/State` on macOS.
 */
export function defaultStateDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const explicit = env.COFFER_STATE_DIR;
  if (explicit !== undefined && explicit !== '') return resolve(explicit);
  if (process.platform === 'win32') {
    return join(env.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'Coffer', 'State');
  }
  if (process.platform === 'darwin')
    return join(homedir(), 'Library', 'Application Support', 'Coffer', 'State');
  const xdg = env.XDG_STATE_HOME;
  return join(xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), '.local', 'state'), 'coffer');
}

/** The temp files of one running restore, recorded before they are made. */
export class RestoreRecord {
  readonly #db: Database.Database;
  readonly #path: string;
  readonly #prefix: string;
  readonly #folders = new Set<string>();
  readonly #insert: Database.Statement;

  private constructor(db: Database.Database, path: string, prefix: string) {
    this.#db = db;
    this.#path = path;
    this.#prefix = prefix;
    this.#insert = db.prepare('INSERT OR IGNORE INTO folders (path) VALUES (?)');
  }

  /**
   * Starts a record in `<stateDir>/restores`.
   * @throws {@link IoError} when the state folder cannot be written (nothing has been restored then).
   */
  static start(stateDir: string): RestoreRecord {
    const dir = join(stateDir, RECORDS);
    const path = join(dir, `${randomBytes(16).toString('hex')}.sqlite`);
    const prefix = newTempPrefix();
    let db: Database.Database | undefined;
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      // A cleaner that opened the new file in the moment before it was locked holds it briefly: wait for that.
      db = openSqlite(path, { create: true, busyTimeoutMs: 5000 });
      db.pragma('locking_mode = EXCLUSIVE');
      db.pragma('journal_mode = WAL');
      // No fsync per folder: a kill loses nothing the kernel has; against a power cut the record is best effort.
      db.pragma('synchronous = NORMAL');
      db.exec('BEGIN EXCLUSIVE');
      db.exec('CREATE TABLE folders (path TEXT PRIMARY KEY); CREATE TABLE meta (temp_prefix TEXT NOT NULL)');
      db.prepare('INSERT INTO meta (temp_prefix) VALUES (?)').run(prefix);
      db.exec('COMMIT');
      return new RestoreRecord(db, path, prefix);
    } catch (error) {
      db?.close();
      removeRecordFiles(path);
      throw asIoError(
        error,
        `Could not record the restore in "${dir}" (needed to clean up after an interrupted restore); ` +
          'set COFFER_STATE_DIR to a writable folder',
      );
    }
  }

  /** A temp path beside `target`; its folder is recorded (durably against a kill) before the path is handed out. */
  tempPathFor(target: string): string {
    const temp = tempPathBeside(target, TEMP_LABEL, this.#prefix);
    const folder = resolve(temp, '..');
    if (!this.#folders.has(folder)) {
      this.#insert.run(folder);
      this.#folders.add(folder);
    }
    return temp;
  }

  /**
   * Ends the record. After a failed or cancelled restore, first removes any of its temp files still there (a
   * removal that failed on the way out).
   */
  close(failed: boolean): void {
    if (failed) removeTemps(this.#prefix, this.#folders);
    this.#db.close();
    removeRecordFiles(this.#path);
  }
}

/**
 * Removes the partial plaintext that restores which did not finish (killed, crashed, power cut) left in their
 * destinations: in each folder a record names, the files with exactly that restore's temp-name prefix. Records of
 * restores still running (in this or another process) are left alone. The CLI runs it before every restore; the
 * desktop app should run it at start.
 * @param stateDir - Where the records are; {@link defaultStateDir} by default.
 * @returns how many temp files were removed.
 */
export function removeStaleRestoreTemps(stateDir: string = defaultStateDir()): number {
  let names: string[];
  try {
    names = readdirSync(join(stateDir, RECORDS));
  } catch {
    return 0; // no records, or none that can be read: nothing known to clean
  }
  let removed = 0;
  for (const name of names.filter((candidate) => RECORD_NAME.test(candidate))) {
    removed += cleanUpAfter(join(stateDir, RECORDS, name));
  }
  return removed;
}

/** Cleans up after one record's restore if it is gone; returns the temp files removed. */
function cleanUpAfter(path: string): number {
  let db: Database.Database | undefined;
  try {
    db = openSqlite(path);
    db.pragma('locking_mode = EXCLUSIVE');
    // Fails at once with SQLITE_BUSY while the restore that owns the record runs.
    db.exec('BEGIN EXCLUSIVE');
  } catch {
    db?.close();
    return 0;
  }
  let removed: number;
  try {
    const record = readRecord(db);
    // A record killed while it was being created has no temp files yet: left as it is.
    if (record === undefined) return 0;
    removed = removeTemps(record.prefix, record.folders);
  } finally {
    db.close();
  }
  removeRecordFiles(path);
  return removed;
}

/** The temp-name prefix and folders of a record; `undefined` for one whose creation never finished. */
function readRecord(db: Database.Database): { prefix: string; folders: string[] } | undefined {
  try {
    const prefix = db.prepare('SELECT temp_prefix FROM meta').pluck().get() as string | undefined;
    const folders = db.prepare('SELECT path FROM folders').pluck().all() as string[];
    return prefix === undefined ? undefined : { prefix, folders };
  } catch {
    return undefined; // no tables yet
  }
}

/** Removes the regular files named like a temp file with `prefix` in each folder; symlinks are never followed. */
function removeTemps(prefix: string, folders: Iterable<string>): number {
  let removed = 0;
  for (const folder of folders) {
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      continue; // the folder is gone, and its temp files with it
    }
    for (const entry of entries) {
      if (!entry.isFile() || !isTempName(entry.name, TEMP_LABEL, prefix)) continue;
      try {
        unlinkSync(join(folder, entry.name));
        removed++;
      } catch {
        // Removed meanwhile, or not removable: the record is gone either way; a later run cannot do better.
      }
    }
  }
  return removed;
}

function removeRecordFiles(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${path}${suffix}`, { force: true });
}
