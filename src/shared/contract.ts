/**
 * The one contract between the window (renderer) and the back end (Electron main, or the preview server).
 *
 * Every request has a zod schema here; the back end validates each payload against it before anything else runs,
 * so a compromised renderer can send nothing the schema does not allow. Response and event types are types only:
 * the back end produces them. This module is imported by main, the preload, the renderer and the preview bridge,
 * so it imports nothing of Node, the DOM, the engine's runtime or native modules (a test keeps it so).
 *
 * Paths on disk never appear in a request. Folders and files on disk come from the `dialog.*` channels (or from a
 * drop, through {@link CofferApi.registerDroppedFiles}) as opaque handles; open vaults are named by the `vaultId`
 * the back end hands out; recent vaults by the `recentId` of the settings store. Paths inside a vault ("/a/b.txt")
 * are plain strings: the engine checks them.
 */
import * as z from 'zod/mini';

import type {
  AddReport,
  Problem,
  Progress,
  ReencryptReport,
  RestoreReport,
  VaultEntry,
  VaultInfo,
  VaultTotals,
  VerifyReport,
} from '../core/types.js';
import type { ErrorCode } from './error-codes.js';

export type { AddReport, Problem, Progress, RestoreReport, VaultEntry, VaultInfo, VaultTotals, VerifyReport };
export type { ReencryptReport };

/** Largest byte range one `preview.read` returns (4 MiB): enough to show an image or a page of text. */
export const PREVIEW_MAX_BYTES = 4 * 1024 * 1024;

/** Longest passphrase accepted (in UTF-16 code units); a longer one is refused before it reaches the KDF. */
const PASSPHRASE_MAX_LENGTH = 1024;

/** Most taken paths `job.add` with `onExisting: 'ask'` names (it counts them all). */
export const TAKEN_NAMES_SHOWN = 5;

/** The vault paths an add would meet already taken: how many, and the first {@link TAKEN_NAMES_SHOWN}. */
export interface TakenNames {
  readonly count: number;
  readonly paths: readonly string[];
}

/** Most vault paths one request may name (move, remove, restore). */
const PATHS_MAX = 10_000;

/** Longest auto-lock delay in minutes (one day); 0 turns auto-lock off. */
export const AUTO_LOCK_MAX_MINUTES = 24 * 60;

function boundedString(maxLength: number) {
  return z.string().check(z.minLength(1), z.maxLength(maxLength));
}

function boundedInt(minimum: number, maximum: number) {
  return z.int().check(z.minimum(minimum), z.maximum(maximum));
}

/** Opaque ids handed out by the back end: handles, vault ids, job ids, recent-vault ids. */
const id = z.string().check(z.minLength(1), z.maxLength(128));
/** A path inside a vault; the engine parses and checks it. */
const vaultPath = z.string().check(z.minLength(1), z.maxLength(4096));
const vaultPaths = z.array(vaultPath).check(z.minLength(1), z.maxLength(PATHS_MAX));
const vaultRef = { vaultId: id };
const passphrase = boundedString(PASSPHRASE_MAX_LENGTH);
/** A printed recovery key is 47 characters; room for spaces and a pasted line break. */
const RECOVERY_KEY_MAX_LENGTH = 200;

/** The path of a problem with the vault index as a whole, not one entry (the engine's, re-exported for the window). */
export { INDEX_PROBLEM_PATH } from '../core/types.js';

export const KDF_PRESET_NAMES = ['interactive', 'moderate', 'sensitive'] as const;
/** How a new vault pads its files' stored sizes (the engine's `ContentPadding`; FORMAT.md 5.7). */
const CONTENT_PADDING_NAMES = ['padme', 'none'] as const satisfies readonly VaultInfo['contentPadding'][];
export const THEMES = ['system', 'light', 'dark'] as const;
export const LOCK_REASONS = ['user', 'idle', 'suspend', 'screen-lock', 'quit', 'window-closed'] as const;
export type LockReason = (typeof LOCK_REASONS)[number];

/** What a picked folder is for: a handle is accepted only by the channel of its purpose. */
export const FOLDER_PURPOSES = [
  'create-vault',
  'open-vault',
  'restore-destination',
  'add-folder',
  'header-backup',
] as const;
export type FolderPurpose = (typeof FOLDER_PURPOSES)[number];
/** What a picked file is for: files to add, or a header backup to put back (one file). */
export type FilesPurpose = 'add-files' | 'header-restore';

const settingsShape = {
  /**
   * Lock every vault after this many minutes without use; 0 = never. Fractions are allowed (the window offers
   * whole minutes; a test sets a few seconds).
   */
  autoLockMinutes: z.number().check(z.minimum(0), z.maximum(AUTO_LOCK_MAX_MINUTES)),
  /** 'system' follows the system's light or dark appearance. */
  theme: z.enum(THEMES),
  /** Turns the window's animations and transitions off, whatever the system's own setting. */
  reduceMotion: z.boolean(),
  /** Lock every vault when the window closes (in the preview: when the page is closed or left). */
  lockOnClose: z.boolean(),
  /** Lock every vault when the computer suspends (Electron; a browser cannot tell). */
  lockOnSuspend: z.boolean(),
  /** Lock every vault when the system's screen locks (Electron; a browser cannot tell). */
  lockOnScreenLock: z.boolean(),
  /**
   * Hide the window's contents from screen capture and screen sharing (Electron's setContentProtection, on macOS
   * and Windows; see {@link HostCapabilities.contentProtection}).
   */
  contentProtection: z.boolean(),
  /** The window has said once what "Open with the default app" leaves on disk (and the user went on). */
  openCopyNoticeShown: z.boolean(),
};

/** Settings the user can change. Validated when read from disk too. */
export const settingsSchema = z.strictObject(settingsShape);
export type Settings = z.output<typeof settingsSchema>;

/** The settings of a first start, and what fills in a setting a settings file written before it lacks. */
export const DEFAULT_SETTINGS: Settings = {
  autoLockMinutes: 10,
  theme: 'system',
  reduceMotion: false,
  // Closing the window is what many people do to leave their files: it locks unless they choose otherwise.
  lockOnClose: true,
  // A sleeping or locked computer is one its owner left: on unless they choose otherwise.
  lockOnSuspend: true,
  lockOnScreenLock: true,
  // Off by default: it blanks the window in screen sharing (a support call, a presentation) without saying why.
  contentProtection: false,
  openCopyNoticeShown: false,
};

/** Every request the window may make: channel name → zod schema of its request. */
export const requestSchemas = {
  // ── dialogs: the only way a path on disk enters (as a handle) ──
  /** Asks the user for a folder. Handles for a vault's restore destination or added folder belong to that vault. */
  'dialog.pickFolder': z.discriminatedUnion('purpose', [
    z.strictObject({ purpose: z.literal('create-vault') }),
    z.strictObject({ purpose: z.literal('open-vault') }),
    z.strictObject({ purpose: z.literal('restore-destination'), ...vaultRef }),
    z.strictObject({ purpose: z.literal('add-folder'), ...vaultRef }),
    z.strictObject({ purpose: z.literal('header-backup'), ...vaultRef }),
  ]),
  /** Asks the user for files to add to a vault, or for one header backup file to import into a locked vault. */
  'dialog.pickFiles': z.discriminatedUnion('purpose', [
    z.strictObject({ purpose: z.literal('add-files'), ...vaultRef }),
    z.strictObject({ purpose: z.literal('header-restore'), ...vaultRef }),
  ]),

  // ── vaults ──
  /**
   * Creates a vault in a new folder `name` inside the picked folder (handle of purpose 'create-vault') and
   * returns it unlocked. The passphrase crosses here once; the back end wipes its copy after use.
   */
  'vault.create': z.strictObject({
    folder: id,
    name: boundedString(255),
    passphrase,
    kdf: z._default(z.enum(KDF_PRESET_NAMES), 'moderate'),
    contentPadding: z._default(z.enum(CONTENT_PADDING_NAMES), 'padme'),
  }),
  /** Opens (locked) a picked folder (handle of purpose 'open-vault') or a recent vault. */
  'vault.open': z.union([z.strictObject({ folder: id }), z.strictObject({ recentId: id })]),
  'vault.unlock': z.strictObject({ ...vaultRef, passphrase }),
  /**
   * Unlocks with the vault's recovery key as printed (groups of five, any case, spaces or dashes). A typo is
   * INVALID_ARGUMENT (its checksum fails), a key that opens nothing here WRONG_PASSPHRASE.
   */
  'vault.unlockWithRecoveryKey': z.strictObject({
    ...vaultRef,
    recoveryKey: boundedString(RECOVERY_KEY_MAX_LENGTH),
  }),
  /** Stops the vault's jobs, wipes its keys; the vault stays open. Emits `locked` with reason 'user'. */
  'vault.lock': z.strictObject(vaultRef),
  /** Locks and releases the vault; its vaultId is no longer valid. Emits `closed`. */
  'vault.close': z.strictObject(vaultRef),
  'vault.info': z.strictObject(vaultRef),
  /** What an unlocked vault holds, counted in memory: asked after each change (vault.info also walks the disk). */
  'vault.totals': z.strictObject(vaultRef),
  /** The vaults open in this back end (after a renderer reload, say). */
  'vault.listOpen': z.strictObject({}),
  /**
   * Adds a new data key that new data is written with (FORMAT.md 11); nothing stored is re-encrypted. BUSY while
   * a job changes the vault.
   */
  'vault.rotateKey': z.strictObject(vaultRef),

  // ── keys and the activity log: the vault's Security page (issue 14) ──
  /**
   * Changes the passphrase this session was unlocked with. `current` is that passphrase (or, after an unlock with
   * the recovery key, the key), checked against the header first without changing anything: someone at an
   * unlocked, unattended window cannot lock its owner out. `kdf` defaults to the slot's own preset.
   */
  'security.changePassphrase': z.strictObject({
    ...vaultRef,
    current: passphrase,
    passphrase,
    kdf: z.optional(z.enum(KDF_PRESET_NAMES)),
  }),
  /** Adds a passphrase in a new key slot (at most 8); `current` as for changing it. */
  'security.addPassphrase': z.strictObject({
    ...vaultRef,
    current: passphrase,
    passphrase,
    kdf: z._default(z.enum(KDF_PRESET_NAMES), 'moderate'),
  }),
  /** Removes key slot `index` (VaultInfo.slots); never the last one nor the one this session was unlocked with. */
  'security.removeSlot': z.strictObject({ ...vaultRef, index: boundedInt(0, 7) }),
  /**
   * Makes a new recovery key, revoking the previous one; `current` as for changing the passphrase. The answer is
   * the one copy of the key there is: show it once, never log it.
   */
  'security.makeRecoveryKey': z.strictObject({ ...vaultRef, current: passphrase }),
  /** The vault's activity log: entries oldest first, how many the size bound dropped, what is wrong with it. */
  'security.activityLog': z.strictObject(vaultRef),
  /**
   * What the activity log could not record since the last call (the operations themselves are done), and forgets
   * it: the window asks after each change and each job, and shows each as a problem.
   */
  'security.logProblems': z.strictObject(vaultRef),
  /**
   * Saves a copy of the vault header (an offline backup, FORMAT.md 4.7) as a new file in a picked folder (handle
   * of purpose 'header-backup'); never over an existing file. It opens with the passphrases the vault has now.
   */
  'security.exportHeader': z.strictObject({ ...vaultRef, folder: id }),
  /**
   * Puts a header backup (a picked file, handle of purpose 'header-restore') back into a LOCKED vault, as its header
   * and header backup, once `secret` (a passphrase, or the recovery key, of that backup) unlocks it (FORMAT.md 4.7).
   * The vault stays locked; afterwards it opens with the backup's passphrases.
   */
  'security.importHeader': z.strictObject({
    ...vaultRef,
    file: id,
    secretKind: z.enum(['passphrase', 'recovery-key']),
    secret: passphrase,
  }),

  // ── recent vaults (settings store) ──
  /** Recent vaults, most recent first; `missing` is refreshed from disk on each call. */
  'recent.list': z.strictObject({}),
  /** Remembers a picked vault folder (handle of purpose 'open-vault') without opening it. */
  'recent.add': z.strictObject({ folder: id }),
  'recent.forget': z.strictObject({ recentId: id }),
  /** Marks an entry missing (the user saw it gone); it is cleared again when the folder is back. */
  'recent.markMissing': z.strictObject({ recentId: id }),

  // ── browsing ──
  'entries.list': z.strictObject({ ...vaultRef, path: vaultPath }),
  'entries.stat': z.strictObject({ ...vaultRef, path: vaultPath }),
  'entries.search': z.strictObject({
    ...vaultRef,
    query: boundedString(1024),
    limit: z._default(boundedInt(1, 10_000), 1000),
  }),
  /** The folders (only) below `path`, to `depth` levels. */
  'entries.tree': z.strictObject({
    ...vaultRef,
    path: z._default(vaultPath, '/'),
    depth: z._default(boundedInt(1, 256), 256),
  }),

  // ── changes ──
  'entries.mkdir': z.strictObject({ ...vaultRef, path: vaultPath }),
  'entries.rename': z.strictObject({ ...vaultRef, path: vaultPath, newName: boundedString(1024) }),
  'entries.move': z.strictObject({ ...vaultRef, paths: vaultPaths, destination: vaultPath }),
  'entries.remove': z.strictObject({ ...vaultRef, paths: vaultPaths }),

  // ── jobs: each returns a job id at once, then streams `job` events ──
  /**
   * Adds into vault folder `destination` what a handle names: picked files ('add-files'), a picked folder
   * ('add-folder') or dropped files (from registerDroppedFiles). A dropped-files handle is used up by its job.
   */
  'job.add': z.strictObject({
    ...vaultRef,
    source: id,
    destination: z._default(vaultPath, '/'),
    /**
     * What to do with a name already in the folder (see the engine's `OnExisting`); folders merge. 'ask': when
     * any name is taken, start nothing and answer with the taken names, so the window can ask once what to do
     * (the handle is not used up); when none is, add as 'fail' would.
     */
    onExisting: z._default(z.enum(['ask', 'fail', 'skip', 'keep-both', 'replace']), 'fail'),
  }),
  /** Restores vault paths into a picked folder (handle of purpose 'restore-destination'). */
  'job.restore': z.strictObject({
    ...vaultRef,
    paths: vaultPaths,
    destination: id,
    overwrite: z._default(z.boolean(), false),
  }),
  /** Checks the vault's structure, or with `readData` authenticates every stored byte. */
  'job.verify': z.strictObject({ ...vaultRef, readData: z._default(z.boolean(), false) }),
  /**
   * Rotate and re-encrypt (FORMAT.md 11): moves everything stored to the active data key (adding one first when
   * the vault has only one), then removes the older keys. Resumable: a cancelled or interrupted one is continued
   * by starting it again. Ends 'failed' with BUSY while another job changes the vault, READ_ONLY on a read-only
   * vault; damage that keeps the older keys comes as 'problem' events and in the report.
   */
  'job.reencrypt': z.strictObject(vaultRef),
  /** Cancels a running job; it ends with a `job` event of type 'ended', status 'cancelled'. */
  'job.cancel': z.strictObject({ jobId: id }),
  /** Jobs still running (after a renderer reload, say). */
  'job.list': z.strictObject({}),
  /**
   * Shows what a finished restore wrote in the system's file manager (the first restored item, selected). The
   * window names the job, never a path; the back end knows the destination the user picked. Valid until the
   * vault locks or closes. NOT_SUPPORTED where the host cannot ({@link HostCapabilities.showInFolder}).
   */
  'job.showInFolder': z.strictObject({ jobId: id }),

  // ── opening outside the window ──
  /**
   * Writes a decrypted copy of a file into the app's private folder and opens it with the system's default app
   * for its kind. The copy is removed when the vault locks or closes, at quit and at the next start. The
   * renderer never learns where it is. NOT_SUPPORTED where the host cannot open files
   * ({@link HostCapabilities.openWithApp}).
   */
  'entries.openWithApp': z.strictObject({ ...vaultRef, path: vaultPath }),

  // ── preview ──
  /** Up to {@link PREVIEW_MAX_BYTES} plaintext bytes of a file, held in memory only. */
  'preview.read': z.strictObject({
    ...vaultRef,
    path: vaultPath,
    offset: z._default(boundedInt(0, Number.MAX_SAFE_INTEGER), 0),
    length: boundedInt(1, PREVIEW_MAX_BYTES),
  }),
  /**
   * A URL that plays an audio or video file by range reads (decrypted chunk by chunk as the media element asks),
   * valid until `preview.releaseMedia`, the vault's lock or close, or the window's close. Opaque: no path in it.
   */
  'preview.mediaUrl': z.strictObject({ ...vaultRef, path: vaultPath }),
  /** Ends a URL from `preview.mediaUrl` (its preview closed). */
  'preview.releaseMedia': z.strictObject({ url: boundedString(512) }),

  // ── settings ──
  'settings.get': z.strictObject({}),
  /** Changes some settings; returns all of them. */
  'settings.set': z.partial(z.strictObject(settingsShape)),

  // ── app ──
  /**
   * How long one unlock takes on this machine with each KDF preset (a measured estimate, for the create form).
   * Measured once per back end and remembered.
   */
  'app.kdfEstimate': z.strictObject({}),
  /** Problems the back end met on its own (a damaged settings file replaced by defaults, say), to show once. */
  'app.problems': z.strictObject({}),
  /** What this host can do besides the contract's core (Electron and the preview differ). */
  'app.capabilities': z.strictObject({}),
} as const;

export type Channel = keyof typeof requestSchemas;
export type RequestOf<C extends Channel> = z.input<(typeof requestSchemas)[C]>;
/** A request after validation (defaults filled in): what the back end's handlers receive. */
export type ParsedRequestOf<C extends Channel> = z.output<(typeof requestSchemas)[C]>;

/** A picked folder or set of files: an opaque handle and something to show the user. */
export interface PickedHandle {
  readonly handle: string;
  /** For display only (the folder's path, or the file name / "3 files"); never sent back. */
  readonly label: string;
  /** Files picked (1 for a folder). */
  readonly count: number;
}

/** What the host of the back end can do; the window offers only these. */
export interface HostCapabilities {
  /** `entries.openWithApp` works (Electron; the preview where xdg-open exists, or in test mode). */
  readonly openWithApp: boolean;
  /** `job.showInFolder` works (Electron; the preview where xdg-open exists, or in test mode). */
  readonly showInFolder: boolean;
  /** The `contentProtection` setting has an effect (Electron on macOS and Windows; not Linux, not a browser). */
  readonly contentProtection: boolean;
  /**
   * Who shows the notification when a long job ends in the background: 'host' (Electron's main process; the
   * window's own Notification permission is refused there) or 'window' (the preview page, by the web API).
   */
  readonly notifications: 'host' | 'window';
  /**
   * Folders dropped from the file manager can be added (Electron, which reads what is dropped from its path). A
   * browser's page gets no path, so the preview cannot: there "Add folder…" adds a folder.
   */
  readonly folderDrops: boolean;
}

/** An open vault as the window knows it. */
export interface VaultSummary {
  readonly vaultId: string;
  readonly recentId: string;
  /** The vault folder's name. */
  readonly name: string;
  /** Where it is, for display only. */
  readonly location: string;
  readonly locked: boolean;
  readonly readOnly: boolean;
  /**
   * While unlocked, the header in use is older than the vault's data, so every change is refused until
   * `coffer.header.bak` is restored (UnlockResult.headerOlderThanData); false while locked.
   */
  readonly headerOlderThanData: boolean;
}

export interface RecentVault {
  readonly recentId: string;
  readonly name: string;
  /** Where it is, for display only. */
  readonly location: string;
  /** Milliseconds since the epoch. */
  readonly lastOpenedAt: number;
  readonly missing: boolean;
}

/** A folder and the folders below it. */
export interface FolderTree {
  readonly path: string;
  readonly name: string;
  readonly mtime: number;
  readonly children: readonly FolderTree[];
  /** True when the depth limit cut off folders below this one. */
  readonly truncated: boolean;
}

export type JobKind = 'add' | 'restore' | 'verify' | 'reencrypt';

/**
 * What a lock stopped part-way: a job, or a delete still waiting for its turn (`entries.remove`). `begun`: false
 * when it was still waiting for another job on its vault to end, so did nothing (always, for a delete: one that
 * had begun ends whole first).
 */
export interface StoppedWork {
  readonly kind: JobKind | 'delete';
  readonly begun: boolean;
}

export interface JobSummary {
  readonly jobId: string;
  readonly vaultId: string;
  readonly kind: JobKind;
  /** The latest progress, when any was reported. */
  readonly progress?: Progress;
  /**
   * Whether the engine holds it back for other work on its vault (a job, a delete, a read) before it starts
   * (absent: no wait long enough to be told, 250 ms, has come).
   */
  readonly waiting?: boolean;
}

export type JobReport =
  | { readonly kind: 'add'; readonly report: AddReport }
  | { readonly kind: 'restore'; readonly report: RestoreReport }
  | { readonly kind: 'verify'; readonly report: VerifyReport }
  | { readonly kind: 'reencrypt'; readonly report: ReencryptReport };

interface JobEventBase {
  readonly jobId: string;
  readonly vaultId: string;
  readonly kind: JobKind;
}

/**
 * What a job reports, in order: 'started', then 'progress' (coalesced to at most about 20 a second; the last
 * one is always sent), 'problem' per thing skipped or damaged, and exactly one
 * 'ended' — 'done' with the report, 'cancelled' (by the user, or because the vault was locked or closed), or
 * 'failed' with an error. A job's events may arrive before the answer that carries its id (in the preview they
 * come over another connection): keep them by `jobId` until it is known. At any point before 'ended', 'waiting'
 * (true) says the job has waited a quarter of a second for another on its vault to end (a shorter wait is not
 * told), and (false) that its turn came; a re-encryption takes a turn per batch, so it may wait more than once.
 * An add also sends 'committed' when rows it added are in the vault for good, with how many files this add has
 * committed so far: the first a second after its first commit, then at most once a second, and never once it has
 * ended (the end says more).
 */
export type JobEvent = JobEventBase &
  (
    | { readonly type: 'started' }
    | { readonly type: 'waiting'; readonly waiting: boolean }
    | { readonly type: 'progress'; readonly progress: Progress }
    | { readonly type: 'problem'; readonly problem: Problem }
    | { readonly type: 'committed'; readonly filesFinished: number }
    | { readonly type: 'ended'; readonly status: 'done'; readonly result: JobReport }
    | {
        readonly type: 'ended';
        readonly status: 'cancelled';
        /**
         * An add or a restore: how many files it had put in place for good before it stopped (committed to the
         * vault, or published at the destination); absent for the other kinds.
         */
        readonly filesFinished?: number;
      }
    | {
        readonly type: 'ended';
        readonly status: 'failed';
        readonly code: ResultErrorCode;
        readonly message: string;
        /** As for 'cancelled': the files an add or a restore had put in place before it failed. */
        readonly filesFinished?: number;
      }
  );

/** Response types per channel (types only; the back end produces them). */
/** What an unlock found: entries left out or index damage, and a warning when the vault went back (FORMAT 8.8). */
export interface UnlockResult {
  readonly problems: readonly Problem[];
  /**
   * What the user must know about how the vault was opened (the engine's `Vault.warnings`): read from a
   * rolled-back private copy of an index left by a crash on read-only media, or through the header's backup. Given
   * at the first unlock after the open only; Vault details keeps showing them.
   */
  readonly openWarnings: readonly string[];
  readonly rollbackWarning: string | null;
  /**
   * The header in use is older than the vault's data (FORMAT.md 4.7; the engine's `Vault.headerOlderThanData`):
   * until `coffer.header.bak` is imported, every change is refused and entries sealed under the newer key are left
   * out. The window words it: it is not in `problems`.
   */
  readonly headerOlderThanData: boolean;
  /** The root folder's entries, as `entries.list` gives them: the window shows them without asking again. */
  readonly root: readonly VaultEntry[];
}

/** After a key change: what the activity log could not record about it (the change itself is done). */
export interface SecurityChange {
  readonly logProblems: readonly Problem[];
}

/** One activity-log entry as the window shows it (plain data: what, when, how many; no names). */
export interface ActivityLogEntry {
  readonly seq: number;
  /** Milliseconds since the epoch. */
  readonly time: number;
  /** The engine's kind (`unlock`, `add`, `passphrase-changed`…), or `unknown-<n>` from a newer Coffer. */
  readonly kind: string;
  readonly outcome: 'done' | 'problems' | 'cancelled' | 'failed';
  readonly counts: Readonly<Record<string, number>>;
  readonly flags: readonly string[];
}

export interface ActivityLogView {
  /** Oldest first, as stored. */
  readonly entries: readonly ActivityLogEntry[];
  /** Older entries the size bound dropped. */
  readonly dropped: number;
  /** What is wrong with the log (a torn last entry, damaged or reordered entries), in the engine's words. */
  readonly problems: readonly { readonly kind: string; readonly message: string }[];
}

export interface Responses {
  /** null when the user cancelled the dialog. */
  'dialog.pickFolder': PickedHandle | null;
  'dialog.pickFiles': PickedHandle | null;
  'vault.create': VaultSummary;
  'vault.open': VaultSummary;
  /**
   * Index rows that could not be decrypted, and damage of the index as a whole (empty for a healthy vault); and a
   * warning for the user to acknowledge when the vault went backwards since this computer last saw it (a whole
   * folder put back from an older copy, or another copy changed separately), else null.
   */
  'vault.unlock': UnlockResult;
  'vault.unlockWithRecoveryKey': UnlockResult;
  'vault.lock': null;
  'vault.close': null;
  'vault.info': VaultSummary & { readonly info: VaultInfo };
  'vault.totals': VaultTotals;
  'vault.listOpen': readonly VaultSummary[];
  /** The new key's id and the one it replaces as the active key. */
  'vault.rotateKey': { readonly keyId: number; readonly previousKeyId: number };
  'security.changePassphrase': SecurityChange;
  'security.addPassphrase': SecurityChange & { readonly index: number };
  'security.removeSlot': SecurityChange;
  'security.makeRecoveryKey': SecurityChange & { readonly recoveryKey: string };
  'security.activityLog': ActivityLogView;
  'security.logProblems': readonly Problem[];
  /** The new file's name, and the folder it is in (for display only). */
  'security.exportHeader': { readonly fileName: string; readonly folder: string };
  'security.importHeader': SecurityChange;
  'recent.list': readonly RecentVault[];
  'recent.add': RecentVault;
  'recent.forget': null;
  'recent.markMissing': RecentVault;
  'entries.list': readonly VaultEntry[];
  'entries.stat': VaultEntry;
  'entries.search': readonly VaultEntry[];
  'entries.tree': FolderTree;
  'entries.mkdir': VaultEntry;
  'entries.rename': VaultEntry;
  'entries.move': readonly VaultEntry[];
  'entries.remove': { readonly removed: number };
  /** The job started; or, with `onExisting: 'ask'`, the names that stopped it from starting. */
  'job.add': { readonly jobId: string } | { readonly taken: TakenNames };
  'job.restore': { readonly jobId: string };
  'job.verify': { readonly jobId: string };
  'job.reencrypt': { readonly jobId: string };
  'job.cancel': null;
  'job.list': readonly JobSummary[];
  'job.showInFolder': null;
  /** `bytes.length` may be less than asked at the end of the file. */
  'preview.read': { readonly bytes: Uint8Array; readonly fileSize: number };
  'preview.mediaUrl': { readonly url: string };
  'preview.releaseMedia': null;
  'settings.get': Settings;
  'settings.set': Settings;
  /** Milliseconds per preset. */
  'app.kdfEstimate': Readonly<Record<(typeof KDF_PRESET_NAMES)[number], number>>;
  'app.problems': readonly { readonly code: ResultErrorCode; readonly message: string }[];
  'entries.openWithApp': null;
  'app.capabilities': HostCapabilities;
}
export type ResponseOf<C extends Channel> = Responses[C];

/**
 * Codes an error may carry: the engine's, plus NOT_SUPPORTED (this host cannot do it, e.g. a native dialog in the
 * preview without its test flag) and INTERNAL (a bug: the message says so; nothing secret is in it).
 */
export type ResultErrorCode = ErrorCode | 'NOT_SUPPORTED' | 'INTERNAL';

export type Result<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly code: ResultErrorCode; readonly message: string };

/** Events the back end pushes to the window. */
export interface EventPayloads {
  job: JobEvent;
  /**
   * A vault was locked: its keys are wiped and its jobs stopped. `stoppedJobs`: each job the lock stopped part-way,
   * and a `delete` for each delete it stopped before its turn came (so the window can say so once their rows and
   * the status bar, which name files, are gone).
   */
  locked: {
    readonly vaultId: string;
    readonly reason: LockReason;
    readonly stoppedJobs: readonly StoppedWork[];
  };
  /** A vault was closed; its vaultId is no longer valid. */
  closed: { readonly vaultId: string };
}
export type EventName = keyof EventPayloads;

export const channels = Object.keys(requestSchemas) as readonly Channel[];

export function isChannel(name: string): name is Channel {
  return Object.hasOwn(requestSchemas, name);
}

/** What the renderer sees as `window.coffer` in both hosts. */
export interface CofferApi {
  invoke<C extends Channel>(channel: C, request: RequestOf<C>): Promise<Result<ResponseOf<C>>>;
  /** Returns a function that removes the listener. */
  on<E extends EventName>(event: E, listener: (payload: EventPayloads[E]) => void): () => void;
  /**
   * Host-specific: turns dropped `File`s into an opaque handle accepted by `job.add`. In Electron the preload
   * reads each file's path with webUtils.getPathForFile; files without a path (from a browser, or built in a
   * test) and every file in the preview host go as bytes.
   */
  registerDroppedFiles(files: readonly File[]): Promise<Result<{ handle: string; count: number }>>;
}
