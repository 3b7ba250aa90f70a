import {
  closeSync,
  fsync,
  futimesSync,
  lstatSync,
  openSync,
  rmdirSync,
  statSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { promisify } from 'node:util';

import { sharedCryptoPool } from '../crypto/pool.js';
import {
  AlreadyExistsError,
  CancelledError,
  CofferError,
  IntegrityError,
  InvalidArgumentError,
  InvalidNameError,
  IoError,
} from '../errors.js';
import { nameKey } from '../../shared/name-key.js';
import { destinationPath, parseVaultPath } from '../names.js';
import { publishFile } from '../publish.js';
import type { Problem, Progress, RestoreOptions, RestoreReport } from '../types.js';
import { asIoError, fsyncDirectory, fsyncFolderIfThere, makeFolders, removeQuietly } from './durable.js';
import { SMALL_FILE_LIMIT } from './layout.js';
import { refuseRestoreIntoVault, sameFile } from './outside.js';
import { ByteSteps } from './progress.js';
import { decryptFile, decryptSmallFile } from './read.js';
import { defaultStateDir, removeStaleRestoreTemps, RestoreRecord } from './restore-record.js';
import { notReplaced, SmallFileRestorer, type RestoredFile } from './restore-small.js';
import type { Session } from './session.js';
import type { TreeNode } from './tree.js';

interface RestoreItem {
  readonly node: TreeNode;
  /** Names below the destination folder. */
  readonly parts: readonly string[];
}

/**
 * What goes at the top of the destination folder, in the order asked: a path inside another one asked for goes with
 * it rather than twice, and the root stands for everything in it.
 * @throws {@link InvalidArgumentError} when two of them have the same name as the vault compares names (search
 * results from different folders, say): in one destination folder the second would replace the first, or be
 * skipped for it.
 */
function topLevelNodes(session: Session, paths: readonly string[]): TreeNode[] {
  const { tree } = session;
  const asked = paths.map((path) => tree.resolve(parseVaultPath(path)));
  if (asked.includes(null)) return tree.childrenOf(null);
  const nodes = asked.filter((node) => node !== null);
  const ids = new Set(nodes.map(({ id }) => id));
  const insideAnother = (node: TreeNode): boolean => {
    for (let at = node.parent; at !== null; at = tree.get(at)?.parent ?? null) if (ids.has(at)) return true;
    return false;
  };
  const byName = new Map<string, TreeNode>();
  for (const node of nodes) {
    if (insideAnother(node)) continue;
    const key = nameKey(node.name);
    const other = byName.get(key);
    if (other && other.id !== node.id) {
      throw new InvalidArgumentError(
        `"${tree.pathOf(other)}" and "${tree.pathOf(node)}" would both be restored as "${node.name}" in the same ` +
          'folder, and one would take the place of the other. Restore them one at a time, into different folders.',
      );
    }
    byName.set(key, node);
  }
  return [...byName.values()];
}

function plan(session: Session, paths: readonly string[]): RestoreItem[] {
  const items: RestoreItem[] = [];
  const visit = (node: TreeNode, parts: readonly string[]): void => {
    items.push({ node, parts });
    if (node.type === 'folder') {
      for (const child of session.tree.childrenOf(node.id)) visit(child, [...parts, child.name]);
    }
  };
  for (const node of topLevelNodes(session, paths)) visit(node, [node.name]);
  return items;
}

/**
 * What is at `path`, not following a symbolic link (`file` is anything else that is not a folder). Synchronous: one
 * quick metadata call, made per restored file.
 */
function exists(path: string): 'file' | 'folder' | 'link' | false {
  try {
    const stats = lstatSync(path);
    return stats.isDirectory() ? 'folder' : stats.isSymbolicLink() ? 'link' : 'file';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Whether the system refused a path as too long (`ENAMETOOLONG`), as raised or as wrapped in an {@link IoError}. */
function isPathTooLong(error: unknown): boolean {
  const cause = error instanceof IoError ? error.cause : error;
  return (cause as NodeJS.ErrnoException | undefined)?.code === 'ENAMETOOLONG';
}

/** A file decrypted into its temp file, waiting to be made durable and published with the rest of its batch. */
export interface Staged {
  readonly node: TreeNode;
  readonly vaultPath: string;
  readonly target: string;
  readonly temp: string;
  /** Bytes of it already counted in the progress while it was decrypted. */
  readonly bytesReported?: number;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/** Small files are staged this many at a time, so their fsyncs run in parallel and each folder is synced once. */
const STAGE_BATCH = 64;
/** Past this many bytes of small files (up to 1 MiB each), decrypting them here would hold this thread too long. */
const SMALL_BYTES_FOR_POOL = 4 * 1024 * 1024;

const fsyncFd = promisify(fsync);

/**
 * fsyncs a folder of the destination that this restore made something in. One that is gone (removed as emptied)
 * holds nothing to make durable, and one it may not open (write and search permission without read) cannot be
 * fsynced from here: both are left as they are, rather than failing a restore whose files are all in place.
 */
async function syncDestinationFolder(folder: string): Promise<void> {
  try {
    await fsyncFolderIfThere(folder);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM') throw error;
  }
}
/** Folders fsynced in parallel at the end of a restore. */
const FOLDER_SYNCS_AT_ONCE = 16;

class RestoreJob {
  readonly #session: Session;
  readonly #options: RestoreOptions;
  readonly #record: RestoreRecord;
  readonly #problems: Problem[] = [];
  #progress: Progress = { filesDone: 0, filesTotal: 0, bytesDone: 0, bytesTotal: 0 };
  #files = 0;
  #folders = 0;
  readonly #createdFolders = new Set<string>();
  /** The folders this restore made a folder in since they were last fsynced (see #makeFoldersDurable). */
  readonly #unsynced = new Set<string>();
  /** Folders this restore made whose names are durable: the folder each was made in was fsynced since. */
  readonly #durableFolders = new Set<string>();
  #bytes = 0;
  /** Folders that entries too deep to restore were to go in; see {@link RestoreJob.#removeEmptied}. */
  readonly #emptied = new Set<string>();
  /** The vault folder's stats: a folder met on the way that is the vault folder is not restored into. */
  #vaultFolder: Stats | undefined;

  constructor(session: Session, options: RestoreOptions, record: RestoreRecord) {
    this.#session = session;
    this.#options = options;
    this.#record = record;
  }

  #report(change: Partial<Progress>): void {
    this.#progress = { ...this.#progress, ...change };
    this.#options.onProgress?.(this.#progress);
  }

  async run(items: readonly RestoreItem[], destinationDir: string): Promise<RestoreReport> {
    const files = items.filter((item) => item.node.type === 'file');
    this.#report({
      filesTotal: files.length,
      bytesTotal: files.reduce((sum, item) => sum + item.node.size, 0),
    });
    const root = resolve(destinationDir);
    this.#vaultFolder = await refuseRestoreIntoVault(this.#session.dir, destinationDir);
    try {
      // The destination is durable before anything is restored into it: the folders it was made in (and the one
      // holding it when it was there: a restore cut off by a crash may have made it and never fsynced) are fsynced.
      const madeIn = new Set([...(await makeFolders(root)), dirname(root)]);
      for (const folder of madeIn) await syncDestinationFolder(folder);
    } catch (error) {
      throw asIoError(error, `Could not create "${root}"`);
    }
    const batch: Staged[] = [];
    // Many small files: the pool's workers open, write and publish them while this thread reads the index.
    const small = files.filter((item) => item.node.size <= SMALL_FILE_LIMIT);
    const smallBytes = small.reduce((sum, item) => sum + item.node.size, 0);
    const pool =
      small.length > STAGE_BATCH || smallBytes > SMALL_BYTES_FOR_POOL ? await sharedCryptoPool() : undefined;
    const restorer = pool
      ? new SmallFileRestorer(this.#session, pool, this.#record, {
          problem: (path, error) => {
            this.#problem(path, error);
          },
          restored: (files) => this.#restored(files),
          tooLong: (path, target) => {
            this.#reportTooLong(path, target);
          },
        })
      : undefined;
    try {
      await this.#restoreItems(items, root, batch, restorer);
      await restorer?.flush();
      // A cancel while the last batches were out: what they restored was not all reported.
      if (this.#options.signal?.aborted) throw new CancelledError();
    } catch (error) {
      await restorer?.abandon();
      await this.#discard(batch.splice(0));
      // What was reported restored stays: its folders too (best effort; the error at hand is the news).
      await this.#makeFoldersDurable().catch(() => undefined);
      throw error;
    }
    this.#removeEmptied();
    await this.#makeFoldersDurable();
    return {
      filesRestored: this.#files,
      foldersRestored: this.#folders,
      bytesRestored: this.#bytes,
      problems: this.#problems,
    };
  }

  async #restoreItems(
    items: readonly RestoreItem[],
    root: string,
    batch: Staged[],
    restorer: SmallFileRestorer | undefined,
  ): Promise<void> {
    const skippedFolders = new Set<string>();
    for (const item of items) {
      if (this.#options.signal?.aborted) throw new CancelledError();
      const vaultPath = this.#session.tree.pathOf(item.node);
      if ([...skippedFolders].some((prefix) => vaultPath.startsWith(`${prefix}/`))) continue;
      let target: string;
      try {
        target = destinationPath(root, item.parts);
      } catch (error) {
        this.#problem(vaultPath, error);
        if (item.node.type === 'folder') skippedFolders.add(vaultPath);
        continue;
      }
      if (item.node.type === 'folder') {
        if (!(await this.#restoreFolder(vaultPath, target))) skippedFolders.add(vaultPath);
        continue;
      }
      this.#report({ current: vaultPath });
      if (this.#inTheWay(vaultPath, target)) continue;
      const small = item.node.size <= SMALL_FILE_LIMIT;
      if (small && (await restorer?.add(item.node, vaultPath, target, this.#replaces(target)))) continue;
      if (!small) {
        await restorer?.flush();
        await this.#publishBatch(batch.splice(0));
      }
      const staged = await this.#stage(item.node, vaultPath, target, small);
      if (staged) batch.push(staged);
      if (!small || batch.length >= STAGE_BATCH) await this.#publishBatch(batch.splice(0));
    }
    await this.#publishBatch(batch.splice(0));
  }

  /** Whether publishing may replace what is at `target`: overwriting was asked for, and its folder was there before. */
  #replaces(target: string): boolean {
    // Never in a folder this restore made: nothing was there before it, so anything there now is a file it just
    // restored under a name the destination's file system takes for the same (case folding, 8.3 short names, a
    // Unicode form other than the one names are compared in), or someone else's; either way not to be replaced.
    return this.#options.overwrite === true && !this.#createdFolders.has(dirname(target));
  }

  /** Reports and skips a file whose target is taken (a folder, or a file when not overwriting). */
  #inTheWay(vaultPath: string, target: string): boolean {
    let found;
    try {
      // Inside a folder this restore created, nothing is in the way.
      found = this.#createdFolders.has(dirname(target)) ? false : exists(target);
    } catch (error) {
      if (!isPathTooLong(error)) throw error;
      this.#reportTooLong(vaultPath, target);
      return true;
    }
    // With overwrite, a symbolic link is replaced by the file (never written through).
    if (found === 'folder') {
      // Replacing would not help: a folder is never replaced by a file.
      this.#problem(
        vaultPath,
        new AlreadyExistsError(
          `"${target}" is a folder, so the file was not restored there. Move or rename that folder, then restore again.`,
        ),
      );
      return true;
    }
    if (found && this.#options.overwrite !== true) {
      this.#problem(vaultPath, notReplaced(target), { kept: true });
      return true;
    }
    return false;
  }

  #problem(path: string, error: unknown, kept?: { kept: true }): void {
    if (!(error instanceof CofferError)) throw error;
    this.#problems.push({ path, code: error.code, message: error.message, ...kept });
  }

  /**
   * Reports an entry whose path on disk is longer than the system takes (a deep tree), and remembers its folder:
   * folders made for it alone are removed at the end. The rest of the restore goes on: the entry is one branch.
   */
  #reportTooLong(vaultPath: string, target: string): void {
    this.#problem(
      vaultPath,
      new InvalidNameError(
        'too-long',
        `Not restored: its path in the destination would be ${Buffer.byteLength(target)} bytes long, longer ` +
          "than the destination's file system takes. Restore it on its own into a folder with a shorter path, or " +
          'move it higher up in the vault.',
      ),
    );
    this.#emptied.add(dirname(target));
  }

  /**
   * fsyncs each folder this restore made a folder in since it was last fsynced, at the end: the folders that
   * received files were made durable before those were reported (see #restored); this covers those left empty,
   * so that a restore reported done survives a power cut whole.
   * @throws {@link IoError} when one cannot be fsynced (one removed since, as emptied, is skipped).
   */
  async #makeFoldersDurable(): Promise<void> {
    const folders = [...this.#unsynced];
    try {
      // A few at a time: each holds a descriptor open until its fsync is done.
      for (let at = 0; at < folders.length; at += FOLDER_SYNCS_AT_ONCE) {
        await Promise.all(
          folders.slice(at, at + FOLDER_SYNCS_AT_ONCE).map((folder) => syncDestinationFolder(folder)),
        );
      }
    } catch (error) {
      throw asIoError(error, 'Could not make the restored folders durable');
    }
  }

  /**
   * Removes the folders this restore created that are empty because what was to go in them was too deep to
   * restore: from each such entry's folder upwards, as long as the folder is empty (rmdir refuses otherwise) and
   * this restore made it. Folders that were there before are never touched.
   */
  #removeEmptied(): void {
    const deepestFirst = [...this.#emptied].sort((a, b) => b.length - a.length);
    for (let dir of deepestFirst) {
      while (this.#createdFolders.has(dir)) {
        try {
          rmdirSync(dir);
        } catch {
          break; // not empty: something else was restored in it
        }
        this.#createdFolders.delete(dir);
        this.#folders--;
        dir = dirname(dir);
      }
    }
  }

  async #restoreFolder(vaultPath: string, target: string): Promise<boolean> {
    let found;
    try {
      found = exists(target);
    } catch (error) {
      if (!isPathTooLong(error)) throw error;
      this.#reportTooLong(vaultPath, target);
      return false;
    }
    if (found === 'file' || found === 'link') {
      const what = found === 'link' ? 'a symbolic link' : 'a file';
      this.#problem(
        vaultPath,
        new AlreadyExistsError(`"${target}" is ${what}, so folder "${vaultPath}" was not restored.`),
      );
      return false;
    }
    // The destination holds the vault folder, and this folder's path leads into it (checked once per folder: a
    // folder below one skipped is never reached).
    if (found === 'folder' && this.#vaultFolder && sameFile(statSync(target), this.#vaultFolder)) {
      this.#problem(
        vaultPath,
        new InvalidArgumentError(
          `"${target}" is the vault folder, so folder "${vaultPath}" was not restored into it: decrypted files ` +
            'must never be written there. Restore it to another folder.',
        ),
      );
      return false;
    }
    if (!found) {
      try {
        const madeIn = await makeFolders(target);
        for (const folder of madeIn) this.#unsynced.add(folder);
        // The folders made on the way (only if the destination changed meanwhile) are this restore's too.
        for (const folder of madeIn.slice(1)) this.#createdFolders.add(folder);
      } catch (error) {
        if (!isPathTooLong(error)) throw asIoError(error, `Could not create "${target}"`);
        this.#reportTooLong(vaultPath, target);
        return false;
      }
      this.#folders++;
      this.#createdFolders.add(target);
    }
    return true;
  }

  /**
   * Decrypts into a temp file beside the target, with the file's modification time. Nothing is published yet: a
   * damaged file never appears at its final path, and an existing file is never half-overwritten.
   * @returns the staged file, or `undefined` when it was reported as a problem instead.
   */
  async #stage(
    node: TreeNode,
    vaultPath: string,
    target: string,
    small: boolean,
  ): Promise<Staged | undefined> {
    const temp = this.#record.tempPathFor(target);
    const mtime = new Date(node.mtime);
    const file = { node, vaultPath, target, temp };
    try {
      if (small) {
        // Small files are written with synchronous calls: a thread-pool round trip each would cost more than
        // the write itself.
        const plaintext = await decryptSmallFile(this.#session, node);
        // 0o666 less the user's umask, as `cp` would create it.
        const fd = openSync(temp, 'wx', 0o666);
        try {
          writeSync(fd, plaintext);
          futimesSync(fd, mtime, mtime);
        } catch (error) {
          closeSync(fd);
          throw error;
        }
        return {
          ...file,
          sync: () => fsyncFd(fd),
          close: () => {
            closeSync(fd);
            return Promise.resolve();
          },
        };
      }
      const out = await open(temp, 'wx', 0o666);
      const steps = new ByteSteps((bytes) => {
        this.#report({ bytesDone: this.#progress.bytesDone + bytes });
      });
      try {
        await decryptFile(this.#session, node, out, {
          ...(this.#options.signal ? { signal: this.#options.signal } : {}),
          onBytes: (bytes) => {
            steps.add(bytes);
          },
        });
        await out.utimes(mtime, mtime);
      } catch (error) {
        await out.close();
        throw error;
      }
      return { ...file, bytesReported: steps.reported, sync: () => out.sync(), close: () => out.close() };
    } catch (error) {
      await removeQuietly(temp);
      if (error instanceof IntegrityError) {
        this.#problem(vaultPath, error);
        return undefined;
      }
      if (isPathTooLong(error)) {
        this.#reportTooLong(vaultPath, target);
        return undefined;
      }
      if (error instanceof CancelledError) throw error;
      throw asIoError(error, `Could not write "${target}"`);
    }
  }

  async #discard(staged: readonly Staged[]): Promise<void> {
    for (const file of staged) {
      await file.close().catch(() => undefined);
      await removeQuietly(file.temp);
    }
  }

  /** Makes staged files durable (fsyncs in parallel), publishes them, then syncs each folder they went into once. */
  async #publishBatch(staged: readonly Staged[]): Promise<void> {
    if (staged.length === 0) return;
    try {
      await Promise.all(staged.map((file) => file.sync()));
    } catch (error) {
      await this.#discard(staged);
      throw asIoError(error, 'Could not write the restored files');
    }
    for (const file of staged) await file.close();
    const published: Staged[] = [];
    for (const [index, file] of staged.entries()) {
      try {
        if (publishFile(file.temp, file.target, this.#replaces(file.target)) === 'exists') {
          throw notReplaced(file.target);
        }
        published.push(file);
      } catch (error) {
        await removeQuietly(file.temp);
        if (!(error instanceof AlreadyExistsError)) {
          // No temp file may outlive a failed restore.
          for (const rest of staged.slice(index + 1)) await removeQuietly(rest.temp);
          throw asIoError(error, `Could not write "${file.target}"`);
        }
        this.#problem(file.vaultPath, error);
      }
    }
    await Promise.all(
      [...new Set(published.map((file) => dirname(file.target)))].map((dir) => fsyncDirectory(dir)),
    );
    await this.#restored(published);
  }

  /**
   * Accounts for files now at their targets, durable in their folders, and tells the caller, once the folders
   * this restore made for them are durable too (the folder each was made in fsynced).
   * @throws {@link IoError} when a folder cannot be fsynced (the files are left unreported).
   */
  async #restored(files: readonly (RestoredFile & { readonly bytesReported?: number })[]): Promise<void> {
    const newFolders = new Set<string>();
    for (const file of files) {
      for (let folder = dirname(file.target); this.#createdFolders.has(folder); folder = dirname(folder)) {
        if (this.#durableFolders.has(folder)) break;
        newFolders.add(folder);
      }
    }
    const parents = [...new Set([...newFolders].map((folder) => dirname(folder)))];
    // Taken off before the fsyncs start: a folder made in one meanwhile puts it back.
    for (const parent of parents) this.#unsynced.delete(parent);
    try {
      await Promise.all(parents.map((parent) => syncDestinationFolder(parent)));
    } catch (error) {
      for (const parent of parents) this.#unsynced.add(parent);
      throw asIoError(error, 'Could not make the restored folders durable');
    }
    for (const folder of newFolders) this.#durableFolders.add(folder);
    for (const file of files) {
      this.#files++;
      this.#bytes += file.node.size;
      this.#report({
        bytesDone: this.#progress.bytesDone + file.node.size - (file.bytesReported ?? 0),
        filesDone: this.#progress.filesDone + 1,
      });
      this.#options.onRestored?.(this.#session.entry(file.node), file.target);
    }
  }
}

/**
 * Restores files and folders (recursively; "/" restores everything) into `destinationDir`, creating it if
 * needed. Each file is written to a temp file beside its target and renamed into place only after every chunk
 * authenticated. Damaged or missing contents, existing files (without `overwrite`) and unsafe names are reported
 * and the rest continues. Temp files that earlier restores left (killed, crashed) are removed first, and this
 * one's are recorded (see restore-record.ts), so no partial plaintext outlives a restore, however it ends.
 * @throws {@link NotFoundError} before anything is written when a vault path does not exist.
 * @throws {@link InvalidArgumentError} before anything is written when `destinationDir` is in the vault folder (a
 * folder inside the destination that is the vault folder is reported and left out instead), or when two of `paths`
 * have the same name (one would take the other's place); a path inside another of them is restored once, with it.
 * @throws {@link CancelledError} when `signal` aborts: no partial file is left; small files already handed to
 * a worker may still be completed (each one whole and authenticated) without being reported.
 * @throws {@link IoError} when the destination cannot be written (disk full, permissions), or the state folder
 * for the record of temp files cannot (nothing is restored then).
 */
export async function restorePaths(
  session: Session,
  paths: readonly string[],
  destinationDir: string,
  options: RestoreOptions,
): Promise<RestoreReport> {
  const items = plan(session, paths);
  const stateDir = options.stateDir ?? defaultStateDir();
  removeStaleRestoreTemps(stateDir);
  const record = RestoreRecord.start(stateDir);
  let failed = true;
  try {
    const report = await new RestoreJob(session, options, record).run(items, destinationDir);
    failed = false;
    return report;
  } finally {
    record.close(failed);
  }
}
