import { lstat, mkdir, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';

import type { StoredFile } from '../types.js';
import { fsyncDirectory, fsyncFolderIfThere } from './durable.js';
import type { Intent, IndexDb } from './index-db.js';
import { BLOB_DIR, PACK_DIR, PRIVATE_FOLDER_MODE, TEMP_DIR } from './layout.js';

/** Names Coffer gives what it stores: a blob file, a pack, and their temp files (FORMAT.md section 8.1). */
const BLOB_NAME = /^[0-9a-f]{32}$/;
const PACK_NAME = /^([0-9a-f]{32})\.pack$/;
const TEMP_NAME = /^[0-9a-f]{32}\.tmp$/;
const SHARD_NAME = /^[0-9a-f]{2}$/;

/** Where an intent's file is stored, and where it is written before it is renamed there: parts below the vault. */
function intentFiles({ kind, id }: Intent): string[][] {
  const hex = id.toString('hex');
  const temp = [TEMP_DIR, `${hex}.tmp`];
  return kind === 'pack' ? [[PACK_DIR, `${hex}.pack`], temp] : [[BLOB_DIR, hex.slice(0, 2), hex], temp];
}

/** Whether `parts` below `vaultDir` lead through real folders (no symlink, no file) to what may be there. */
async function throughFolders(vaultDir: string, parts: readonly string[]): Promise<boolean> {
  let path = vaultDir;
  for (const part of parts.slice(0, -1)) {
    path = join(path, part);
    const stats = await lstat(path).catch(() => undefined);
    if (!stats?.isDirectory()) return false;
  }
  return true;
}

/**
 * Removes a regular file at `parts` below the vault folder, never through a symlink and never anything but a
 * regular file: `kept` when something else is there, or it could not be removed.
 */
async function removeRegularFile(
  vaultDir: string,
  parts: readonly string[],
): Promise<'removed' | 'absent' | 'kept'> {
  const path = join(vaultDir, ...parts);
  const stats = await lstat(path).catch(() => undefined);
  if (!stats) return 'absent';
  if (!stats.isFile() || !(await throughFolders(vaultDir, parts))) return 'kept';
  try {
    await unlink(path);
    return 'removed';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'absent' : 'kept';
  }
}

/**
 * Settles intents (FORMAT.md section 8.5): removes the file of each that no committed row names (this vault wrote
 * it, or stopped naming it, and never committed a row that names it), fsyncs the folders they were in (also when
 * a file was already gone), then forgets every intent settled. One whose file could not be removed stays
 * recorded, for the next open to try again; all do when a folder cannot be fsynced. `lookingAt` is asked of each
 * intent just before it is looked at: `'keep'` leaves it recorded and its file alone.
 * @returns how many files were removed.
 * @throws the index's error when the intents cannot be cleared.
 */
export async function settleIntents(
  vaultDir: string,
  db: IndexDb,
  intents: Iterable<Intent>,
  lookingAt: (intent: Intent) => 'settle' | 'keep' = () => 'settle',
): Promise<number> {
  const settled: Intent[] = [];
  /** Those settled because a row names their file: only while one still does (see the end). */
  const named = new Set<Intent>();
  const removedFrom = new Set<string>();
  let removed = 0;
  for (const intent of intents) {
    // Asked at the moment it is looked at: the awaits before may have let a change commit.
    if (lookingAt(intent) === 'keep') continue;
    let kept = false;
    if (db.names(intent)) named.add(intent);
    else {
      for (const parts of intentFiles(intent)) {
        const outcome = await removeRegularFile(vaultDir, parts);
        if (outcome === 'removed') removed++;
        // An absent file too: a crash may have come between its removal and the fsync that made it durable.
        if (outcome !== 'kept') removedFrom.add(join(vaultDir, ...parts.slice(0, -1)));
        kept ||= outcome === 'kept';
      }
    }
    if (!kept) settled.push(intent);
  }
  if (settled.length === 0) return removed;
  // An intent is forgotten only once its file's removal is durable: a power cut must not bring back a file that
  // no intent and no row names any more (left for good, and under a key a re-encryption may have removed). When
  // that cannot be made sure of, the intents stay recorded for the next open to settle.
  try {
    await Promise.all([...removedFrom].map((folder) => fsyncFolderIfThere(folder)));
  } catch {
    return removed;
  }
  // A change committed during the awaits above (an add replacing the last files of a pack) may have stopped
  // naming a file and recorded an intent for it that is this one: that must stay, or nothing would remove the file.
  db.clearIntents(settled.filter((intent) => !named.has(intent) || db.names(intent)));
  return removed;
}

/**
 * After a crash (when opening a writable vault): removes Coffer's own temp files from `tmp/`, settles every
 * recorded intent, and makes the vault's folders durable where they are. Nothing else is removed: a pack or blob
 * file no row names may belong to an index that has not arrived yet (a sync service), or to a newer index put
 * aside.
 */
export async function recoverFromCrash(vaultDir: string, db: IndexDb): Promise<void> {
  await clearTempFolder(vaultDir);
  await settleIntents(vaultDir, db, db.intents());
  // A folder is durable once the folder it was made in is fsynced: a crash may have come between the two (a new
  // shard of blobs/, packs/ made for an older vault), and a writer that finds the folder there does not fsync
  // again.
  await fsyncFolderIfThere(join(vaultDir, BLOB_DIR));
  await fsyncDirectory(vaultDir);
}

/**
 * Removes the regular files in `tmp/` with the names Coffer writes there (`<32 hex>.tmp`: blobs and packs being
 * written, never read and never named by a row); creates the folder when it is missing. Anything else there, and a
 * `tmp` that is not a real folder, is left alone and not followed.
 */
async function clearTempFolder(vaultDir: string): Promise<void> {
  const folder = join(vaultDir, TEMP_DIR);
  const stats = await lstat(folder).catch(() => undefined);
  if (!stats) {
    await mkdir(folder, { mode: PRIVATE_FOLDER_MODE });
    return;
  }
  if (!stats.isDirectory()) return;
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    if (entry.isFile() && TEMP_NAME.test(entry.name))
      await removeRegularFile(vaultDir, [TEMP_DIR, entry.name]);
  }
}

/** The regular files in a real folder below the vault (none when it is missing or not a real folder). */
async function filesIn(vaultDir: string, parts: readonly string[], name: RegExp): Promise<StoredFile[]> {
  if (!(await throughFolders(vaultDir, [...parts, '']))) return [];
  const folder = join(vaultDir, ...parts);
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
  const out: StoredFile[] = [];
  for (const entry of entries) {
    if (!entry.isFile() || !name.test(entry.name)) continue;
    const stats = await lstat(join(folder, entry.name)).catch(() => undefined);
    if (stats?.isFile()) out.push({ path: [...parts, entry.name].join('/'), size: stats.size });
  }
  return out;
}

/**
 * Packs and blob files in the vault folder that no index row names, with their sizes. Only names Coffer gives them
 * are considered, only regular files, and no symlink is followed.
 */
export async function findUnreferenced(vaultDir: string, db: IndexDb): Promise<StoredFile[]> {
  const out: StoredFile[] = [];
  for (const pack of await filesIn(vaultDir, [PACK_DIR], PACK_NAME)) {
    const id = PACK_NAME.exec(pack.path.slice(PACK_DIR.length + 1))?.[1] ?? '';
    if (!db.hasPack(Buffer.from(id, 'hex'))) out.push(pack);
  }
  if (await throughFolders(vaultDir, [BLOB_DIR, ''])) {
    for (const shard of await readdir(join(vaultDir, BLOB_DIR), { withFileTypes: true }).catch(() => [])) {
      if (!shard.isDirectory() || !SHARD_NAME.test(shard.name)) continue;
      for (const blob of await filesIn(vaultDir, [BLOB_DIR, shard.name], BLOB_NAME)) {
        const id = blob.path.slice(-32);
        if (id.startsWith(shard.name) && !db.hasExternalBlob(Buffer.from(id, 'hex'))) out.push(blob);
      }
    }
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * Deletes unreferenced packs and blob files (asked for explicitly, after a confirmation): only regular files with
 * Coffer's names, never through a symlink.
 * @returns those deleted.
 */
export async function removeStoredFiles(
  vaultDir: string,
  files: readonly StoredFile[],
): Promise<StoredFile[]> {
  const deleted: StoredFile[] = [];
  for (const file of files) {
    const parts = file.path.split('/');
    const name = parts[parts.length - 1] ?? '';
    if (!PACK_NAME.test(name) && !BLOB_NAME.test(name)) continue;
    if ((await removeRegularFile(vaultDir, parts)) === 'removed') deleted.push(file);
  }
  return deleted;
}
