import { CancelledError, CofferError, IntegrityError, IoError, VaultLockedError } from '../errors.js';
import {
  INDEX_PROBLEM_PATH,
  type Problem,
  type StoredFile,
  type VaultEntry,
  type VerifyOptions,
  type VerifyReport,
} from '../types.js';
import type { PackedBlob } from './index-db.js';
import { MAX_PACK_BYTES, PACK_DIR, readStoredPack } from './layout.js';
import { findUnreferenced, removeStoredFiles, settleIntents } from './leftovers.js';
import { recoverUnreferenced } from './lost-found.js';
import { walkPack, type ByteRange } from './pack-walk.js';
import { reclaimPacks } from './packs.js';
import { ByteSteps } from './progress.js';
import { authenticateLastChunk, decryptFile } from './read.js';
import type { Session } from './session.js';

/**
 * Checks the vault: SQLite's integrity check, every index row decrypts and has a parent, every file's contents
 * exist and have the size the index records (by authenticating the chunk that holds the last byte), every pack's
 * bytes that no row names are complete blobs (deleted files'); lists the packs and blob files no row names, and
 * keeps them unless asked to bring them back (`repair`) or delete them (`deleteUnreferenced`); when it found no
 * damage, reclaims the space of deleted files' blobs in packs. With `readData`, every chunk of every file is
 * authenticated.
 * @throws {@link ReadOnlyVaultError} when `repair` or `deleteUnreferenced` is asked of a read-only vault.
 */
export async function verifyVault(session: Session, options: VerifyOptions): Promise<VerifyReport> {
  if (options.repair === true || options.deleteUnreferenced === true) session.requireWritable();
  const snapshotProblems = session.reloadFromRows();
  const problems: Problem[] = [...session.damaged, ...snapshotProblems, ...checkContentsLinks(session)];
  // Reported above; with repair the index as it is now is accepted first, so that the writes below (recovered
  // files, compaction) and later ones work again.
  if (options.repair === true && session.commitmentDamaged) session.recommit();
  for (const line of session.db.integrityCheck()) {
    if (line !== 'ok')
      problems.push({
        path: INDEX_PROBLEM_PATH,
        code: 'INTEGRITY',
        message: `SQLite integrity check: ${line}`,
      });
  }
  const { unreferenced, recovered, deleted } = await unreferencedFiles(session, options);
  const files = [...session.tree.values()].filter((node) => node.type === 'file');
  const bytesTotal = files.reduce((sum, node) => sum + (options.readData === true ? node.size : 0), 0);
  let filesChecked = 0;
  /** Bytes that authenticated, for the report. */
  let bytesChecked = 0;
  /** Bytes read so far, damaged ones too, for the progress. */
  let bytesDone = 0;
  const report = (bytes: number, current?: string): void => {
    options.onProgress?.({
      filesDone: filesChecked,
      filesTotal: files.length,
      bytesDone: bytes,
      bytesTotal,
      ...(current === undefined ? {} : { current }),
    });
  };
  for (const node of files) {
    if (options.signal?.aborted) throw new CancelledError();
    const path = session.tree.pathOf(node);
    report(bytesDone, path);
    try {
      if (options.readData === true || node.size === 0) {
        const steps = new ByteSteps(() => {
          report(bytesDone + steps.reported, path);
        });
        await decryptFile(session, node, 'discard', {
          ...(options.signal ? { signal: options.signal } : {}),
          onBytes: (bytes) => {
            steps.add(bytes);
          },
        });
        bytesChecked += node.size;
      } else {
        await authenticateLastChunk(session, node);
      }
    } catch (error) {
      // A lock stops verify: the wiped keys say so, and that is no problem with this file. Nor is a disk that fails
      // to read (it would be one "problem" per file left, and exit code 4 says damage): verify stops and says so.
      if (
        !(error instanceof CofferError) ||
        error instanceof CancelledError ||
        error instanceof VaultLockedError ||
        error instanceof IoError
      )
        throw error;
      problems.push({ path, code: error.code, message: error.message });
    }
    if (options.readData === true) bytesDone += node.size;
    filesChecked++;
  }
  report(bytesDone);
  problems.push(...checkPackShapes(session));
  // Only in a vault found whole: after damage the user is told to put back a copy of the index they trust, and a
  // compaction would remove packs that copy names.
  if (session.writable && problems.length === 0) await reclaimPacks(session, session.db.packIds());
  options.onProgress?.({
    filesDone: filesChecked,
    filesTotal: files.length,
    bytesDone: bytesChecked,
    bytesTotal,
  });
  return {
    ok: problems.length === 0,
    filesChecked,
    bytesChecked,
    problems,
    unreferenced,
    recovered,
    deleted,
  };
}

/**
 * Settles what crashed operations left (when writable), then finds the packs and blob files no row names and, as
 * asked, brings their contents back into the vault or deletes them.
 */
async function unreferencedFiles(
  session: Session,
  options: VerifyOptions,
): Promise<{ unreferenced: StoredFile[]; recovered: VaultEntry[]; deleted: StoredFile[] }> {
  if (session.writable) await settleIntents(session.dir, session.db, session.db.intents());
  let unreferenced = await findUnreferenced(session.dir, session.db);
  let recovered: VaultEntry[] = [];
  // With repair, only what holds nothing recoverable may be deleted after it.
  let deletable = unreferenced;
  if (options.repair === true && unreferenced.length > 0) {
    ({
      recovered,
      left: unreferenced,
      holdsNothing: deletable,
    } = await recoverUnreferenced(session, unreferenced, options.signal));
  }
  let deleted: StoredFile[] = [];
  if (options.deleteUnreferenced === true && deletable.length > 0) {
    deleted = await removeStoredFiles(session.dir, deletable);
    const gone = new Set(deleted.map((file) => file.path));
    unreferenced = unreferenced.filter((file) => !gone.has(file.path));
  }
  return { unreferenced, recovered, deleted };
}

/**
 * Checks that every `contents` row belongs to the file entry whose record names its file id (FORMAT.md 8.7), and
 * that no other file entry names that file id (two entries would read one blob, 5.4). A swapped or moved pointer
 * is reported by the entry's path; a file entry with no row at all is reported by the check of its contents.
 */
function checkContentsLinks(session: Session): Problem[] {
  const isIdBuffer = (value: unknown): value is Buffer => Buffer.isBuffer(value) && value.length === 16;
  const problems: Problem[] = [];
  const mismatch = (path: string, detail: string): Problem => ({
    path,
    code: 'INTEGRITY',
    message: `The index's pointer to the stored contents of "${path}" ${detail} (the index was changed outside Coffer).`,
  });
  /** Each file id a row rightly names, with its entry (a row naming no entry, or the wrong one, is reported as such). */
  const owners = new Map<string, string>();
  const reported = new Set<string>();
  for (const [fileId, nodeId] of session.db.contentsLinks()) {
    const node = Buffer.isBuffer(nodeId) ? session.tree.get(nodeId.toString('hex')) : undefined;
    const file = Buffer.isBuffer(fileId) ? fileId.toString('hex') : '?';
    if (node?.fileId === file) owners.set(file, node.id);
    if (!node) {
      // A row whose entry is there but did not open goes with that entry, which is reported already.
      if (isIdBuffer(nodeId) && session.db.hasNode(nodeId)) continue;
      problems.push(
        mismatch(
          `(index contents row ${file})`,
          'belongs to no entry of the index: it was moved from another entry, or its entry is damaged',
        ),
      );
    } else if (node.type !== 'file' || node.fileId !== file) {
      problems.push(mismatch(session.tree.pathOf(node), 'names another file than its entry does'));
      reported.add(node.id);
    }
  }
  for (const node of session.tree.values()) {
    const owner = node.type === 'file' ? owners.get(node.fileId ?? '') : undefined;
    if (owner !== undefined && owner !== node.id && !reported.has(node.id)) {
      problems.push(
        mismatch(session.tree.pathOf(node), "is another entry's: its record names that entry's file"),
      );
    }
  }
  return problems;
}

/**
 * Checks the shape of every pack (FORMAT.md section 8.4): a pack is complete blobs one after another, so the bytes
 * no row names (deleted files' blobs, until compaction) must be complete blobs of this vault too. Bytes that are
 * not, after the last blob or between blobs, were appended or damaged.
 */
function checkPackShapes(session: Session): Problem[] {
  const problems: Problem[] = [];
  for (const packId of session.db.packIds()) {
    let live;
    try {
      live = session.db.packContents(packId);
    } catch (error) {
      if (error instanceof IntegrityError) continue; // the damaged row is reported with its file
      throw error;
    }
    let unnamed: ByteRange[] = [];
    let size = 0;
    const pack = readStoredPack(
      session.packs.path(packId),
      (found) => (unnamed = bytesNoRowNames(live, (size = found))).length > 0,
    );
    const name = `${PACK_DIR}/${packId.toString('hex')}.pack`;
    if (!pack) {
      // A missing pack, or one that is a link or not a regular file, is reported by its files' checks.
      if (unnamed.length > 0 && size > MAX_PACK_BYTES) {
        problems.push({
          path: name,
          code: 'INTEGRITY',
          message:
            `Pack ${name} is not as Coffer wrote it: it is ${size} bytes, far more than any pack Coffer writes ` +
            '(data was appended to it). The files the index names in it are checked on their own.',
        });
      }
      continue;
    }
    for (const range of unnamed) {
      for (const other of walkPack(session, pack, range.offset, range.offset + range.length).other) {
        const where = other.offset + other.length === size ? 'at its end' : `from offset ${other.offset}`;
        problems.push({
          path: name,
          code: 'INTEGRITY',
          message:
            `Pack ${name} is not as Coffer wrote it: the ${other.length} bytes ${where} that no entry names are ` +
            'not a sequence of complete blobs of this vault (data was appended there, or damaged). The files the ' +
            'index names in it are checked on their own.',
        });
      }
    }
  }
  return problems;
}

/** The byte ranges of a pack of `size` bytes that none of its rows (in offset order) covers. */
function bytesNoRowNames(rows: readonly PackedBlob[], size: number): ByteRange[] {
  const ranges: ByteRange[] = [];
  let covered = 0;
  for (const { offset, length } of rows) {
    if (offset > covered) ranges.push({ offset: covered, length: Math.min(offset, size) - covered });
    covered = Math.max(covered, offset + length);
  }
  if (size > covered) ranges.push({ offset: covered, length: size - covered });
  return ranges.filter((range) => range.length > 0);
}
