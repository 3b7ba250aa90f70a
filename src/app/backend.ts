import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename, isAbsolute, join, resolve } from 'node:path';

import { CancelledError, InvalidArgumentError, NotAVaultError, NotFoundError } from '../core/errors.js';
import { encodePassphrase } from '../core/crypto/kdf.js';
import { RecoveryKey } from '../core/crypto/recovery-key.js';
import { loadSodium, type SodiumBackend } from '../core/crypto/sodium.js';
import { checkName } from '../core/names.js';
import { HEADER_BACKUP_FILE, HEADER_FILE } from '../core/vault/layout.js';
import { asIoError } from '../core/vault/durable.js';
import { removeStaleRestoreTemps } from '../core/vault/restore-record.js';
import { rollbackWarning, SeenStates } from '../core/vault/seen-states.js';
import { Vault } from '../core/vault/vault.js';
import type { OnExisting, Problem } from '../core/types.js';
import {
  isChannel,
  requestSchemas,
  TAKEN_NAMES_SHOWN,
  type Channel,
  type EventName,
  type EventPayloads,
  type FilesPurpose,
  type FolderPurpose,
  type FolderTree,
  type LockReason,
  type ParsedRequestOf,
  type RecentVault,
  type ResponseOf,
  type Result,
  type UnlockResult,
  type Settings,
  type StoppedWork,
  type VaultSummary,
} from '../shared/contract.js';
import { receiveDroppedFiles, type DroppedFileInput } from './dropped.js';
import { GuessPacer } from './guess-pacer.js';
import { HandleRegistry, pathsOnDisk, wipeDropped, type HandleTarget, type HandleUse } from './handles.js';
import { JobRegistry } from './jobs.js';
import { estimateKdf, type KdfEstimate } from './kdf-estimate.js';
import { MediaStreams, type MediaResponse } from './media-streams.js';
import { OpenCopies } from './open-copies.js';
import { securityHandlers } from './security.js';
import { AppError, errorResult, fail, ok } from './result.js';
import { SettingsStore, type RecentEntry } from './settings.js';

/** Native dialogs in Electron; a stand-in in the preview server. Returns absolute paths, or null when cancelled. */
export interface DialogProvider {
  pickFolder(purpose: FolderPurpose): Promise<string | null>;
  /**
   * Files to add ('add-files', several), or one header backup file ('header-restore'), in a dialog opened in
   * `startIn` when given (the vault folder, which holds coffer.header.bak).
   */
  pickFiles(purpose: FilesPurpose, startIn?: string): Promise<string[] | null>;
}

/**
 * What the host can ask of the system's shell: Electron's `shell`, xdg-open in the preview, or a test's recorder.
 * Paths come only from the back end (a copy it wrote, a destination the user picked), never from the window.
 */
export interface SystemShell {
  /**
   * Opens a file with the system's default app for its kind.
   * @throws an error (its message for the log only) when no app could be started for it.
   */
  openPath(path: string): Promise<void>;
  /** Shows a file or folder in the system's file manager (selected where the file manager can). */
  showItemInFolder(path: string): Promise<void>;
}

export type EventListener = <E extends EventName>(event: E, payload: EventPayloads[E]) => void;

export interface Backend {
  /** Validates `payload` against the channel's schema; never throws; an unknown channel or a bad shape gives INVALID_ARGUMENT. */
  handle(channel: string, payload: unknown): Promise<Result<unknown>>;
  /** Only the host (preload→main for Electron; the preview server) calls these, never the renderer directly. */
  registerDroppedPaths(paths: readonly string[]): Result<{ handle: string; count: number }>;
  /**
   * Gives a handle for dropped files without a path at once; their bytes may still be arriving (the add job reads
   * them as they come, and reports a file whose bytes stop short).
   */
  registerDroppedBytes(files: readonly DroppedFileInput[]): Result<{ handle: string; count: number }>;
  onEvent(listener: EventListener): () => void;
  /** Locks every vault (jobs stopped, keys wiped, `locked` sent for each that was unlocked). Never throws. */
  lockAll(reason: LockReason): Promise<void>;
  /** Whether a job of any vault runs: the hosts' idle locks wait for it (suspend and screen lock do not). */
  jobsRunning(): boolean;
  /**
   * The host's window (Electron) or page (preview) was closed: locks every vault when the `lockOnClose` setting
   * says so. Never throws.
   */
  windowClosed(): Promise<void>;
  /** The settings now (for the host's own use: auto-lock, content protection). */
  readonly settings: Settings;
  /** Locks and closes every vault and forgets every handle. Never throws. */
  dispose(): Promise<void>;
  /**
   * Answers the host's request for a URL from `preview.mediaUrl` (the preview server's HTTP route, Electron's media
   * protocol), with the request's `Range` header. Never throws; damage found while reading ends the body with an error.
   */
  serveMedia(url: string, range: string | null): MediaResponse;
}

export interface BackendOptions {
  /** The app's data folder (settings.json lives there); created when missing. */
  readonly dataDir: string;
  readonly dialogs: DialogProvider;
  /** Crypto backend; default: sodium-native, else the WebAssembly build. */
  readonly sodium?: SodiumBackend;
  /** For tests: the clock of handle expiry and job progress coalescing. */
  readonly now?: () => number;
  /** For tests: how long a handle stays valid. */
  readonly handleTtlMs?: number;
  /** For tests: how the wait between wrong passphrases is waited out (with `now`, see {@link GuessPacer}). */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Opening files outside the window; without it `entries.openWithApp` answers NOT_SUPPORTED. */
  readonly shell?: SystemShell;
  /** The host can hide its window from screen capture (Electron on macOS and Windows). */
  readonly contentProtection?: boolean;
  /** The host shows job notifications itself (Electron); otherwise the window does. */
  readonly hostNotifications?: boolean;
  /** The host hands over dropped folders by path (Electron): the contract's `HostCapabilities.folderDrops`. */
  readonly folderDrops?: boolean;
  /** Called after the settings changed (Electron applies content protection to its windows). */
  readonly onSettingsChanged?: (settings: Settings) => void;
  /**
   * Where the host serves media previews (`preview.mediaUrl`): the prefix a token is appended to, ending in `/`,
   * absolute or relative to the window's page. Without it `preview.mediaUrl` answers NOT_SUPPORTED.
   */
  readonly mediaUrlBase?: string;
}

interface OpenVault {
  readonly vaultId: string;
  readonly recentId: string;
  readonly dir: string;
  /** Replaced when a header import reopens the folder (the locked vault holds the header it was opened with). */
  vault: Vault;
  /**
   * Whether an unlock's reply already carried the vault's open warnings: they describe the open, so the unlocks
   * after a lock do not repeat them (the header a warning speaks of was rewritten by the first writable unlock).
   */
  openWarningsSaid: boolean;
  /** Deletes asked for and not ended: a lock stops those still waiting for their turn, and says so. */
  readonly removals: Set<Promise<number>>;
}

type Handlers = { [C in Channel]: (request: ParsedRequestOf<C>) => Promise<ResponseOf<C>> | ResponseOf<C> };

/** Most paths one drop may carry. */
const DROP_MAX_ITEMS = 10_000;

/** What `job.add` accepts as what to add. */
const ADD_SOURCES: readonly HandleUse[] = ['add-files', 'add-folder', 'dropped-paths', 'dropped-bytes'];

/** Names schema issues by field and kind only: a payload may carry a passphrase, which must never be echoed. */
function describeIssues(channel: string, issues: readonly { path: PropertyKey[]; code: string }[]): string {
  const described = issues
    .slice(0, 5)
    .map((issue) => `${issue.path.map(String).join('.') || '(request)'}: ${issue.code.replaceAll('_', ' ')}`);
  return `Invalid request for "${channel}": ${described.join('; ')}.`;
}

/**
 * The app's back end: the contract's handlers on top of {@link Vault}, with no Electron import, so the same code
 * runs in Electron's main process and in the preview server. Paths on disk come only from the dialog provider or a
 * drop (as handles); open vaults, jobs and recent vaults are named by ids this back end hands out.
 * @throws {@link IoError} when the data folder cannot be read.
 */
export async function createBackend(options: BackendOptions): Promise<Backend> {
  const store = await SettingsStore.load(options.dataDir);
  if (store.problem) console.warn(`coffer: ${store.problem}`);
  // Restores record their temp files here, so partial plaintext that a killed restore left in its destination is
  // found and removed now, before any restore of this back end can start (and by each restore after).
  const restoreStateDir = join(options.dataDir, 'state');
  removeStaleRestoreTemps(restoreStateDir);
  // Likewise decrypted copies opened with another app by a run that was killed or crashed.
  const openCopies = new OpenCopies(options.dataDir);
  const media = new MediaStreams(options.mediaUrlBase ?? '');
  openCopies.removeAll();
  // The last state of each vault's index seen here, to warn when a vault went backwards (FORMAT.md section 8.8).
  const seen = new SeenStates(restoreStateDir);
  /** Remembers the vault's state; the memory is best effort, and a failure to write it is only logged. */
  const rememberState = (vault: Vault): void => {
    try {
      seen.remember(vault.indexState());
    } catch (error) {
      console.warn(`coffer: could not remember the vault's state: ${(error as Error).message}`);
    }
  };
  /**
   * The reply to an unlock: what it found, how the vault had to be opened (at its first unlock only), and whether
   * the vault went back since this computer last saw it. Said once: from here on the state found now is what the
   * next unlock compares with.
   */
  const afterUnlock = (entry: OpenVault, problems: readonly Problem[]): UnlockResult => {
    const { vault } = entry;
    const openWarnings = entry.openWarningsSaid ? [] : vault.warnings;
    entry.openWarningsSaid = true;
    const now = vault.indexState();
    let rollback: string | null;
    try {
      rollback = rollbackWarning(seen.recall(now.vaultId), now) ?? null;
    } catch (error) {
      console.warn(`coffer: could not read the vault's remembered state: ${(error as Error).message}`);
      rollback =
        'Coffer could not read what this computer remembers about this vault, so it cannot tell whether the ' +
        "vault was put back to an older copy since it was last opened here. Check that Coffer's data folder " +
        '(its "state" folder) can be read.';
    }
    rememberState(vault);
    return {
      // The engine's last problem then says in its words what headerOlderThanData tells the window (Vault.unlock).
      problems: vault.headerOlderThanData ? problems.slice(0, -1) : problems,
      openWarnings,
      rollbackWarning: rollback,
      headerOlderThanData: vault.headerOlderThanData,
      root: vault.list('/'),
    };
  };
  let sodium: SodiumBackend | undefined = options.sodium;
  const getSodium = async (): Promise<SodiumBackend> => (sodium ??= await loadSodium());
  const listeners = new Set<EventListener>();
  const emit: EventListener = (event, payload) => {
    for (const listener of listeners) {
      try {
        listener(event, payload);
      } catch (error) {
        console.error('coffer: an event listener failed:', error);
      }
    }
  };
  const handles = new HandleRegistry({
    ...(options.now ? { now: options.now } : {}),
    ...(options.handleTtlMs !== undefined ? { ttlMs: options.handleTtlMs } : {}),
  });
  const guesses = new GuessPacer({
    ...(options.now ? { now: options.now } : {}),
    ...(options.sleep ? { sleep: options.sleep } : {}),
  });
  const jobs = new JobRegistry(
    (event) => {
      emit('job', event);
    },
    options.now ? { now: options.now } : {},
  );
  const open = new Map<string, OpenVault>();
  /** Where each finished restore put its first item, by job id, until its vault locks or closes. */
  const restored = new Map<string, { readonly vaultId: string; readonly path: string }>();
  const forgetRestored = (vaultId: string): void => {
    for (const [jobId, done] of restored) if (done.vaultId === vaultId) restored.delete(jobId);
  };
  let kdfEstimate: Promise<KdfEstimate> | undefined;

  const openVault = (vaultId: string): OpenVault => {
    const found = open.get(vaultId);
    if (!found)
      throw new InvalidArgumentError('That vault is not open (it may have been closed). Open it again.');
    return found;
  };

  const summary = (entry: OpenVault): VaultSummary => ({
    vaultId: entry.vaultId,
    recentId: entry.recentId,
    name: basename(entry.dir),
    location: entry.dir,
    locked: entry.vault.locked,
    readOnly: entry.vault.readOnly,
    headerOlderThanData: entry.vault.headerOlderThanData,
  });

  const recentVault = (entry: RecentEntry): RecentVault => ({
    recentId: entry.id,
    name: basename(entry.dir),
    location: entry.dir,
    lastOpenedAt: entry.lastOpenedAt,
    missing: entry.missing,
  });

  const adopt = (vault: Vault, dir: string): VaultSummary => {
    const entry: OpenVault = {
      vaultId: `v-${randomBytes(12).toString('hex')}`,
      recentId: store.remember(dir).id,
      dir,
      vault,
      openWarningsSaid: false,
      removals: new Set(),
    };
    open.set(entry.vaultId, entry);
    // After the answer: the index's largest reads are done while the passphrase is typed (see Vault.readAhead).
    setImmediate(() => {
      if (open.get(entry.vaultId) !== entry || !entry.vault.locked) return; // closed or unlocked meanwhile
      entry.vault.readAhead();
    });
    return summary(entry);
  };

  const lock = async (entry: OpenVault, reason: LockReason): Promise<void> => {
    const wasUnlocked = !entry.vault.locked;
    if (wasUnlocked) rememberState(entry.vault);
    handles.forgetVault(entry.vaultId);
    const stopped = jobs.stop(entry.vaultId);
    const removals = [...entry.removals];
    entry.vault.lock();
    media.revokeVault(entry.vaultId);
    await entry.vault.released();
    const stoppedJobs: StoppedWork[] = await stopped;
    // A delete the lock stopped before its turn deleted nothing (one that had begun ends whole).
    for (const removal of await Promise.allSettled(removals))
      if (removal.status === 'rejected' && removal.reason instanceof CancelledError)
        stoppedJobs.push({ kind: 'delete', begun: false });
    openCopies.removeFor(entry.vaultId);
    forgetRestored(entry.vaultId);
    if (wasUnlocked) emit('locked', { vaultId: entry.vaultId, reason, stoppedJobs });
  };

  const close = async (entry: OpenVault): Promise<void> => {
    if (!entry.vault.locked) rememberState(entry.vault);
    open.delete(entry.vaultId);
    handles.forgetVault(entry.vaultId);
    const stopped = jobs.stop(entry.vaultId);
    media.revokeVault(entry.vaultId);
    entry.vault.close();
    await entry.vault.released();
    await stopped;
    openCopies.removeFor(entry.vaultId);
    forgetRestored(entry.vaultId);
    emit('closed', { vaultId: entry.vaultId });
  };

  /** Runs the engine with a passphrase as a wipeable buffer, wiped however it ends. */
  const withPassphrase = async <T>(text: string, use: (passphrase: Buffer) => Promise<T>): Promise<T> => {
    const passphrase = encodePassphrase(await getSodium(), text);
    try {
      return await use(passphrase);
    } finally {
      passphrase.fill(0);
    }
  };

  /** Opens a locked entry's folder again (after a header import); an entry that no longer opens is closed. */
  const reopen = async (entry: OpenVault): Promise<void> => {
    try {
      entry.vault = await Vault.open(entry.dir, { sodium: await getSodium() });
    } catch (error) {
      open.delete(entry.vaultId);
      handles.forgetVault(entry.vaultId);
      emit('closed', { vaultId: entry.vaultId });
      throw error;
    }
  };

  const folderOf = (handle: string, purpose: FolderPurpose, vaultId?: string): string => {
    const target = handles.take(handle, [purpose], vaultId);
    if (target.kind !== 'folder') throw new InvalidArgumentError('That choice is not a folder.');
    return target.path;
  };

  const folderTree = (vault: Vault, path: string, depth: number): FolderTree => {
    const entry = vault.stat(path);
    if (entry.type !== 'folder') throw new InvalidArgumentError(`"${path}" is not a folder.`);
    const folders = vault.listFolders(entry.path);
    return {
      path: entry.path,
      name: entry.name,
      mtime: entry.mtime,
      children: depth > 0 ? folders.map((child) => folderTree(vault, child.path, depth - 1)) : [],
      truncated: depth === 0 && folders.length > 0,
    };
  };

  const startAdd = (
    entry: OpenVault,
    target: HandleTarget,
    destination: string,
    onExisting: OnExisting,
  ): string => {
    const { vault } = entry;
    if (target.kind === 'dropped-bytes') {
      const files = target.files.map(({ name, size, mtime, bytes }) => ({
        name,
        size,
        mtime,
        bytes: bytes.read(),
      }));
      return jobs.start(
        entry.vaultId,
        'add',
        async ({ signal, onProgress, onWaiting, onFinished }) => {
          // A cancel lets the bytes go at once: the add may be waiting for some that have not come (a page that
          // stopped sending), and would otherwise notice the cancel only when they come or time out.
          signal.addEventListener(
            'abort',
            () => {
              wipeDropped(target);
            },
            { once: true },
          );
          return {
            kind: 'add',
            report: await vault.addStreams(files, destination, {
              signal,
              onProgress,
              onWaiting,
              onExisting,
              onAdded: onFinished,
            }),
          };
        },
        () => {
          wipeDropped(target);
        },
      );
    }
    return jobs.start(entry.vaultId, 'add', async ({ signal, onProgress, onWaiting, onFinished }) => ({
      kind: 'add',
      report: await vault.add(pathsOnDisk(target), destination, {
        signal,
        onProgress,
        onWaiting,
        onExisting,
        onAdded: onFinished,
      }),
    }));
  };

  const handlers: Handlers = {
    'dialog.pickFolder': async (request) => {
      const vaultId = 'vaultId' in request ? request.vaultId : undefined;
      const entry = vaultId === undefined ? undefined : openVault(vaultId);
      // An add a vault cannot take (read-only, or its header older than its data) is refused before anything is
      // picked, not as a failed job once the files were chosen.
      if (request.purpose === 'add-folder') entry?.vault.requireWritable();
      const path = await options.dialogs.pickFolder(request.purpose);
      if (path === null) return null;
      const dir = checkedAbsolute(path);
      return {
        handle: handles.issue({ kind: 'folder', purpose: request.purpose, path: dir }, vaultId),
        label: dir,
        count: 1,
      };
    },
    'dialog.pickFiles': async (request) => {
      const entry = openVault(request.vaultId);
      if (request.purpose === 'add-files') entry.vault.requireWritable(); // as in 'dialog.pickFolder'
      const picked = await options.dialogs.pickFiles(
        request.purpose,
        request.purpose === 'header-restore' ? entry.dir : undefined,
      );
      if (picked === null || picked.length === 0) return null;
      const paths = picked.map(checkedAbsolute);
      const label = paths.length === 1 ? basename(paths[0] ?? '') : `${paths.length} files`;
      if (request.purpose === 'header-restore' && paths.length !== 1) {
        throw new InvalidArgumentError('Choose one header backup file.');
      }
      const handle = handles.issue({ kind: 'files', purpose: request.purpose, paths }, request.vaultId);
      return { handle, label, count: paths.length };
    },
    'vault.create': async (request) => {
      const parent = folderOf(request.folder, 'create-vault');
      const dir = join(parent, checkName(request.name));
      const engine = await getSodium();
      const vault = await withPassphrase(request.passphrase, (passphrase) =>
        Vault.create(dir, passphrase, {
          kdf: request.kdf,
          contentPadding: request.contentPadding,
          sodium: engine,
        }),
      );
      return adopt(vault, dir);
    },
    'vault.open': async (request) => {
      const recent = 'recentId' in request ? store.recentEntry(request.recentId) : undefined;
      const dir = 'folder' in request ? folderOf(request.folder, 'open-vault') : (recent as RecentEntry).dir;
      const already = [...open.values()].find((entry) => entry.dir === dir);
      if (already) return summary(already);
      let vault: Vault;
      try {
        vault = await Vault.open(dir, { sodium: await getSodium() });
      } catch (error) {
        if (recent && error instanceof NotFoundError) store.setMissing(recent.id, true);
        throw error;
      }
      return adopt(vault, dir);
    },
    'vault.unlock': async (request) => {
      const entry = openVault(request.vaultId);
      const { vault } = entry;
      const problems = await guesses.attempt(request.vaultId, () =>
        withPassphrase(request.passphrase, (passphrase) => vault.unlock(passphrase)),
      );
      return afterUnlock(entry, problems);
    },
    'vault.unlockWithRecoveryKey': async (request) => {
      const entry = openVault(request.vaultId);
      const { vault } = entry;
      const problems = await guesses.attempt(request.vaultId, () =>
        vault.unlockWithRecoveryKey(request.recoveryKey),
      );
      return afterUnlock(entry, problems);
    },
    'vault.lock': async (request) => {
      await lock(openVault(request.vaultId), 'user');
      return null;
    },
    'vault.close': async (request) => {
      await close(openVault(request.vaultId));
      return null;
    },
    'vault.info': async (request) => {
      const entry = openVault(request.vaultId);
      return { ...summary(entry), info: await entry.vault.info() };
    },
    'vault.totals': (request) => openVault(request.vaultId).vault.totals(),
    'vault.listOpen': () => [...open.values()].map(summary),
    'vault.rotateKey': (request) => openVault(request.vaultId).vault.rotateKey(),
    'security.importHeader': async (request) => {
      const entry = openVault(request.vaultId);
      if (!entry.vault.locked) {
        throw new InvalidArgumentError(
          'Lock the vault first: a header backup is put back into a locked vault.',
        );
      }
      const target = handles.take(request.file, ['header-restore'], request.vaultId);
      if (target.kind !== 'files' || target.paths.length !== 1) {
        throw new InvalidArgumentError('That choice is not one header backup file.');
      }
      const headerBytes = await readHeaderBackup(target.paths[0] ?? '');
      const sodium = await getSodium();
      // The locked vault holds the folder's lock and the header it was opened with: it lets go for the import and
      // the folder is opened again afterwards (with the imported header when the import was done).
      entry.vault.close();
      await entry.vault.released();
      try {
        const logProblems =
          request.secretKind === 'passphrase'
            ? await withPassphrase(request.secret, (passphrase) =>
                Vault.importHeader(entry.dir, headerBytes, passphrase, { sodium }),
              )
            : await withRecoveryKey(sodium, request.secret, (key) =>
                Vault.importHeader(entry.dir, headerBytes, key, { sodium }),
              );
        return { logProblems };
      } finally {
        await reopen(entry);
      }
    },
    ...securityHandlers({
      sodium: getSodium,
      vaultOf: (vaultId) => openVault(vaultId).vault,
      withPassphrase,
      paced: (vaultId, attempt) => guesses.attempt(vaultId, attempt),
      folderOf: (handle, vaultId) => folderOf(handle, 'header-backup', vaultId),
    }),
    'recent.list': async () => {
      const out: RecentVault[] = [];
      for (const entry of store.recent) {
        const missing = !(await looksLikeVault(entry.dir));
        out.push(recentVault(entry.missing === missing ? entry : store.setMissing(entry.id, missing)));
      }
      return out;
    },
    'recent.add': async (request) => {
      const dir = folderOf(request.folder, 'open-vault');
      if (!(await looksLikeVault(dir))) {
        throw new NotAVaultError(`"${dir}" is not a Coffer vault (it has no ${HEADER_FILE}).`);
      }
      return recentVault(store.remember(dir));
    },
    'recent.forget': (request) => {
      store.forget(request.recentId);
      return null;
    },
    'recent.markMissing': (request) => recentVault(store.setMissing(request.recentId, true)),
    'entries.list': (request) => openVault(request.vaultId).vault.list(request.path),
    'entries.stat': (request) => openVault(request.vaultId).vault.stat(request.path),
    'entries.search': (request) => openVault(request.vaultId).vault.search(request.query, request.limit),
    'entries.tree': (request) => folderTree(openVault(request.vaultId).vault, request.path, request.depth),
    'entries.mkdir': (request) => openVault(request.vaultId).vault.mkdir(request.path),
    'entries.rename': (request) => openVault(request.vaultId).vault.rename(request.path, request.newName),
    'entries.move': (request) => openVault(request.vaultId).vault.move(request.paths, request.destination),
    'entries.remove': async (request) => {
      const { vault, removals } = openVault(request.vaultId);
      const removal = vault.remove(request.paths);
      removals.add(removal);
      try {
        return { removed: await removal };
      } finally {
        removals.delete(removal);
      }
    },
    'job.add': async (request) => {
      const entry = openVault(request.vaultId);
      // Checked before the job starts, so an unwritable vault or a wrong destination is this request's error, not a job's.
      entry.vault.requireWritable();
      const destination = addDestination(entry, request.destination);
      if (request.onExisting === 'ask') {
        // Asked with the add rather than before it: one round trip fewer on the way to every add.
        const target = handles.peek(request.source, ADD_SOURCES, request.vaultId);
        const sources =
          target.kind === 'dropped-bytes' ? target.files.map(({ name }) => ({ name })) : pathsOnDisk(target);
        const taken = await entry.vault.takenNames(sources, destination);
        if (taken.length > 0)
          return { taken: { count: taken.length, paths: taken.slice(0, TAKEN_NAMES_SHOWN) } };
        // The look yielded: the vault may have been locked or closed, or the folder removed, meanwhile.
        openVault(request.vaultId);
        addDestination(entry, destination);
      }
      const target = handles.take(request.source, ADD_SOURCES, request.vaultId);
      const onExisting = request.onExisting === 'ask' ? 'fail' : request.onExisting;
      return { jobId: startAdd(entry, target, destination, onExisting) };
    },
    'job.restore': (request) => {
      const entry = openVault(request.vaultId);
      for (const path of request.paths) entry.vault.stat(path);
      const destination = folderOf(request.destination, 'restore-destination', request.vaultId);
      const jobId: string = jobs.start(
        entry.vaultId,
        'restore',
        async ({ signal, onProgress, onWaiting, onFinished }) => {
          // Renamed while the restore waited its turn, the chosen item went into the destination by its new name.
          let restoredPaths: readonly string[] = request.paths;
          const report = await entry.vault.restore(request.paths, destination, {
            signal,
            onProgress,
            onWaiting,
            onRestored: onFinished,
            onStart: (paths) => {
              restoredPaths = paths;
            },
            overwrite: request.overwrite,
            stateDir: restoreStateDir,
          });
          restored.set(jobId, {
            vaultId: entry.vaultId,
            path: await restoredItem(destination, firstTopLevel(restoredPaths)),
          });
          return { kind: 'restore', report };
        },
      );
      return { jobId };
    },
    'job.verify': (request) => {
      const entry = openVault(request.vaultId);
      if (entry.vault.locked) entry.vault.list('/'); // throws the engine's VaultLockedError
      const jobId = jobs.start(entry.vaultId, 'verify', async ({ signal, onProgress, onWaiting }) => ({
        kind: 'verify',
        report: await entry.vault.verify({ signal, onProgress, onWaiting, readData: request.readData }),
      }));
      return { jobId };
    },
    'job.reencrypt': (request) => {
      const entry = openVault(request.vaultId);
      if (entry.vault.locked) entry.vault.list('/'); // throws the engine's VaultLockedError
      const jobId = jobs.start(entry.vaultId, 'reencrypt', async ({ signal, onProgress, onWaiting }) => ({
        kind: 'reencrypt',
        report: await entry.vault.reencrypt({ signal, onProgress, onWaiting }),
      }));
      return { jobId };
    },
    'job.cancel': (request) => {
      jobs.cancel(request.jobId);
      return null;
    },
    'job.list': () => jobs.list(),
    'job.showInFolder': async (request) => {
      const done = restored.get(request.jobId);
      if (!done) {
        throw new InvalidArgumentError(
          'Only a restore that finished (before the vault was locked) can be shown in its folder.',
        );
      }
      if (!options.shell) throw new AppError('NOT_SUPPORTED', 'This host cannot show files in a folder.');
      await options.shell.showItemInFolder(done.path);
      return null;
    },
    'entries.openWithApp': async (request) => {
      const { shell } = options;
      if (!shell) throw new AppError('NOT_SUPPORTED', 'This host cannot open files with another app.');
      const { vault } = openVault(request.vaultId);
      const file = vault.stat(request.path);
      if (file.type !== 'file') throw new InvalidArgumentError(`"${request.path}" is not a file.`);
      const copy = await openCopies.write(request.vaultId, file.name, vault.read(file.path));
      try {
        await shell.openPath(copy);
      } catch (error) {
        openCopies.discard(request.vaultId, copy);
        console.warn('coffer: the default app could not be started:', (error as Error).message);
        throw new AppError(
          'NOT_SUPPORTED',
          'No app on this computer opens this kind of file. Restore it and open it from its folder.',
        );
      }
      return null;
    },
    'preview.mediaUrl': (request) => {
      if (options.mediaUrlBase === undefined)
        throw new AppError('NOT_SUPPORTED', 'This host cannot play media by range reads.');
      return { url: media.grant(request.vaultId, openVault(request.vaultId).vault, request.path) };
    },
    'preview.releaseMedia': (request) => {
      media.revoke(request.url);
      return null;
    },
    'preview.read': async (request) => {
      const { vault } = openVault(request.vaultId);
      const file = vault.stat(request.path);
      if (file.type !== 'file') throw new InvalidArgumentError(`"${request.path}" is not a file.`);
      if (request.offset > file.size) {
        throw new InvalidArgumentError(
          `Offset ${request.offset} is past the end of the file (${file.size} bytes).`,
        );
      }
      const end = Math.min(request.offset + request.length, file.size);
      if (end === request.offset) return { bytes: new Uint8Array(0), fileSize: file.size };
      const chunks: Buffer[] = [];
      for await (const chunk of vault.read(file.path, { start: request.offset, end: end - 1 })) {
        chunks.push(chunk as Buffer);
      }
      return { bytes: new Uint8Array(Buffer.concat(chunks)), fileSize: file.size };
    },
    'settings.get': () => store.settings,
    'settings.set': (request) => {
      const settings = store.updateSettings(request);
      options.onSettingsChanged?.(settings);
      return settings;
    },
    'app.kdfEstimate': async () => (kdfEstimate ??= estimateKdf(await getSodium())),
    'app.problems': () => (store.problem ? [{ code: 'IO', message: store.problem }] : []),
    'app.capabilities': () => ({
      openWithApp: options.shell !== undefined,
      showInFolder: options.shell !== undefined,
      contentProtection: options.contentProtection === true,
      notifications: options.hostNotifications === true ? 'host' : 'window',
      folderDrops: options.folderDrops === true,
    }),
  };

  const lockAll = async (reason: LockReason): Promise<void> => {
    handles.clear();
    await Promise.all([...open.values()].map((entry) => lock(entry, reason).catch(logFailure)));
  };

  return {
    async handle(channel, payload) {
      if (typeof channel !== 'string' || !isChannel(channel)) {
        return fail(
          'INVALID_ARGUMENT',
          `Unknown request "${typeof channel === 'string' ? channel.slice(0, 64) : typeof channel}".`,
        );
      }
      const parsed = requestSchemas[channel].safeParse(payload);
      if (!parsed.success) return fail('INVALID_ARGUMENT', describeIssues(channel, parsed.error.issues));
      try {
        const handler = handlers[channel] as (request: unknown) => Promise<unknown>;
        return ok(await handler(parsed.data));
      } catch (error) {
        return errorResult(error);
      }
    },

    registerDroppedPaths(paths) {
      if (!Array.isArray(paths) || paths.length === 0 || paths.length > DROP_MAX_ITEMS) {
        return fail('INVALID_ARGUMENT', `A drop must hold between 1 and ${DROP_MAX_ITEMS} items.`);
      }
      try {
        const checked = paths.map(checkedAbsolute);
        return ok({
          handle: handles.issue({ kind: 'dropped-paths', paths: checked }),
          count: checked.length,
        });
      } catch (error) {
        return errorResult(error);
      }
    },

    registerDroppedBytes(files) {
      try {
        const dropped = receiveDroppedFiles(files);
        return ok({
          handle: handles.issue({ kind: 'dropped-bytes', files: dropped }),
          count: dropped.length,
        });
      } catch (error) {
        return errorResult(error);
      }
    },

    onEvent(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },

    lockAll,
    jobsRunning: () => jobs.list().length > 0,

    async windowClosed() {
      media.revokeAll();
      if (store.settings.lockOnClose) await lockAll('window-closed');
    },

    serveMedia(url, range) {
      try {
        return media.respond(url, range, (vaultId) => open.get(vaultId)?.vault);
      } catch (error) {
        console.error('coffer: a media request failed:', error);
        return { status: 500, headers: { 'cache-control': 'no-store' } };
      }
    },

    get settings() {
      return store.settings;
    },

    async dispose() {
      handles.clear();
      await Promise.all(
        [...open.values()].map((entry) =>
          lock(entry, 'quit')
            .then(() => close(entry))
            .catch(logFailure),
        ),
      );
      openCopies.removeAll();
      media.revokeAll();
      listeners.clear();
    },
  };
}

function logFailure(error: unknown): void {
  console.error('coffer: locking a vault failed:', error);
}

/**
 * The vault folder an add goes into, as stored.
 * @throws {@link InvalidArgumentError} when it is not a folder; the engine's errors when it is missing or the
 * vault is locked.
 */
function addDestination(entry: OpenVault, path: string): string {
  const destination = entry.vault.stat(path);
  if (destination.type !== 'folder') throw new InvalidArgumentError(`"${path}" is not a folder.`);
  return destination.path;
}

/** Paths from a dialog or a drop are the host's, but still checked: absolute, and normalised. */
function checkedAbsolute(path: string): string {
  if (typeof path !== 'string' || !isAbsolute(path) || path.includes('\0')) {
    throw new InvalidArgumentError('A chosen path was not an absolute path on this computer.');
  }
  return resolve(path);
}

/**
 * The first of a restore's vault paths that none of the others holds: the restore puts the others inside the one
 * that holds them (restore.ts), so they are not at the top of the destination.
 */
function firstTopLevel(paths: readonly string[]): string {
  const holds = (folder: string, path: string): boolean =>
    folder !== path && (folder === '/' || path.startsWith(`${folder}/`));
  return paths.find((path) => !paths.some((other) => holds(other, path))) ?? '/';
}

/**
 * What a restore of `vaultPath` put into `destination`: the item of that name, or (when it is not there: restoring
 * "/", or skipped as damaged) the destination itself.
 */
async function restoredItem(destination: string, vaultPath: string): Promise<string> {
  const name = basename(vaultPath);
  const item = join(destination, name);
  return name !== '' && (await exists(item)) ? item : destination;
}

/** A vault folder holds its header, or at least the header's backup (FORMAT.md 4.7), which stands in for it. */
async function looksLikeVault(dir: string): Promise<boolean> {
  return (await exists(join(dir, HEADER_FILE))) || (await exists(join(dir, HEADER_BACKUP_FILE)));
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** A header is a few kilobytes (FORMAT.md 4.6); a bigger file is not one, and is not read into memory whole. */
const HEADER_BACKUP_MAX_BYTES = 1024 * 1024;

/**
 * The bytes of a picked header backup file.
 * @throws {@link InvalidArgumentError} for a file too big to be a header; {@link IoError} when it cannot be read.
 */
async function readHeaderBackup(path: string): Promise<Buffer> {
  try {
    if ((await stat(path)).size > HEADER_BACKUP_MAX_BYTES) {
      throw new InvalidArgumentError(
        'That file is too big to be a header backup. Choose the ".coffer-header" file.',
      );
    }
    return await readFile(path);
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw error;
    throw asIoError(error, `Could not read the header backup "${basename(path)}"`);
  }
}

/** Runs the engine with a typed recovery key, parsed (a typo is an InvalidArgumentError) and wiped however it ends. */
async function withRecoveryKey<T>(
  sodium: SodiumBackend,
  text: string,
  use: (key: RecoveryKey) => Promise<T>,
): Promise<T> {
  const key = RecoveryKey.parse(sodium, text);
  try {
    return await use(key);
  } finally {
    key.wipe(sodium);
  }
}
