import { rmSync } from 'node:fs';
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
 * Opens a vault's index. A write interrupted mid-commit leaves a hot journal beside it (FORMAT.md section 8.2):
 * opened writable, SQLite plays it back in place; opened read-only it cannot, and the index must not be read
 * without it (its pages may be half-written). Then the index and its journal are copied into a private temp folder
 * (0700, files 0600), the journal is played back there, the copy is read and removed when the index is closed.
 * @returns the index, and the warnings the user must see (the interrupted write).
 * @throws what {@link IndexDb.open} throws; {@link VaultInUseError} when the index changed while it was copied.
 */
export async function openIndex(
  dir: string,
  options: { readOnly: boolean; vaultId: Buffer },
): Promise<{ db: IndexDb; warnings: string[] }> {
  const path = join(dir, INDEX_FILE);
  try {
    return { db: IndexDb.open(path, { ...options, create: false }), warnings: [] };
  } catch (error) {
    if (!(error instanceof HotJournalError)) throw error;
  }
  const copy = await mkdtemp(join(tmpdir(), 'coffer-index-'));
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
