import { access, constants, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';

import { FORMAT_VERSION } from '../crypto/constants.js';
import { DEFAULT_KDF_PRESET, KDF_PRESETS, type KdfPreset } from '../crypto/kdf.js';
import { loadSodium, type SodiumBackend } from '../crypto/sodium.js';
import { createVaultKeys, parseVaultHeader, unlockVaultKeys } from '../crypto/vault-header.js';
import {
  AlreadyExistsError,
  CancelledError,
  InvalidArgumentError,
  NotAVaultError,
  NotFoundError,
  VaultLockedError,
} from '../errors.js';
import { checkName, nameKey, parseVaultPath } from '../names.js';
import type {
  AddOptions,
  AddReport,
  Problem,
  RestoreOptions,
  RestoreReport,
  VaultEntry,
  VaultInfo,
  VerifyOptions,
  VerifyReport,
} from '../types.js';
import { VaultActivity } from './activity.js';
import { addPaths, addStreams, takenNames, type AddSource, type StreamedFile } from './add.js';
import { asIoError, writeFileAtomic } from './durable.js';
import { IndexDb } from './index-db.js';
import {
  BLOB_DIR,
  checkVaultFolder,
  HEADER_FILE,
  INDEX_FILE,
  PACK_DIR,
  PRIVATE_FOLDER_MODE,
  TEMP_DIR,
  VAULT_READ_FLAGS,
} from './layout.js';
import { recoverFromCrash } from './leftovers.js';
import { releasedBy, settleReleased } from './release.js';
import { checkRange, plaintextChunks, type ByteRange } from './read.js';
import { restorePaths } from './restore.js';
import { Session } from './session.js';
import type { TreeNode } from './tree.js';
import { verifyVault } from './verify.js';

export interface CreateOptions {
  /** Argon2id strength; default {@link DEFAULT_KDF_PRESET}. */
  readonly kdf?: KdfPreset;
  /** Crypto backend; default: sodium-native, else the WebAssembly build. */
  readonly sodium?: SodiumBackend;
}

export interface OpenOptions {
  /** Open without writing anything; forced when the vault folder cannot be written. */
  readonly readOnly?: boolean;
  readonly sodium?: SodiumBackend;
}

async function isWritable(dir: string): Promise<boolean> {
  try {
    await access(dir, constants.W_OK);
    await access(join(dir, INDEX_FILE), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * An encrypted vault folder. Opening takes the vault's lock (one process at a time); unlocking decrypts the index
 * into memory; locking wipes every key and decrypted record; closing releases the lock.
 *
 * Paths are vault paths: "/" is the root, components are separated by "/".
 *
 * Operations may be called while others run: restores and reads run together and beside an add; adds run one at a
 * time; a delete or verify runs alone. One that may not run yet waits its turn (its signal still cancels it);
 * creating a folder, renaming or moving during an add, delete or verify is refused with {@link BusyError}.
 */
export class Vault {
  readonly dir: string;
  readonly #db: IndexDb;
  readonly #sodium: SodiumBackend;
  readonly #headerBytes: Buffer;
  #session: Session | undefined;
  #closed = false;
  readonly #activity = new VaultActivity();
  /** Settles once the operations a lock or close stopped have ended, the keys are wiped and the index closed. */
  #released: Promise<void> = Promise.resolve();

  private constructor(dir: string, db: IndexDb, sodium: SodiumBackend, headerBytes: Buffer) {
    this.dir = dir;
    this.#db = db;
    this.#sodium = sodium;
    this.#headerBytes = headerBytes;
  }

  /**
   * Creates a vault in `dir` (which must not exist, or be an empty folder) and returns it unlocked.
   * @throws {@link AlreadyExistsError} when `dir` is a non-empty folder or a file.
   * @throws {@link KdfLimitError}, {@link InvalidArgumentError} for bad parameters or an empty passphrase.
   * @throws {@link IoError} when the folder cannot be written.
   */
  static async create(dir: string, passphrase: Uint8Array, options: CreateOptions = {}): Promise<Vault> {
    const sodium = options.sodium ?? (await loadSodium());
    try {
      const entries = await readdir(dir);
      if (entries.length > 0) {
        throw new AlreadyExistsError(`"${dir}" is not empty. Choose a new or empty folder for the vault.`);
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR')
        throw new AlreadyExistsError(`"${dir}" is a file. Choose a folder for the vault.`);
      if (code !== 'ENOENT') throw asIoError(error, `Could not create the vault in "${dir}"`);
    }
    const { headerBytes, keys } = await createVaultKeys(
      sodium,
      passphrase,
      KDF_PRESETS[options.kdf ?? DEFAULT_KDF_PRESET],
    );
    try {
      await mkdir(dirname(resolve(dir)), { recursive: true });
      // Private when created here; a folder the user made (and left empty for the vault) keeps its mode.
      await mkdir(dir, { mode: PRIVATE_FOLDER_MODE }).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      });
      for (const sub of [BLOB_DIR, PACK_DIR, TEMP_DIR])
        await mkdir(join(dir, sub), { mode: PRIVATE_FOLDER_MODE });
      // The only place an index is created: opening never makes one (an empty index would show the vault empty).
      const db = IndexDb.open(join(dir, INDEX_FILE), {
        readOnly: false,
        create: true,
        vaultId: keys.vaultId,
      });
      // The header goes last: a folder without it is not a vault, so a crash mid-create leaves nothing half-made.
      // Its write fsyncs the vault folder, which makes the entries made before it durable too.
      writeFileAtomic(join(dir, HEADER_FILE), headerBytes);
      const vault = new Vault(dir, db, sodium, headerBytes);
      vault.#startSession(keys);
      return vault;
    } catch (error) {
      keys.wipe();
      throw asIoError(error, `Could not create the vault in "${dir}"`);
    }
  }

  /**
   * Opens a vault folder (locked) and takes its lock. When writable, removes what a crashed operation provably
   * left (FORMAT.md section 8.5); nothing else.
   * @throws {@link NotFoundError} when the folder does not exist.
   * @throws {@link NotAVaultError} when it is not a Coffer vault.
   * @throws {@link UnsupportedFormatError} for a vault from a newer Coffer.
   * @throws {@link IntegrityError} when the header is damaged, the index is missing, empty, damaged, not a Coffer
   * index or another vault's, or a file or folder of the vault is a symbolic link or of the wrong kind (FORMAT.md
   * section 8.1).
   * @throws {@link VaultInUseError} when another process has it open.
   */
  static async open(dir: string, options: OpenOptions = {}): Promise<Vault> {
    const sodium = options.sodium ?? (await loadSodium());
    try {
      if (!(await stat(dir)).isDirectory()) {
        throw new NotAVaultError(
          `"${dir}" is a file, not a vault folder. Choose the folder you created the vault in.`,
        );
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new NotFoundError(`"${dir}" does not exist. Check the path to the vault folder.`);
      }
      throw asIoError(error, `Could not open "${dir}"`);
    }
    // Before anything in the folder is read, written or deleted: nothing of it may lead outside.
    await checkVaultFolder(dir);
    let headerBytes: Buffer;
    try {
      headerBytes = await readFile(join(dir, HEADER_FILE), { flag: VAULT_READ_FLAGS });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new NotAVaultError(
          `"${dir}" is not a Coffer vault (it has no ${HEADER_FILE}). Choose the folder you created the vault in.`,
        );
      }
      throw asIoError(error, `Could not read the vault header in "${dir}"`);
    }
    const { vaultId } = parseVaultHeader(sodium, headerBytes);
    const readOnly = options.readOnly === true || !(await isWritable(dir));
    // Refuses a missing, empty or foreign index (IntegrityError) rather than starting a new one.
    const db = IndexDb.open(join(dir, INDEX_FILE), { readOnly, create: false, vaultId });
    const vault = new Vault(dir, db, sodium, headerBytes);
    if (!readOnly) {
      try {
        // A vault made before packs has no packs/ folder yet.
        await mkdir(join(dir, PACK_DIR), { recursive: true, mode: PRIVATE_FOLDER_MODE });
        await recoverFromCrash(dir, db);
      } catch (error) {
        db.close();
        throw asIoError(error, `Could not tidy the vault in "${dir}"`);
      }
    }
    return vault;
  }

  /**
   * Unlocks with a passphrase: derives the key (about half a second), unwraps the DEKs, decrypts the index.
   * @returns index rows that could not be decrypted (empty for a healthy vault); they are also in `verify()`.
   * @throws {@link WrongPassphraseError}, {@link KdfLimitError}, {@link IntegrityError}.
   */
  async unlock(passphrase: Uint8Array): Promise<readonly Problem[]> {
    this.#requireOpen();
    if (this.#session) return this.#session.damaged;
    // The index's vault id was checked against this header when the vault was opened.
    const keys = await unlockVaultKeys(this.#sodium, this.#headerBytes, passphrase);
    return this.#startSession(keys).damaged;
  }

  #startSession(keys: Session['keys']): Session {
    const session = new Session(this.dir, this.#db, this.#sodium, keys);
    try {
      session.load();
    } catch (error) {
      session.wipe();
      throw error;
    }
    this.#session = session;
    return session;
  }

  get locked(): boolean {
    return this.#session === undefined;
  }

  get readOnly(): boolean {
    return this.#db.readOnly;
  }

  /**
   * Wipes every key at once, and every decrypted record. The vault stays open (and locked against other
   * processes). Running operations are stopped: each ends with {@link CancelledError} (keeping what it finished)
   * at its next step, a read stream at once even when its reader has paused; the keys they hold are already wiped
   * and refuse use. {@link Vault.released} says when they have all ended and the decrypted tree is gone.
   */
  lock(): void {
    const session = this.#session;
    if (!session) return;
    this.#session = undefined;
    if (!this.#activity.busy) {
      retire(session, true);
      session.wipe();
      return;
    }
    // The tree is stored only when no running operation is changing it; otherwise the next unlock reads the rows.
    retire(session, this.#activity.onlyReading);
    this.#released = this.#activity.stopAll().then(() => {
      session.wipe();
    });
  }

  /** Locks and releases the vault (after stopping what runs, as {@link Vault.lock} does). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.lock();
    if (!this.#activity.busy) {
      this.#db.close();
      return;
    }
    this.#released = this.#released
      .then(() => this.#activity.stopAll())
      .then(() => {
        this.#db.close();
      });
  }

  /** Settles once the operations stopped by the last lock or close have ended (the keys are wiped at the lock). */
  released(): Promise<void> {
    return this.#released;
  }

  #requireOpen(): void {
    if (this.#closed) throw new InvalidArgumentError('This vault has been closed; open it again.');
  }

  #unlocked(): Session {
    this.#requireOpen();
    if (!this.#session) throw new VaultLockedError();
    return this.#session;
  }

  /** Format, KDF parameters and, while unlocked, counts and sizes. */
  async info(): Promise<VaultInfo> {
    this.#requireOpen();
    const header = parseVaultHeader(this.#sodium, this.#headerBytes);
    const base = {
      formatVersion: FORMAT_VERSION,
      vaultId: header.vaultId.toString('hex'),
      locked: this.locked,
      readOnly: this.readOnly,
      kdf: header.slots.map((slot) => slot.kdf),
      storedBytes: await folderSize(this.dir),
    };
    const session = this.#session;
    if (!session) return base;
    let files = 0;
    let folders = 0;
    let totalBytes = 0;
    for (const node of session.tree.values()) {
      if (node.type === 'file') {
        files++;
        totalBytes += node.size;
      } else folders++;
    }
    return { ...base, files, folders, totalBytes, keyIds: session.keys.keyring.keyIds };
  }

  /**
   * The entries of a folder, folders first, then by name.
   * @throws {@link NotFoundError} when the path does not exist; {@link InvalidArgumentError} when it is a file.
   */
  list(folderPath = '/'): VaultEntry[] {
    const session = this.#unlocked();
    const folder = session.resolveFolder(folderPath);
    return sortNodes(session.tree.childrenOf(folder?.id ?? null)).map((node) => session.entry(node));
  }

  /**
   * The folders (only) in a folder, by name: what a folder tree shows, without building an entry for every file.
   * @throws {@link NotFoundError} when the path does not exist; {@link InvalidArgumentError} when it is a file.
   */
  listFolders(folderPath = '/'): VaultEntry[] {
    const session = this.#unlocked();
    const folder = session.resolveFolder(folderPath);
    const folders: TreeNode[] = [];
    for (const node of session.tree.children(folder?.id ?? null))
      if (node.type === 'folder') folders.push(node);
    return sortNodes(folders).map((node) => session.entry(node));
  }

  /** Every entry below a folder, depth first. */
  listRecursive(folderPath = '/'): VaultEntry[] {
    const session = this.#unlocked();
    const out: VaultEntry[] = [];
    const visit = (parent: TreeNode | null): void => {
      for (const node of sortNodes(session.tree.childrenOf(parent?.id ?? null))) {
        out.push(session.entry(node));
        if (node.type === 'folder') visit(node);
      }
    };
    visit(session.resolveFolder(folderPath));
    return out;
  }

  /** @throws {@link NotFoundError} when nothing is at that path. */
  stat(path: string): VaultEntry {
    const session = this.#unlocked();
    const node = session.resolve(path);
    if (!node) return { path: '/', name: '', type: 'folder', size: 0, mtime: 0 };
    return session.entry(node);
  }

  /** Entries whose name contains `query`, ignoring case and Unicode normalisation. */
  search(query: string, limit = 1000): VaultEntry[] {
    const session = this.#unlocked();
    const needle = nameKey(query);
    const out: VaultEntry[] = [];
    if (needle.length === 0) return out;
    for (const node of session.tree.values()) {
      if (nameKey(node.name).includes(needle)) {
        out.push(session.entry(node));
        if (out.length >= limit) break;
      }
    }
    return out.sort((a, b) => a.path.localeCompare(b.path));
  }

  /**
   * Creates a folder (and any missing parents).
   * @throws {@link AlreadyExistsError} when a file has that name; {@link InvalidNameError} for a bad name.
   * @throws {@link BusyError} while an add, delete or verify runs.
   */
  mkdir(path: string): VaultEntry {
    const session = this.#unlocked();
    session.requireWritable();
    this.#activity.requireNoChangeRunning();
    const parts = parseVaultPath(path);
    if (parts.length === 0) return this.stat('/');
    let parent: TreeNode | null = null;
    const created: ReturnType<Session['seal']>[] = [];
    for (const part of parts) {
      const existing = session.tree.child(parent?.id ?? null, part);
      if (existing) {
        if (existing.type !== 'folder') {
          throw new AlreadyExistsError(
            `"${session.tree.pathOf(existing)}" is a file; a folder cannot be created there.`,
          );
        }
        parent = existing;
        continue;
      }
      const row = session.seal(session.newId(), {
        type: 'folder',
        name: part,
        parent: parent?.id ?? null,
        size: 0,
        mtime: Date.now(),
      });
      created.push(row);
      session.tree.insert(row.node);
      parent = row.node;
    }
    try {
      this.#db.transaction(() => {
        for (const row of created) this.#db.putNode(row);
      });
    } catch (error) {
      for (const row of created) session.tree.remove(row.node.id);
      throw asIoError(error, 'Could not create the folder');
    }
    return parent ? session.entry(parent) : this.stat('/');
  }

  /**
   * Renames a file or folder in place.
   * @throws {@link NotFoundError}, {@link AlreadyExistsError}, {@link InvalidNameError}.
   * @throws {@link BusyError} while an add, delete or verify runs.
   */
  rename(path: string, newName: string): VaultEntry {
    const session = this.#unlocked();
    session.requireWritable();
    this.#activity.requireNoChangeRunning();
    const node = session.resolve(path);
    if (!node) throw new InvalidArgumentError('The root folder cannot be renamed.');
    return this.#rewrite(session, node, { name: checkName(newName), parent: node.parent });
  }

  /**
   * Moves files or folders into another folder, all or nothing.
   * @throws {@link NotFoundError}, {@link AlreadyExistsError}, {@link InvalidArgumentError} (a folder into itself).
   * @throws {@link BusyError} while an add, delete or verify runs.
   */
  move(paths: readonly string[], destinationFolder: string): VaultEntry[] {
    const session = this.#unlocked();
    session.requireWritable();
    this.#activity.requireNoChangeRunning();
    const destination = session.resolveFolder(destinationFolder);
    const nodes = paths.map((path) => {
      const node = session.resolve(path);
      if (!node) throw new InvalidArgumentError('The root folder cannot be moved.');
      if (destination && node.type === 'folder' && session.tree.isAncestor(node, destination)) {
        throw new InvalidArgumentError(`"${path}" cannot be moved into itself.`);
      }
      return node;
    });
    const rows = nodes.map((node) =>
      session.seal(Buffer.from(node.id, 'hex'), { ...node, parent: destination?.id ?? null }),
    );
    const previous: TreeNode[] = [];
    try {
      for (const row of rows) {
        previous.push(session.tree.get(row.node.id) ?? row.node);
        session.tree.replace(row.node);
      }
      this.#db.transaction(() => {
        for (const row of rows) this.#db.putNode(row);
      });
    } catch (error) {
      for (const node of previous.reverse()) session.tree.replace(node);
      throw asIoError(error, 'Could not move');
    }
    return rows.map((row) => session.entry(row.node));
  }

  #rewrite(session: Session, node: TreeNode, change: { name: string; parent: string | null }): VaultEntry {
    const row = session.seal(Buffer.from(node.id, 'hex'), { ...node, ...change });
    session.tree.replace(row.node);
    try {
      this.#db.transaction(() => {
        this.#db.putNode(row);
      });
    } catch (error) {
      session.tree.replace(node);
      throw asIoError(error, 'Could not rename');
    }
    return session.entry(row.node);
  }

  /**
   * Deletes files and folders (folders with everything in them): the index first, in one transaction, then the
   * space is reclaimed, so a crash never leaves an entry whose contents are gone.
   * @throws {@link NotFoundError} when a path does not exist (nothing is deleted then).
   * @throws {@link IntegrityError} when the vault folder breaks FORMAT.md section 8.1 (nothing is deleted then).
   */
  async remove(paths: readonly string[]): Promise<number> {
    const session = this.#unlocked();
    session.requireWritable();
    return this.#activity.run('rewrite', 'deleting', undefined, async () => {
      await checkVaultFolder(this.dir);
      return this.#remove(session, paths);
    });
  }

  async #remove(session: Session, paths: readonly string[]): Promise<number> {
    const doomed = new Map<string, TreeNode>();
    for (const path of paths) {
      const node = session.resolve(path);
      if (!node)
        throw new InvalidArgumentError('The root folder cannot be deleted; delete what is in it instead.');
      for (const at of session.tree.subtree(node)) doomed.set(at.id, at);
    }
    const nodes = [...doomed.values()];
    // Once the rows are gone, removing the files they named that no row names any more is provably safe, and the
    // intents let the next open finish that if this process does not.
    const released = releasedBy(this.#db, nodes);
    try {
      this.#db.transaction(() => {
        this.#db.deleteNodes(nodes.map((node) => Buffer.from(node.id, 'hex')));
        this.#db.recordIntents(released.intents);
      });
    } catch (error) {
      throw asIoError(error, 'Could not delete');
    }
    for (const node of nodes) session.tree.remove(node.id);
    await settleReleased(session, released);
    return nodes.length;
  }

  /**
   * The vault paths already taken that adding `sources` into a folder would meet: what to ask the user about
   * before an add with {@link AddOptions.onExisting}. See {@link takenNames}.
   * @throws {@link NotFoundError}, {@link InvalidArgumentError} when the folder is missing or is a file.
   */
  async takenNames(sources: readonly AddSource[], destinationFolder = '/'): Promise<string[]> {
    return takenNames(this.#unlocked(), sources, destinationFolder);
  }

  /**
   * Adds files and folders from disk (recursively) into a vault folder. See {@link addPaths}.
   */
  async add(
    sources: readonly string[],
    destinationFolder = '/',
    options: AddOptions = {},
  ): Promise<AddReport> {
    return this.#adding(options, (session, running) =>
      addPaths(session, sources, destinationFolder, running),
    );
  }

  /**
   * Adds files that have no path on disk (dropped from a browser, say), their bytes read from streams, into a
   * vault folder. Nothing of the plaintext is written to disk. See {@link addStreams}.
   */
  async addStreams(
    files: readonly StreamedFile[],
    destinationFolder = '/',
    options: AddOptions = {},
  ): Promise<AddReport> {
    return this.#adding(options, (session, running) =>
      addStreams(session, files, destinationFolder, running),
    );
  }

  /** Runs an add in its turn (adds run one at a time), with the signal that a lock or close also aborts. */
  #adding(
    options: AddOptions,
    add: (session: Session, options: AddOptions) => Promise<AddReport>,
  ): Promise<AddReport> {
    const session = this.#unlocked();
    session.requireWritable();
    return this.#activity.run('change', 'adding files', options.signal, async (signal) => {
      await checkVaultFolder(this.dir);
      return add(session, { ...options, signal });
    });
  }

  /** Restores files and folders to a folder on disk. See {@link restorePaths}. */
  async restore(
    paths: readonly string[],
    destinationDir: string,
    options: RestoreOptions = {},
  ): Promise<RestoreReport> {
    const session = this.#unlocked();
    return this.#activity.run('read', 'restoring', options.signal, (signal) =>
      restorePaths(session, paths, destinationDir, { ...options, signal }),
    );
  }

  /**
   * A file's plaintext, or a byte range of it, as a stream; only authenticated bytes are emitted. From its first
   * read until it ends or is destroyed it counts as a running read: a delete or verify waits for it, so destroy a
   * stream that will not be read to the end. Locking destroys it with {@link CancelledError}, at once, whether or
   * not it is being read; one first read after a lock fails with {@link VaultLockedError}.
   * @throws {@link NotFoundError}, {@link InvalidArgumentError} (a folder, or a range outside the file).
   */
  read(path: string, range?: ByteRange): Readable {
    const session = this.#unlocked();
    const node = session.resolve(path);
    if (node?.type !== 'file') throw new InvalidArgumentError(`"${path}" is not a file.`);
    if (range) checkRange(node, range);
    const stream: Readable = Readable.from(
      this.#activity.iterate('read', 'reading a file', (signal) => {
        if (this.#session !== session) throw new VaultLockedError();
        // A paused reader asks for nothing more, so only destroying the stream ends it (and its turn) at a lock.
        signal.addEventListener(
          'abort',
          () => {
            stream.destroy(new CancelledError());
          },
          { once: true },
        );
        return plaintextChunks(session, node, range, signal);
      }),
      // Bytes, not objects: at most about a megabyte is decrypted ahead of the reader.
      { objectMode: false, highWaterMark: 1024 * 1024 },
    );
    return stream;
  }

  /** Checks the index and every stored file; with `readData`, authenticates every chunk. See {@link verifyVault}. */
  async verify(options: VerifyOptions = {}): Promise<VerifyReport> {
    const session = this.#unlocked();
    return this.#activity.run('rewrite', 'verifying', options.signal, async (signal) => {
      await checkVaultFolder(this.dir);
      return verifyVault(session, { ...options, signal });
    });
  }
}

/** Stores the session's tree snapshot (when asked) and wipes its keys. */
function retire(session: Session, saveSnapshot: boolean): void {
  try {
    if (saveSnapshot) session.saveSnapshot();
  } catch {
    // The snapshot is a cache: failing to store it (a full disk, say) only makes the next unlock read every row,
    // and locking must wipe the keys whatever happens.
  } finally {
    session.wipeKeys();
  }
}

/** Folders first, then by name. */
function sortNodes(nodes: TreeNode[]): TreeNode[] {
  return nodes.sort((a, b) =>
    a.type === b.type ? a.name.localeCompare(b.name) : a.type === 'folder' ? -1 : 1,
  );
}

async function folderSize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}
