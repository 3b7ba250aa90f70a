import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';

import { AlreadyExistsError, CancelledError, IntegrityError } from '../errors.js';
import type { StoredFile, VaultEntry } from '../types.js';
import { bufferSource, fileSource, openBlob } from './blob-io.js';
import { asIoError, fsyncDirectory } from './durable.js';
import type { ContentRow } from './index-db.js';
import { MAX_PACK_BYTES, PACK_DIR, requireRegularFile, VAULT_READ_FLAGS } from './layout.js';
import { freeNumberedName } from './numbered-name.js';
import { namesUnknownKey, walkPack } from './pack-walk.js';
import { contentSizeOf, cryptoPlace, openBlobFrom } from './read.js';
import type { Session } from './session.js';
import type { TreeNode } from './tree.js';

/** The vault folder recovered files go into. */
const LOST_FOUND = 'lost+found';

/** Why a file whose blobs name a key the header in use lacks is left. */
const UNKNOWN_KEY_NOTE =
  'its blobs are under a key the vault header in use does not hold (another copy of the header may: restore ' +
  'that one, then repair again)';

/** A blob found in an unreferenced file, authenticated, with the row that would name it. */
interface FoundBlob {
  readonly fileId: Buffer;
  readonly plaintextSize: number;
  readonly location: ContentRow['location'];
}

/**
 * Brings the contents of unreferenced packs and blob files back into the vault (FORMAT.md section 8.5): each
 * complete blob of this vault in them, authenticated with the file id in its own header, is named by a new row that
 * points at the blob where it is (nothing is copied), so the pack or blob file is referenced again: the row of the
 * file entry whose record names that file id, or else of a new file `/lost+found/recovered-<file id>`. All rows for
 * one pack or blob file go in one transaction.
 * @returns the recovered entries, the files left unreferenced with the reason, and those of them that hold no
 * readable blob of this vault (nothing in them can be recovered; a copy whose file ids rows already name is not
 * among them, since those rows' own data may be what is missing).
 * @throws {@link CancelledError} when `signal` aborts (what was recovered before stays).
 * @throws any error other than damage to an unreferenced file ({@link IoError}, {@link AlreadyExistsError} when
 * "/lost+found" is a file, {@link VaultLockedError}, the index's {@link IntegrityError} when it refuses a recovered
 * row): the repair stops there.
 */
export async function recoverUnreferenced(
  session: Session,
  files: readonly StoredFile[],
  signal?: AbortSignal,
): Promise<{ recovered: VaultEntry[]; left: StoredFile[]; holdsNothing: StoredFile[] }> {
  const recovered: VaultEntry[] = [];
  const left: StoredFile[] = [];
  const holdsNothing: StoredFile[] = [];
  const syncedFolders = new Set<string>();
  let waiting: Map<string, TreeNode> | undefined;
  for (const file of files) {
    if (signal?.aborted) throw new CancelledError();
    const isPack = file.path.startsWith(`${PACK_DIR}/`);
    if (isPack && file.size > MAX_PACK_BYTES) {
      // Not read whole, and not counted as holding nothing: --delete-unreferenced must not remove what was not read.
      left.push({ ...file, note: 'it is larger than any pack Coffer writes, so it was not read' });
      continue;
    }
    let found: FoundBlob[];
    try {
      found = isPack ? await blobsInPack(session, file) : [await blobInFile(session, file, signal)];
    } catch (error) {
      // Only damage to the file itself leaves it behind as holding nothing; anything else (a full disk, a lock)
      // stops the repair, so that a --delete-unreferenced after it cannot remove data repair could not bring back
      // for a reason of its own. The same for the index's errors below, outside this catch.
      if (!(error instanceof IntegrityError))
        throw asIoError(error, `Could not read ${file.path} to bring it back`);
      if (error.reason === 'unknown-key') {
        // Readable under a newer header's key (FORMAT.md 4.7): kept, whatever --delete-unreferenced asks.
        left.push({ ...file, note: UNKNOWN_KEY_NOTE });
        continue;
      }
      left.push({ ...file, note: `it could not be recovered: ${error.message}` });
      holdsNothing.push(file);
      continue;
    }
    // Each file id once: a pack may hold a copy of a blob after it, which a second row could not name.
    const seen = new Set<string>();
    const fresh = found.filter(({ fileId }) => {
      const hex = fileId.toString('hex');
      if (seen.has(hex) || isNamed(session, fileId)) return false;
      seen.add(hex);
      return true;
    });
    if (fresh.length === 0) {
      if (found.length === 0) holdsNothing.push(file);
      left.push({
        ...file,
        note:
          found.length === 0
            ? 'it holds no complete blob of this vault'
            : 'everything in it is already in the vault (a leftover copy)',
      });
      continue;
    }
    waiting ??= entriesWithoutContents(session);
    const mtime = await makeDurable(session, file, syncedFolders);
    recovered.push(...adopt(session, fresh, mtime, waiting));
  }
  return { recovered, left, holdsNothing };
}

/** Whether a contents row names `fileId`; a damaged one does too (verify reports it), and cannot be named twice. */
function isNamed(session: Session, fileId: Buffer): boolean {
  try {
    return session.db.blobOf(fileId) !== undefined;
  } catch (error) {
    if (error instanceof IntegrityError) return true;
    throw error;
  }
}

/**
 * Makes an unreferenced file durable where it is before a row names it: its bytes, and its name in each folder from
 * its own up to the vault folder (each once per repair). What a sync service or a crash left there may never have
 * been fsynced, and a row committed before it would outlive it after a power cut.
 * @returns the file's modification time, for the recovered files' rows.
 * @throws {@link IoError} when the file or a folder cannot be opened or fsynced.
 */
async function makeDurable(session: Session, file: StoredFile, syncedFolders: Set<string>): Promise<number> {
  const path = join(session.dir, file.path);
  try {
    // Windows flushes a file only through a handle that may write to it; elsewhere reading is enough.
    const access = process.platform === 'win32' ? constants.O_RDWR : constants.O_RDONLY;
    const handle = await open(path, VAULT_READ_FLAGS | access);
    let mtime: number;
    try {
      const stats = await handle.stat();
      requireRegularFile(stats, path);
      await handle.sync();
      mtime = stats.mtimeMs;
    } finally {
      await handle.close();
    }
    const parts = file.path.split('/');
    for (let depth = parts.length - 1; depth >= 0; depth--) {
      const folder = join(session.dir, ...parts.slice(0, depth));
      if (syncedFolders.has(folder)) continue;
      await fsyncDirectory(folder);
      syncedFolders.add(folder);
    }
    return mtime;
  } catch (error) {
    throw asIoError(error, `Could not make ${file.path} durable before bringing it back`);
  }
}

/** Every complete blob of this vault in an unreferenced pack. */
async function blobsInPack(session: Session, file: StoredFile): Promise<FoundBlob[]> {
  const packId = Buffer.from(file.path.slice(PACK_DIR.length + 1, PACK_DIR.length + 33), 'hex');
  const path = join(session.dir, file.path);
  const fd = openSync(path, VAULT_READ_FLAGS);
  let pack: Buffer;
  try {
    requireRegularFile(fstatSync(fd), path);
    pack = readFileSync(fd);
  } finally {
    closeSync(fd);
  }
  const walked = walkPack(session, pack, 0, pack.length);
  if (walked.blobs.length === 0 && namesUnknownKey(session, pack, walked.other)) {
    throw new IntegrityError('unknown-key', { subject: `unreferenced pack ${file.path}` });
  }
  const found: FoundBlob[] = [];
  for (const { fileId, offset, length } of walked.blobs) {
    const source = bufferSource(pack.subarray(offset, offset + length));
    const bind = { vaultId: session.keys.vaultId, fileId, label: `unreferenced pack ${file.path}` };
    const { cipher, layout } = await openBlobFrom(session, source, length, bind);
    try {
      const plaintextSize = await contentSizeOf({ source, cipher, layout });
      found.push({ fileId, plaintextSize, location: { kind: 'pack', packId, offset, length } });
    } finally {
      cipher.wipe();
    }
  }
  return found;
}

/** An unreferenced blob file, authenticated whole as the blob of the file id its name gives. */
async function blobInFile(session: Session, file: StoredFile, signal?: AbortSignal): Promise<FoundBlob> {
  const fileId = Buffer.from(file.path.slice(-32), 'hex');
  const path = join(session.dir, file.path);
  const handle = await open(path, VAULT_READ_FLAGS);
  try {
    requireRegularFile(await handle.stat(), path);
    const source = fileSource(handle);
    const bind = { vaultId: session.keys.vaultId, fileId, label: `unreferenced blob file ${file.path}` };
    const { cipher, layout } = await openBlobFrom(session, source, (await handle.stat()).size, bind);
    try {
      await openBlob({
        place: await cryptoPlace(session, layout.chunkCount),
        cipher,
        source,
        chunkCount: layout.chunkCount,
        plaintextSize: layout.plaintextSize,
        sink: 'discard',
        ...(signal ? { signal } : {}),
      });
      return {
        fileId,
        plaintextSize: await contentSizeOf({ source, cipher, layout }),
        location: { kind: 'file' },
      };
    } finally {
      cipher.wipe();
    }
  } finally {
    await handle.close();
  }
}

/**
 * Names found blobs, in one transaction: a blob that is what a file entry lost gives that entry its contents row
 * back (rather than a second entry reading the same blob, which verify would report); any other becomes a new file
 * under /lost+found (created when missing).
 * @param waiting - File entries that have no contents row, by the file id their records name (see
 * {@link entriesWithoutContents}); an entry given its row here is taken out.
 * @throws {@link AlreadyExistsError} when /lost+found is a file and a blob needs it.
 */
function adopt(
  session: Session,
  blobs: readonly FoundBlob[],
  mtime: number,
  waiting: Map<string, TreeNode>,
): VaultEntry[] {
  const reattached: { node: TreeNode; content: ContentRow }[] = [];
  const unnamed: FoundBlob[] = [];
  for (const blob of blobs) {
    const node = waiting.get(blob.fileId.toString('hex'));
    // Of another size the blob is not that entry's file as its record has it: reading it there would fail, and the
    // bytes would be out of reach. They go to /lost+found instead, readable.
    if (node?.size === blob.plaintextSize) {
      const content = { file_id: blob.fileId, node_id: Buffer.from(node.id, 'hex'), location: blob.location };
      reattached.push({ node, content });
      waiting.delete(blob.fileId.toString('hex'));
    } else unnamed.push(blob);
  }
  const { folderRow, rows } = unnamed.length > 0 ? lostAndFound(session, unnamed, mtime) : { rows: [] };
  session.db.transaction(() => {
    for (const { content } of reattached) session.db.putContent(content);
    if (folderRow) session.db.putNode(folderRow);
    for (const { row, content } of rows) {
      session.db.putNode(row);
      session.db.putContent(content);
    }
  });
  if (folderRow) session.tree.insert(folderRow.node);
  for (const { row } of rows) session.tree.insert(row.node);
  return [...reattached.map(({ node }) => node), ...rows.map(({ row }) => row.node)].map((node) =>
    session.entry(node),
  );
}

/**
 * The rows that name blobs no entry names as files `/lost+found/recovered-<file id>`, and the folder's row when it
 * is missing.
 * @throws {@link AlreadyExistsError} when /lost+found is a file.
 */
function lostAndFound(session: Session, found: readonly FoundBlob[], mtime: number) {
  const existing = session.tree.child(null, LOST_FOUND);
  if (existing && existing.type !== 'folder') {
    throw new AlreadyExistsError(
      `"/${LOST_FOUND}" is a file; rename it so that recovered files can be put in a folder of that name.`,
    );
  }
  const folderRow = existing
    ? undefined
    : session.seal(session.newId(), {
        type: 'folder',
        name: LOST_FOUND,
        parent: null,
        size: 0,
        mtime: Date.now(),
      });
  const folder = existing ?? folderRow?.node;
  const rows = found.map(({ fileId, plaintextSize, location }) => {
    const name = freeName(session, existing, `recovered-${fileId.toString('hex')}`);
    const row = session.seal(session.newId(), {
      type: 'file',
      name,
      parent: folder?.id ?? null,
      size: plaintextSize,
      mtime,
      fileId: fileId.toString('hex'),
    });
    return { row, content: { file_id: fileId, node_id: row.id, location } };
  });
  return { folderRow, rows };
}

/** `name`, or when an entry of /lost+found has it, the first of `name (2)`, `name (3)`, … none has. */
function freeName(session: Session, folder: TreeNode | undefined, name: string): string {
  const taken = (candidate: string): boolean =>
    folder !== undefined && session.tree.child(folder.id, candidate) !== undefined;
  return taken(name) ? freeNumberedName(name, taken) : name;
}

/**
 * The file entries that no contents row names, by the file id their records name, leaving out a file id more than
 * one entry names (which of them the blob is cannot be told; verify reports them).
 */
function entriesWithoutContents(session: Session): Map<string, TreeNode> {
  const withRow = new Set<string>();
  for (const [, nodeId] of session.db.contentsLinks())
    if (Buffer.isBuffer(nodeId)) withRow.add(nodeId.toString('hex'));
  const named = new Map<string, TreeNode | null>();
  for (const node of session.tree.values()) {
    if (node.fileId !== undefined) named.set(node.fileId, named.has(node.fileId) ? null : node);
  }
  const waiting = new Map<string, TreeNode>();
  for (const [fileId, node] of named) if (node && !withRow.has(node.id)) waiting.set(fileId, node);
  return waiting;
}
