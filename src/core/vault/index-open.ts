import { lstatSync, readdirSync, rmdirSync, rmSync, unlinkSync } from 'node:fs';
import { mkdtemp, open, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { IntegrityError, VaultInUseError } from '../errors.js';
import { asIoError } from './durable.js';
import { HotJournalError, IndexDb, rollBackHotJournal } from './index-db.js';
import { INDEX_FILE, isNotRegular, VAULT_READ_FLAGS } from './layout.js';

/** What the user is told when a vault was read from a rolled-back private copy of its index. */
export const INTERRUPTED_WRITE_WARNING =
  'This vault was left by an interrupted write (a crash or power loss while it was being changed). It was opened ' +
  'read-only, so it was read from a private copy of its index with that write rolled back: you see the vault as ' +
  'it was before the interrupted change. Open it once where it can be written (or copy the whole vault folder to ' +
  'writable storage and open the copy) to finish the rollback in the vault itself.';

const JOURNAL_SUFFIX = '-journal';
const COPY_BUFFER_BYTES = 1024 * 1024;

/**
 * A private copy's folder in the temp folder: `coffer-index-<pid of its process>-<6 random>` (mkdtemp's suffix), so
 * that a copy whose process died without closing the vault can be told from one in use (FORMAT.md section 8.2).
 */
const COPY_FOLDER_PREFIX = 'coffer-index-';
const COPY_FOLDER_NAME = /^coffer-index-([1-9][0-9]{0,9})-[A-Za-z0-9]{6}$/u;
/** All a copy's folder ever holds. */
const COPY_FILES = [INDEX_FILE, INDEX_FILE + JOURNAL_SUFFIX];

/**
 * Opens a vault's index. A write interrupted mid-commit leaves a hot journal beside it (FORMAT.md section 8.2):
 * opened writable, SQLite plays it back in place; opened read-only it cannot, and the index must not be read
 * without it (its pages may be half-written). Then the index and its journal are copied into a private temp folder
 * (0700, files 0600), the journal is played back there, the copy is read and removed when the index is closed.
 * First removes the copies that processes which died with a vault open left behind.
 * @returns the index, and the warnings the user must see (the interrupted write).
 * @throws what {@link IndexDb.open} throws; {@link VaultInUseError} when the index changed while it was copied.
 */
export async function openIndex(
  dir: string,
  options: { readOnly: boolean; vaultId: Buffer },
): Promise<{ db: IndexDb; warnings: string[] }> {
  const path = join(dir, INDEX_FILE);
  removeStaleIndexCopies();
  try {
    return { db: IndexDb.open(path, { ...options, create: false }), warnings: [] };
  } catch (error) {
    if (!(error instanceof HotJournalError)) throw error;
  }
  const copy = await mkdtemp(join(tmpdir(), `${COPY_FOLDER_PREFIX}${process.pid}-`));
  const remove = (): void => {
    rmSync(copy, { recursive: true, force: true });
  };
  try {
    const before = await stat(path);
    for (const suffix of ['', JOURNAL_SUFFIX])
      await copyPrivately(path + suffix, join(copy, INDEX_FILE + suffix));
    const after = await stat(path);
    // Only a writer rolling the journal back in place changes the index now; a copy taken across that is a mix.
    if (after.mtimeMs !== before.mtimeMs || after.size !== before.size) throw new VaultInUseError();
    rollBackHotJournal(join(copy, INDEX_FILE));
  } catch (error) {
    remove();
    throw asIoError(error, 'Could not copy the vault index to roll back its interrupted write');
  }
  const db = IndexDb.open(join(copy, INDEX_FILE), {
    readOnly: true,
    create: false,
    vaultId: options.vaultId,
    afterClose: remove,
  });
  return { db, warnings: [INTERRUPTED_WRITE_WARNING] };
}

/** Copies a file of the vault folder (never through a link) to a new file only its owner can read. */
async function copyPrivately(from: string, to: string): Promise<void> {
  const source = await open(from, VAULT_READ_FLAGS).catch((error: unknown) => {
    throw isNotRegular(error) ? notRegular(from) : error;
  });
  try {
    if (!(await source.stat()).isFile()) throw notRegular(from);
    const target = await open(to, 'wx', 0o600);
    try {
      const buffer = Buffer.alloc(COPY_BUFFER_BYTES);
      for (;;) {
        const { bytesRead } = await source.read(buffer, 0, buffer.length);
        if (bytesRead === 0) break;
        await target.write(buffer, 0, bytesRead);
      }
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/** The index or its journal turned into a link or something else since the vault folder was checked (8.1). */
function notRegular(path: string): IntegrityError {
  return new IntegrityError('malformed', {
    subject: `vault index file ${path} (a symbolic link or not a regular file, which Coffer does not read)`,
  });
}

/**
 * Removes the private index copies that processes which ended without closing their vault (a crash, a kill) left in
 * the temp folder. Only folders named as {@link openIndex} names them, whose process is gone, that are real folders
 * of this user holding nothing but a copy's two files; anything else there is left alone. Best effort: what cannot
 * be removed now is tried again at the next open.
 */
function removeStaleIndexCopies(temp: string = tmpdir()): void {
  let names: string[];
  try {
    names = readdirSync(temp);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = COPY_FOLDER_NAME.exec(name)?.[1];
    if (pid === undefined || isRunning(Number(pid))) continue;
    try {
      removeCopyFolder(join(temp, name));
    } catch {
      // Removed meanwhile, or not ours to remove: left as it is.
    }
  }
}

/** Whether a process with this id runs (any user's: one we may not signal runs too). */
function isRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Removes a copy's folder if it is exactly what {@link openIndex} makes: never through a link, nothing else in it. */
function removeCopyFolder(folder: string): void {
  const stats = lstatSync(folder);
  const uid = process.getuid?.();
  if (!stats.isDirectory() || (uid !== undefined && stats.uid !== uid)) return;
  const entries = readdirSync(folder, { withFileTypes: true });
  if (!entries.every((entry) => entry.isFile() && COPY_FILES.includes(entry.name))) return;
  for (const entry of entries) unlinkSync(join(folder, entry.name));
  rmdirSync(folder);
}
