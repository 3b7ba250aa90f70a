import { closeSync, fstatSync, lstatSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { open, rename, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

import { DEFAULT_CHUNK_SIZE } from '../crypto/constants.js';
import { ChunkCipher, ContentEncryptor, newBlobHeader } from '../crypto/content.js';
import { blobPlaintextSize, fillPadding } from '../crypto/padding.js';
import { sharedCryptoPool } from '../crypto/pool.js';
import type { SealedSmallFile } from '../crypto/small-file-protocol.js';
import { CancelledError, CofferError, InvalidArgumentError, SourceChangedError } from '../errors.js';
import { fileChanged } from '../file-stat.js';
import { checkName } from '../names.js';
import { writeFileAtomicSync } from '../publish.js';
import type { AddOptions, AddReport, OnExisting, Problem, Progress, VaultEntry } from '../types.js';
import { smallFilesNeedPool, SmallFileSealer, type NewPack, type SmallFileToSeal } from './add-small.js';
import { fileSource, sealIntoBlob, streamSource, type ByteSource } from './blob-io.js';
import { asIoError, fsyncDirectory, makeFolders } from './durable.js';
import type { ContentRow, Intent, NodeRow } from './index-db.js';
import { blobPaths, packPaths, PRIVATE_FOLDER_MODE, SMALL_FILE_LIMIT } from './layout.js';
import { settleIntents } from './leftovers.js';
import { refuseAddingVault } from './outside.js';
import { freeNumberedName } from './numbered-name.js';
import { ByteSteps } from './progress.js';
import { releasedBy } from './release.js';
import type { Session } from './session.js';
import type { TreeNode } from './tree.js';

/** Longest stretch of synchronous file-system work before the event loop gets a turn (keeps a UI responsive). */
const SYNC_SLICE_MS = 10;
let sliceStart = performance.now();

/** Lets the event loop run if this thread has been busy with synchronous I/O for a while. */
async function yieldNow(): Promise<void> {
  if (performance.now() - sliceStart < SYNC_SLICE_MS) return;
  await new Promise((resolve) => setImmediate(resolve));
  sliceStart = performance.now();
}

/**
 * Rows waiting for one shared transaction: many small files cost one commit, not one each. Bytes count blobs
 * sealed in this thread, held until the commit packs them.
 */
const BATCH_MAX_ITEMS = 1000;
const BATCH_MAX_BYTES = 16 * 1024 * 1024;

interface PlannedItem {
  readonly kind: 'file' | 'folder';
  readonly source: string;
  /** NFC names from the destination folder down to this item. */
  readonly parts: readonly string[];
  readonly size: number;
  readonly mtime: number;
  /** The bytes of a file that has no path on disk (`source` is then its name); read once, in order. */
  readonly stream?: AsyncIterable<Uint8Array> | Uint8Array;
}

/** A file with no path on disk (dropped from a browser, say), whose bytes arrive as a stream. */
export interface StreamedFile {
  readonly name: string;
  /** Exactly the number of bytes `bytes` yields; a stream that yields more or less is a problem, not stored. */
  readonly size: number;
  /** Modification time, milliseconds since the epoch. */
  readonly mtime: number;
  readonly bytes: AsyncIterable<Uint8Array> | Uint8Array;
}

/** A file's bytes opened for sealing, from disk or from a stream. */
interface OpenedSource {
  readonly source: ByteSource;
  readonly size: number;
  readonly mtimeMs: number;
  /** Whether the file changed since it was opened (a stream cannot). */
  changed(): Promise<boolean>;
  close(): Promise<void>;
}

/** A failure reading the user's file: reported and skipped, unlike a failure writing the vault, which stops. */
class SourceReadError extends Error {}

function problemOf(path: string, error: unknown): Problem {
  if (error instanceof CofferError) return { path, code: error.code, message: error.message };
  const cause = error instanceof SourceReadError ? error.cause : error;
  // A streamed file's own source says why it could not be read (a drop cut off, say).
  if (cause instanceof CofferError)
    return { path, code: cause.code, message: `Skipped "${path}": ${cause.message}` };
  const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? 'IO';
  const reason =
    code === 'EACCES' || code === 'EPERM'
      ? 'permission denied'
      : code === 'ENOENT'
        ? 'it does not exist (or was removed while adding)'
        : `it could not be read (${code})`;
  return { path, code: code === 'ENOENT' ? 'NOT_FOUND' : 'IO', message: `Skipped "${path}": ${reason}.` };
}

/** Walks the sources depth first into a plan, so totals are known for progress before anything is written. */
async function plan(sources: readonly string[], problems: Problem[]): Promise<PlannedItem[]> {
  const items: PlannedItem[] = [];
  const visit = async (source: string, parts: readonly string[]): Promise<void> => {
    await yieldNow();
    let stats;
    try {
      stats = lstatSync(source);
    } catch (error) {
      problems.push(problemOf(source, error));
      return;
    }
    if (stats.isSymbolicLink()) {
      problems.push({
        path: source,
        code: 'SKIPPED',
        message: `Skipped "${source}": it is a symbolic link. Coffer stores files and folders, not links; add the target itself.`,
      });
      return;
    }
    if (stats.isDirectory()) {
      items.push({ kind: 'folder', source, parts, size: 0, mtime: stats.mtimeMs });
      let names: string[];
      try {
        names = readdirSync(source).sort();
        await yieldNow();
      } catch (error) {
        problems.push(problemOf(source, error));
        return;
      }
      for (const name of names) await visitNamed(join(source, name), parts, name);
      return;
    }
    if (!stats.isFile()) {
      problems.push({
        path: source,
        code: 'SKIPPED',
        message: `Skipped "${source}": it is a device, socket or pipe, not a regular file.`,
      });
      return;
    }
    items.push({ kind: 'file', source, parts, size: stats.size, mtime: stats.mtimeMs });
  };
  const visitNamed = async (source: string, parentParts: readonly string[], name: string): Promise<void> => {
    let checked: string;
    try {
      checked = checkName(name);
    } catch (error) {
      problems.push(problemOf(source, error));
      return;
    }
    await visit(source, [...parentParts, checked]);
  };
  for (const source of sources) {
    const absolute = resolve(source);
    const name = basename(absolute);
    if (name === '')
      throw new InvalidArgumentError(`"${source}" is a whole drive; add the folders in it instead.`);
    await visitNamed(absolute, [], name);
  }
  return items;
}

/** A new file's content id, blob header and key, chosen before its data is read. */
interface NewContent {
  readonly fileId: Buffer;
  readonly header: ReturnType<typeof newBlobHeader>;
  readonly key: ReturnType<Session['keys']['keyring']['active']>['key'];
  readonly binding: { vaultId: Buffer; fileId: Buffer };
}

/** A small file out for sealing, with what accepting it needs. */
interface QueuedSmallFile extends SmallFileToSeal {
  readonly item: PlannedItem;
  readonly parent: TreeNode | null;
  readonly fileId: Buffer;
}

/** A row to commit, with its file's blob: where it is stored, or (sealed in this thread) its bytes, to pack. */
interface PendingRow {
  readonly node: NodeRow & { node: TreeNode };
  readonly content?: ContentRow | { readonly fileId: Buffer; readonly blob: Buffer };
  /** The committed file this row replaces: its row goes in the same transaction. */
  readonly replaces?: TreeNode;
}

/** Where a new item's row goes: the name it takes in its folder, and the committed file it replaces, if any. */
interface Placement {
  readonly name: string;
  readonly replaces?: TreeNode;
  /** Numbered beside a file that "replace" did not cover (see AddJob's #cameIntoItsWay). */
  readonly besideUnasked?: boolean;
}

/** Adds files and folders; see {@link Vault.add}. */
class AddJob {
  readonly #session: Session;
  readonly #options: AddOptions;
  readonly #problems: Problem[] = [];
  readonly #pending: PendingRow[] = [];
  #pendingBytes = 0;
  #progress: Progress = { filesDone: 0, filesTotal: 0, bytesDone: 0, bytesTotal: 0 };
  #filesAdded = 0;
  #foldersAdded = 0;
  #bytesAdded = 0;
  #replaced = 0;
  #skipped = 0;
  readonly #onExisting: OnExisting;
  /** Vault folder for each planned folder path (parts joined by "/"); absent when that folder was skipped. */
  readonly #folders = new Map<string, TreeNode | null>();
  /** Seals small files on the worker pool, when this add has enough of them. */
  #sealer: SmallFileSealer<QueuedSmallFile> | undefined;
  /** Packs written by this add that no committed row names yet, by hex id: removed if the add ends that way. */
  readonly #unnamedPacks = new Map<string, Buffer>();
  /** Set once the add is ending cancelled or failed: its uncommitted rows are about to go. */
  #stopping = false;
  /**
   * A commit failed (the add's own, or one a change made at once asked for): its rows, folders among them, were
   * taken out of the tree, so nothing more goes in under them and the add fails with this at its next step.
   */
  #commitFailure: { readonly error: unknown } | undefined;
  /** The session's change count when the add was called (see {@link AddJob.#cameIntoItsWay}). */
  readonly #calledAt: number;
  /**
   * Each folder this add took as its own (made, or merged into), by id: whether it had come into the add's way
   * (renamed or moved after the add was called) before the add took it. Changes after that do not count: the add
   * follows its folders by id, and what it finds in them stays where it was in relation to the add.
   */
  readonly #adopted = new Map<string, boolean>();
  /** Rows this add placed under a numbered name beside a file it was not to replace: never replaced either. */
  readonly #keptBeside = new Set<string>();

  constructor(session: Session, destination: TreeNode | null, options: AddOptions, calledAt: number) {
    this.#session = session;
    this.#options = options;
    this.#calledAt = calledAt;
    this.#onExisting = options.onExisting ?? 'fail';
    this.#folders.set('', destination);
  }

  async run(planned: (problems: Problem[]) => Promise<PlannedItem[]>): Promise<AddReport> {
    const detach = this.#session.attachAdd({ commitPending: () => this.#commitOnRequest() });
    try {
      return await this.#run(planned);
    } finally {
      detach();
    }
  }

  async #run(planned: (problems: Problem[]) => Promise<PlannedItem[]>): Promise<AddReport> {
    const items = await planned(this.#problems);
    const files = items.filter((item) => item.kind === 'file');
    this.#progress = {
      filesDone: 0,
      filesTotal: files.length,
      bytesDone: 0,
      bytesTotal: files.reduce((sum, item) => sum + item.size, 0),
    };
    this.#report();
    // Workers read files by path; streamed files are sealed in this thread.
    const small = files.filter((item) => item.size <= SMALL_FILE_LIMIT && !item.stream);
    const smallBytes = small.reduce((sum, item) => sum + item.size, 0);
    const pool = smallFilesNeedPool(small.length, smallBytes) ? await sharedCryptoPool() : undefined;
    this.#sealer = pool
      ? new SmallFileSealer<QueuedSmallFile>(
          pool,
          () => this.#newPack(),
          (batch, outcomes, packId) => {
            this.#acceptSmallFiles(batch, outcomes, packId);
          },
        )
      : undefined;
    try {
      for (const item of items) {
        this.#throwIfStopped();
        const parent = this.#folders.get(item.parts.slice(0, -1).join('/'));
        if (parent === undefined) continue; // its folder was skipped, and reported
        if (item.kind === 'folder') this.#addFolder(item, parent);
        else await this.#addFile(item, parent);
      }
      await this.#flushSmallFiles();
      this.#commit();
    } catch (error) {
      this.#stopping = true;
      await this.#sealer?.abandon();
      this.#discardPending();
      throw error;
    } finally {
      await this.#discard([...this.#unnamedPacks.values()].map((id) => ({ kind: 'pack' as const, id })));
    }
    return {
      filesAdded: this.#filesAdded,
      foldersAdded: this.#foldersAdded,
      bytesAdded: this.#bytesAdded,
      replaced: this.#replaced,
      skipped: this.#skipped,
      problems: this.#problems,
    };
  }

  /**
   * Removes files this add wrote that no committed row names, and forgets their intents. Cleanup only: what it
   * cannot do now (the index refusing to change, say), the next open does from the intents left recorded.
   */
  async #discard(intents: readonly Intent[]): Promise<void> {
    if (intents.length === 0) return;
    await settleIntents(this.#session.dir, this.#session.db, intents).catch(() => undefined);
  }

  #throwIfStopped(): void {
    if (this.#commitFailure) throw this.#commitFailure.error;
    if (this.#options.signal?.aborted) throw new CancelledError();
  }

  /**
   * Commits what this add holds, when a change made at once asks (see {@link Session.commitPendingRows}): between
   * two of its steps that is what a full batch does.
   * @returns false when the add is ending (stopping, cancelled, or a commit failed), so its uncommitted rows go.
   */
  #commitOnRequest(): boolean {
    if (this.#stopping || this.#commitFailure || this.#options.signal?.aborted) return false;
    this.#commit();
    return true;
  }

  #report(change: Partial<Progress> = {}): void {
    this.#progress = { ...this.#progress, ...change };
    this.#options.onProgress?.(this.#progress);
  }

  #addFolder(item: PlannedItem, parent: TreeNode | null): void {
    const session = this.#session;
    const existing = session.tree.child(parent?.id ?? null, item.parts[item.parts.length - 1] ?? '');
    // A folder onto a folder merges, as file managers do: what is in it meets the choice one by one.
    if (existing?.type === 'folder') {
      this.#folders.set(item.parts.join('/'), existing);
      this.#adopted.set(existing.id, this.#session.changedSince(existing.id, this.#calledAt));
      return;
    }
    const placed = this.#place(item, parent);
    if (!placed) return;
    const row = session.seal(session.newId(), {
      type: 'folder',
      name: placed.name,
      parent: parent?.id ?? null,
      size: 0,
      mtime: item.mtime,
    });
    session.tree.insertUncommitted(row.node);
    this.#pending.push({ node: row });
    this.#folders.set(item.parts.join('/'), row.node);
    this.#adopted.set(row.node.id, false);
  }

  async #addFile(item: PlannedItem, parent: TreeNode | null): Promise<void> {
    // Decided early so a skipped file is not read; decided again when its row is made, since a file of the same
    // name may have been added meanwhile.
    if (!this.#placeFile(item, parent)) return;
    this.#report({ current: item.source });
    try {
      if (item.size <= SMALL_FILE_LIMIT) await this.#addSmallFile(item, parent);
      else await this.#addLargeFile(item, parent);
    } catch (error) {
      if (!(error instanceof SourceReadError) && !(error instanceof SourceChangedError)) throw error;
      this.#problems.push(problemOf(item.source, error));
      this.#fileDone(item.size);
    }
  }

  /** `#place` for a file: one that is not to be added counts as done. */
  #placeFile(item: PlannedItem, parent: TreeNode | null): Placement | undefined {
    const placed = this.#place(item, parent);
    if (!placed) this.#fileDone(item.size);
    return placed;
  }

  /**
   * Where an item's row goes in its vault folder, as {@link AddOptions.onExisting} says when its name is taken;
   * undefined when it is not to be added (then reported as a problem, or counted as skipped).
   */
  #place(item: PlannedItem, parent: TreeNode | null): Placement | undefined {
    const tree = this.#session.tree;
    const folderId = parent?.id ?? null;
    const name = item.parts[item.parts.length - 1] ?? '';
    const existing = tree.child(folderId, name);
    if (!existing) return { name };
    const keepBoth = (besideUnasked = false): Placement => ({
      name: freeNumberedName(name, (candidate) => tree.child(folderId, candidate) !== undefined),
      ...(besideUnasked ? { besideUnasked } : {}),
    });
    switch (this.#onExisting) {
      case 'keep-both':
        return keepBoth();
      case 'skip':
        this.#skipped++;
        return undefined;
      case 'replace':
        if (item.kind === 'file' && existing.type === 'file')
          return this.#cameIntoItsWay(existing) ? keepBoth(true) : { name, replaces: existing };
        break;
      case 'fail':
        break;
    }
    const path = tree.pathOf(existing);
    const what = item.kind === 'folder' ? 'folder ' : '';
    this.#problems.push({
      path: item.source,
      code: 'ALREADY_EXISTS',
      message:
        this.#onExisting === 'replace'
          ? `Skipped ${what}"${item.source}": "${path}" in the vault is a ${existing.type}, and only a file replaces a file. Rename one of them and add it again.`
          : `Skipped ${what}"${item.source}": "${path}" is already in the vault. Add it again choosing to keep both or to replace, or delete or rename one of them first.`,
    });
    return undefined;
  }

  /**
   * Whether `node` came into this add's way after the add was called, so that "replace", the answer to the names
   * taken then, does not cover it: renamed or moved since (it, or a folder holding it before this add took that
   * folder as its own), or a row this add itself placed beside such a file. The destination and the folders above
   * it may move: what is in them stays where it was in relation to the add.
   */
  #cameIntoItsWay(node: TreeNode): boolean {
    if (this.#keptBeside.has(node.id)) return true;
    const tree = this.#session.tree;
    const destination = this.#folders.get('')?.id;
    for (let at: TreeNode | undefined = node; at && at.id !== destination;) {
      if (this.#adopted.get(at.id) ?? this.#session.changedSince(at.id, this.#calledAt)) return true;
      at = at.parent === null ? undefined : tree.get(at.parent);
    }
    return false;
  }

  /**
   * Puts a row into the in-memory tree, uncommitted (readers still see the file it replaces, or nothing, until
   * it commits), and returns the committed file whose row its transaction must delete. A replaced row this add
   * has not committed yet is dropped instead (the later of two same-named sources wins), handing on what it
   * replaced.
   */
  #enter(row: PendingRow['node'], placed: Placement): TreeNode | undefined {
    const { replaces } = placed;
    const tree = this.#session.tree;
    if (placed.besideUnasked) this.#keptBeside.add(row.node.id);
    const uncommitted = replaces
      ? this.#pending.findIndex((pending) => pending.node.node.id === replaces.id)
      : -1;
    if (uncommitted < 0) {
      tree.insertUncommitted(row.node, replaces);
      return replaces;
    }
    const [dropped] = this.#pending.splice(uncommitted, 1);
    if (dropped?.content && 'blob' in dropped.content) this.#pendingBytes -= dropped.content.blob.length;
    if (replaces) tree.remove(replaces.id);
    tree.insertUncommitted(row.node, dropped?.replaces);
    return dropped?.replaces;
  }

  /** Takes rows out of the in-memory tree: the files they would have replaced have their names back. */
  #unenter(rows: readonly PendingRow[]): void {
    for (const { node } of [...rows].reverse()) this.#session.tree.remove(node.node.id);
  }

  #fileDone(bytes: number): void {
    this.#report({ filesDone: this.#progress.filesDone + 1, bytesDone: this.#progress.bytesDone + bytes });
  }

  async #openSource(item: PlannedItem): Promise<OpenedSource> {
    const readError = (error: unknown): SourceReadError => new SourceReadError(item.source, { cause: error });
    if (item.stream) {
      const stream = streamSource(item.stream, readError);
      const { size, mtime } = item;
      return {
        source: stream,
        size,
        mtimeMs: mtime,
        changed: () => Promise.resolve(false),
        close: () => stream.close(),
      };
    }
    let handle: FileHandle;
    try {
      handle = await open(item.source, 'r');
    } catch (error) {
      throw readError(error);
    }
    try {
      const before = await handle.stat();
      return {
        source: fileSource(handle, readError),
        size: before.size,
        mtimeMs: before.mtimeMs,
        changed: async () => fileChanged(before, await handle.stat()),
        close: () => handle.close(),
      };
    } catch (error) {
      await handle.close();
      throw readError(error);
    }
  }

  #fileRow(parent: TreeNode | null, name: string, size: number, mtime: number, fileId: Buffer) {
    const session = this.#session;
    return session.seal(session.newId(), {
      type: 'file',
      name,
      parent: parent?.id ?? null,
      size,
      mtime,
      fileId: fileId.toString('hex'),
    });
  }

  /** A new pack, not yet named by any row; its intent is durable before any of it is written. */
  #newPack(): NewPack {
    const id = this.#session.newId();
    const hex = id.toString('hex');
    this.#session.db.recordIntents([{ kind: 'pack', id }]);
    this.#unnamedPacks.set(hex, id);
    return { id, paths: packPaths(this.#session.dir, id) };
  }

  /** Queues a file's committed-to-be row; commits when the batch is full. */
  #queueSmallFile(
    row: ReturnType<Session['seal']>,
    placed: Placement,
    content: NonNullable<PendingRow['content']>,
  ): void {
    const replaces = this.#enter(row, placed);
    this.#pending.push({ node: row, content, ...(replaces ? { replaces } : {}) });
    if ('blob' in content) this.#pendingBytes += content.blob.length;
    this.#fileDone(row.node.size);
    if (this.#pending.length >= BATCH_MAX_ITEMS || this.#pendingBytes >= BATCH_MAX_BYTES) this.#commit();
  }

  async #addSmallFile(item: PlannedItem, parent: TreeNode | null): Promise<void> {
    if (!this.#sealer || item.stream) {
      await this.#addSmallFileHere(item, parent);
      return;
    }
    const { fileId, key, binding, header } = newContent(this.#session);
    const cipher = new ChunkCipher(this.#session.sodium, key, binding, header);
    await this.#sealer.add({ path: item.source, size: item.size, cipher, item, parent, fileId });
    this.#throwIfStopped();
  }

  async #flushSmallFiles(): Promise<void> {
    await this.#sealer?.flush();
    // Batches that came back after a cancel were dropped, so the add must not end as if complete.
    this.#throwIfStopped();
  }

  #acceptSmallFiles(
    batch: readonly QueuedSmallFile[],
    outcomes: readonly SealedSmallFile[],
    packId: Buffer,
  ): void {
    batch.forEach(({ item, parent, fileId }, index) => {
      // A cancelled add keeps what was committed before the cancel, and nothing that arrives after it; after a
      // failed commit nothing more goes in (its folders may be among the rows taken out).
      if (this.#options.signal?.aborted || this.#commitFailure) return;
      const outcome = outcomes[index];
      if (!outcome?.ok) {
        const code = outcome?.code ?? 'EIO';
        const error =
          code === 'CHANGED'
            ? sourceChanged(item.source)
            : new SourceReadError(item.source, { cause: Object.assign(new Error(code), { code }) });
        this.#problems.push(problemOf(item.source, error));
        this.#fileDone(item.size);
        return;
      }
      // Another file of the same name (differing in case, say) may have been added while this one was out.
      const placed = this.#placeFile(item, parent);
      if (!placed) return;
      const row = this.#fileRow(parent, placed.name, item.size, outcome.mtimeMs, fileId);
      const { offset, length } = outcome;
      this.#queueSmallFile(row, placed, {
        file_id: fileId,
        node_id: row.id,
        location: { kind: 'pack', packId, offset, length },
      });
    });
  }

  /** The small-file path without the worker: read and seal in this thread. */
  async #addSmallFileHere(item: PlannedItem, parent: TreeNode | null): Promise<void> {
    const { plaintext, mtimeMs } = item.stream
      ? await readStreamedFile(item, item.stream)
      : await readSmallFile(item);
    if (plaintext.length > SMALL_FILE_LIMIT) throw sourceChanged(item.source);
    this.#throwIfStopped();
    const { fileId, blob } = sealInMemory(this.#session, plaintext);
    const placed = this.#placeFile(item, parent);
    if (!placed) return;
    const row = this.#fileRow(parent, placed.name, plaintext.length, mtimeMs, fileId);
    this.#queueSmallFile(row, placed, { fileId, blob });
  }

  /**
   * Streams a large file into a blob: intent, temp file, fsync, rename into place, fsync the folder, and only then
   * the index row. A crash before the row leaves a blob that the next open removes (its intent says this add wrote
   * it); never a row without data.
   */
  async #addLargeFile(item: PlannedItem, parent: TreeNode | null): Promise<void> {
    // Rows of this file's folders must be durable before the file's row can be (they are committed with it at the
    // latest); committing them now also reports them before a long file. Small files still out on the workers or
    // waiting for a pack carry on: cutting their batches here made a pack per file between large files.
    this.#commit(false);
    const steps = new ByteSteps((bytes) => {
      this.#report({ bytesDone: this.#progress.bytesDone + bytes });
    });
    const opened = await this.#openSource(item);
    let fileId: Buffer;
    // Closed whatever happens next: a lock or cancel while it was being opened (the keys wiped, say) would
    // otherwise leave its handle open until garbage collection.
    try {
      this.#throwIfStopped();
      fileId = await this.#storeBlob(item, opened, steps);
    } finally {
      await opened.close();
    }
    const intent: Intent = { kind: 'blob', id: fileId };
    if (this.#commitFailure) {
      await this.#discard([intent]);
      this.#throwIfStopped();
    }
    // A small file of the same name (differing in case, say) may have been accepted while this one was written.
    const placed = this.#place(item, parent);
    if (!placed) await this.#discard([intent]);
    else {
      const row = this.#fileRow(parent, placed.name, opened.size, opened.mtimeMs, fileId);
      const replaces = this.#enter(row, placed);
      this.#pending.push({
        node: row,
        content: { file_id: fileId, node_id: row.id, location: { kind: 'file' } },
        ...(replaces ? { replaces } : {}),
      });
      try {
        this.#commit(false);
      } catch (error) {
        // Its row never committed (a full disk, say): the blob goes now, not only at the next open.
        await this.#discard([intent]);
        throw error;
      }
    }
    steps.flush();
    this.#report({ filesDone: this.#progress.filesDone + 1 });
  }

  /**
   * Seals an opened source into a new blob file in place (intent, temp file, fsync, rename, fsync the folder).
   * @returns the blob's file id; its intent stays recorded until a row names it or it is discarded.
   * @throws {@link SourceChangedError}, a {@link SourceReadError} for the source, {@link CancelledError}; anything
   * else as an {@link IoError}. Its intent is settled then, removing what was written.
   */
  async #storeBlob(item: PlannedItem, opened: OpenedSource, steps: ByteSteps): Promise<Buffer> {
    const session = this.#session;
    const { fileId, header, key, binding } = newContent(session);
    const cipher = new ChunkCipher(session.sodium, key, binding, header);
    const intent: Intent = { kind: 'blob', id: fileId };
    try {
      session.db.recordIntents([intent]);
      await writeBlobFile(session.dir, fileId, async (out) => {
        const complete = await sealIntoBlob({
          place: { sodium: session.sodium, executor: await sharedCryptoPool() },
          cipher,
          source: opened.source,
          size: opened.size,
          target: out,
          ...(this.#options.signal ? { signal: this.#options.signal } : {}),
          onBytes: (bytes) => {
            steps.add(bytes);
          },
        });
        if (!complete || (await opened.changed())) throw sourceChanged(item.source);
      });
    } catch (error) {
      await this.#discard([intent]);
      if (error instanceof SourceReadError || error instanceof CofferError) throw error;
      throw asIoError(error, `Could not store "${item.source}" in the vault`);
    } finally {
      cipher.wipe();
    }
    return fileId;
  }

  /**
   * Commits pending rows in one transaction, then tells the caller they are durable. Blobs sealed in this thread
   * are first written as one pack; with `blobsToo` false their rows stay pending instead, to make one pack with
   * later ones.
   */
  #commit(blobsToo = true): void {
    const batch = blobsToo ? this.#pending.splice(0) : this.#takeRowsWithoutBlobs();
    if (batch.length === 0) return;
    if (blobsToo) this.#pendingBytes = 0;
    const db = this.#session.db;
    const replaced = batch.flatMap(({ replaces }) => (replaces ? [replaces] : []));
    try {
      const released = releasedBy(db, replaced);
      const contents = this.#packBlobs(batch);
      const settled = contents.flatMap((content): Intent[] => {
        if (!content) return [];
        const { location } = content;
        return [
          location.kind === 'pack'
            ? { kind: 'pack', id: location.packId }
            : { kind: 'blob', id: content.file_id },
        ];
      });
      db.transaction(() => {
        // The replaced files' rows go in the transaction that commits their successors, whose contents are durable
        // already: at no point is a name without its data, or without either version.
        db.deleteNodes(replaced.map((node) => Buffer.from(node.id, 'hex')));
        db.recordIntents(released.intents);
        batch.forEach(({ node }, i) => {
          db.putNode(node);
          const content = contents[i];
          if (content) db.putContent(content);
        });
        // A file a committed row names is no longer the add's to remove.
        db.clearIntents(settled);
      });
      this.#session.tree.markCommitted(batch.map(({ node }) => node.node.id));
      for (const { kind, id } of settled) if (kind === 'pack') this.#unnamedPacks.delete(id.toString('hex'));
      this.#session.releases.hold(released);
    } catch (error) {
      this.#unenter(batch);
      const failure = asIoError(error, 'Could not update the vault index');
      this.#commitFailure ??= { error: failure };
      throw failure;
    }
    this.#replaced += replaced.length;
    for (const { node } of batch) {
      if (node.node.type === 'file') {
        this.#filesAdded++;
        this.#bytesAdded += node.node.size;
      } else this.#foldersAdded++;
      // As it is now: an onAdded before it may have renamed or moved it (a change made at once).
      const entry: VaultEntry = this.#session.entry(this.#session.tree.get(node.node.id) ?? node.node);
      this.#options.onAdded?.(entry);
    }
  }

  /** Takes the pending rows that need no pack written, leaving the others pending in order. */
  #takeRowsWithoutBlobs(): PendingRow[] {
    const holdsBlob = ({ content }: PendingRow): boolean => content !== undefined && 'blob' in content;
    const ready = this.#pending.filter((row) => !holdsBlob(row));
    const waiting = this.#pending.filter(holdsBlob);
    this.#pending.length = 0;
    this.#pending.push(...waiting);
    return ready;
  }

  /**
   * The contents rows of a batch, writing the blobs sealed in this thread (if any) as one new pack first.
   * @throws the file system's error when the pack cannot be written.
   */
  #packBlobs(batch: readonly PendingRow[]): (ContentRow | undefined)[] {
    const blobs = batch.flatMap(({ content }) => (content && 'blob' in content ? [content.blob] : []));
    if (blobs.length === 0) return batch.map(({ content }) => content as ContentRow | undefined);
    const pack = this.#newPack();
    writeFileAtomicSync(pack.paths, Buffer.concat(blobs));
    let offset = 0;
    return batch.map(({ node, content }): ContentRow | undefined => {
      if (!content || !('blob' in content)) return content;
      const { length } = content.blob;
      offset += length;
      return {
        file_id: content.fileId,
        node_id: node.id,
        location: { kind: 'pack', packId: pack.id, offset: offset - length, length },
      };
    });
  }

  /** Forgets rows never committed: a cancelled or failed add leaves the vault as if they were never added. */
  #discardPending(): void {
    this.#unenter(this.#pending.splice(0));
    this.#pendingBytes = 0;
  }
}

/** A new file's content id, blob header and key (the active one), chosen before its data is read. */
export function newContent(session: Session): NewContent {
  const fileId = session.newId();
  const { keyId, key } = session.keys.keyring.active();
  const binding = { vaultId: session.keys.vaultId, fileId };
  const padded = session.db.contentPadding() === 'padme';
  return {
    fileId,
    header: newBlobHeader(session.sodium, keyId, binding, DEFAULT_CHUNK_SIZE, padded),
    key,
    binding,
  };
}

/** A small file's whole blob, sealed in this thread under a new file id (padded as the vault pads, FORMAT.md 5.7). */
export function sealInMemory(session: Session, plaintext: Buffer): { fileId: Buffer; blob: Buffer } {
  const { fileId, header, key, binding } = newContent(session);
  const encryptor = new ContentEncryptor(session.sodium, key, binding, header);
  const total = blobPlaintextSize(plaintext.length, header.padded);
  const padded = Buffer.alloc(total);
  plaintext.copy(padded);
  fillPadding(padded, 0, plaintext.length, total);
  const blob: Buffer[] = [];
  encryptor.push(padded, (bytes) => blob.push(bytes));
  encryptor.finish((bytes) => blob.push(bytes));
  padded.fill(0);
  return { fileId, blob: Buffer.concat(blob) };
}

/**
 * Writes a new blob file (FORMAT.md 8.5, "Add, large file"): `write` fills `tmp/<file id>.tmp`, which is then
 * fsynced, renamed to `blobs/xx/<file id>` (a new `xx` folder made durable in `blobs` first) and its folder
 * fsynced. The caller has recorded the intent, and on a throw removes what was written through it.
 */
export async function writeBlobFile(
  vaultDir: string,
  fileId: Buffer,
  write: (out: FileHandle) => Promise<void>,
): Promise<void> {
  const { temp, target } = blobPaths(vaultDir, fileId);
  const out = await open(temp, 'wx', 0o600);
  try {
    await write(out);
    await out.sync();
  } finally {
    await out.close();
  }
  for (const parent of await makeFolders(dirname(target), PRIVATE_FOLDER_MODE)) await fsyncDirectory(parent);
  await rename(temp, target);
  await fsyncDirectory(dirname(target));
}

/** A small file's bytes, read with synchronous calls: for a few KiB, five thread-pool round trips cost more. */
async function readSmallFile(item: PlannedItem): Promise<{ plaintext: Buffer; mtimeMs: number }> {
  await yieldNow();
  let fd: number;
  try {
    fd = openSync(item.source, 'r');
  } catch (error) {
    throw new SourceReadError(item.source, { cause: error });
  }
  try {
    const before = fstatSync(fd);
    const plaintext = readFileSync(fd);
    if (fileChanged(before, fstatSync(fd)) || plaintext.length !== before.size)
      throw sourceChanged(item.source);
    return { plaintext, mtimeMs: before.mtimeMs };
  } catch (error) {
    if (error instanceof SourceChangedError) throw error;
    throw new SourceReadError(item.source, { cause: error });
  } finally {
    closeSync(fd);
  }
}

/** A small streamed file's bytes, which must be exactly the size it announced. */
async function readStreamedFile(
  item: PlannedItem,
  bytes: AsyncIterable<Uint8Array> | Uint8Array,
): Promise<{ plaintext: Buffer; mtimeMs: number }> {
  const source = streamSource(bytes, (error) => new SourceReadError(item.source, { cause: error }));
  try {
    const plaintext = Buffer.alloc(item.size);
    const got = await source.readv([plaintext], 0);
    if (got !== item.size || (await source.readv([new Uint8Array(1)], item.size)) !== 0)
      throw sourceChanged(item.source);
    return { plaintext, mtimeMs: item.mtime };
  } finally {
    await source.close();
  }
}

function sourceChanged(source: string): SourceChangedError {
  return new SourceChangedError(
    `Skipped "${source}": it changed while it was being added, so it was not stored. Add it again when nothing is writing to it.`,
  );
}

/** Something about to be added: a path on disk, or a file with no path (a streamed one), by its name. */
export type AddSource = string | { readonly name: string };

/**
 * The vault paths that adding `sources` into `destinationFolder` would meet already taken (ignoring case), so a
 * caller can ask what to do before the add starts. A folder onto a folder merges, so only what is inside is
 * compared there; names that cannot be stored and sources that cannot be read are left for the add to report.
 * @throws {@link NotFoundError} or {@link InvalidArgumentError} when `destinationFolder` is not a folder.
 */
export async function takenNames(
  session: Session,
  sources: readonly AddSource[],
  destinationFolder: string,
): Promise<string[]> {
  const tree = session.tree;
  const taken: string[] = [];
  const compare = async (
    folder: TreeNode | null,
    name: string,
    source: string | undefined,
  ): Promise<void> => {
    await yieldNow();
    let existing: TreeNode | undefined;
    try {
      existing = tree.child(folder?.id ?? null, checkName(name));
    } catch {
      return;
    }
    if (!existing) return;
    if (existing.type === 'folder' && source !== undefined) {
      let names: string[] | undefined;
      try {
        names = lstatSync(source).isDirectory() ? readdirSync(source) : undefined;
      } catch {
        return;
      }
      if (names) {
        for (const child of names) await compare(existing, child, join(source, child));
        return;
      }
    }
    taken.push(tree.pathOf(existing));
  };
  const destination = session.resolveFolder(destinationFolder);
  for (const source of sources) {
    if (typeof source === 'string') await compare(destination, basename(resolve(source)), resolve(source));
    else await compare(destination, source.name, undefined);
  }
  return taken;
}

/**
 * Adds files and folders from disk into a vault folder, recursively, keeping relative paths, sizes and
 * modification times. Problems with single sources (unreadable, symlinks and special files, names that cannot be
 * stored, files changed while read, names already in the vault) are reported and the rest continues.
 * @throws {@link CancelledError} when `signal` aborts: finished files stay, unfinished ones leave no trace.
 * @throws {@link IoError} when the vault cannot be written (disk full): nothing uncommitted remains.
 * @param calledAt - The session's change count when the add was asked for ({@link Session.changeCount}): "replace"
 * covers only what was in the add's way then, not what a rename or move put there since.
 * @throws {@link InvalidArgumentError} before anything is added when a source is the vault folder, is inside it or
 * contains it.
 */
export async function addPaths(
  session: Session,
  sources: readonly string[],
  destinationFolder: string,
  options: AddOptions,
  calledAt: number,
): Promise<AddReport> {
  const destination = session.resolveFolder(destinationFolder);
  await refuseAddingVault(session.dir, sources);
  return new AddJob(session, destination, options, calledAt).run((problems) => plan(sources, problems));
}

/**
 * Adds files that have no path on disk, their bytes read from streams, into a vault folder: as {@link addPaths}
 * does, with the same problems reported (a bad or taken name, a stream that does not hold `size` bytes or fails).
 * Nothing of the plaintext is written to disk. A file that is skipped has its stream left unread.
 * @throws {@link InvalidArgumentError} for a size or time that is not a non-negative whole number.
 * @throws {@link CancelledError}, {@link IoError} as {@link addPaths} does.
 */
export async function addStreams(
  session: Session,
  files: readonly StreamedFile[],
  destinationFolder: string,
  options: AddOptions,
  calledAt: number,
): Promise<AddReport> {
  const destination = session.resolveFolder(destinationFolder);
  const planStreams = (problems: Problem[]): PlannedItem[] =>
    files.flatMap(({ name, size, mtime, bytes }) => {
      if (!Number.isSafeInteger(size) || size < 0 || !Number.isFinite(mtime) || mtime < 0)
        throw new InvalidArgumentError(`"${name}" has an invalid size or modification time.`);
      try {
        return [{ kind: 'file', source: name, parts: [checkName(name)], size, mtime, stream: bytes }];
      } catch (error) {
        problems.push(problemOf(name, error));
        return [];
      }
    });
  return new AddJob(session, destination, options, calledAt).run((problems) =>
    Promise.resolve(planStreams(problems)),
  );
}
