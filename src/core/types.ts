/** Public data shapes of the vault engine. Plain data only: safe to send over IPC or print as JSON. */

/** A file or folder in a vault, addressed by its vault path ("/" is the root; "/Photos/a.jpg"). */
export interface VaultEntry {
  /** Absolute vault path, NFC, starting with "/". */
  readonly path: string;
  readonly name: string;
  readonly type: 'file' | 'folder';
  /** Plaintext size in bytes; 0 for folders. */
  readonly size: number;
  /** Modification time, milliseconds since the epoch (the source file's, for added files). */
  readonly mtime: number;
}

/** Progress of a long operation (add, restore, verify). */
export interface Progress {
  readonly filesDone: number;
  readonly filesTotal: number;
  readonly bytesDone: number;
  readonly bytesTotal: number;
  /** The item being worked on: a source path for add, a vault path for restore, verify and re-encryption. */
  readonly current?: string;
}

/** Options shared by long operations. */
export interface JobOptions {
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: Progress) => void;
  /**
   * Hears `true` when the operation must wait for others on the vault to end before it starts (a second add waits
   * for the first; a check waits for everything), and `false` when its turn came after such a wait.
   */
  readonly onWaiting?: (waiting: boolean) => void;
}

/**
 * The path of a {@link Problem} with the vault index as a whole (its commitment, its snapshot, SQLite's own check),
 * not with one entry: readers tell the two apart by it (FORMAT.md 8.7).
 */
export const INDEX_PROBLEM_PATH = '(index)';

/** Something skipped or failed during a long operation that carried on with the rest. */
export interface Problem {
  /** Source path (add) or vault path (restore, verify). */
  readonly path: string;
  readonly code: string;
  readonly message: string;
  /**
   * Restore only: a file was already at the destination before the restore and was left as it was, since
   * replacing was not asked for (code `ALREADY_EXISTS`): what was chosen, not a failure. Absent otherwise.
   */
  readonly kept?: true;
}

/**
 * What an add does with an item whose name (ignoring case) is already taken in its vault folder. A folder added
 * onto a folder always merges: its contents go into the existing folder, and this choice applies to each of them.
 * - `fail`: the item is not added and is reported as a problem (`ALREADY_EXISTS`).
 * - `skip`: the item is not added; counted in {@link AddReport.skipped}, not a problem.
 * - `keep-both`: the item is added under a numbered name ("report (2).pdf").
 * - `replace`: a file replaces the file of that name (its contents are committed before the old ones go); a file
 *   onto a folder or a folder onto a file is not replaced but reported as a problem.
 */
export type OnExisting = 'fail' | 'skip' | 'keep-both' | 'replace';

export const ON_EXISTING_CHOICES: readonly OnExisting[] = ['fail', 'skip', 'keep-both', 'replace'];

export interface AddOptions extends JobOptions {
  /**
   * Called after each file or folder is durably committed to the vault, with its path as it is then. A create,
   * rename or move made during the add has it commit first, so this may also be called from within that call.
   */
  readonly onAdded?: (entry: VaultEntry) => void;
  /** What to do when a name is already taken; `fail` when not given. */
  readonly onExisting?: OnExisting;
}

export interface AddReport {
  /** Files stored, including those that replaced a file or took a numbered name. */
  readonly filesAdded: number;
  readonly foldersAdded: number;
  readonly bytesAdded: number;
  /** Files among `filesAdded` that replaced a file of the same name. */
  readonly replaced: number;
  /** Items not added because their name was taken and `skip` was asked for. */
  readonly skipped: number;
  /** Unreadable files, symlinks and special files, names that cannot be stored, files changed while read. */
  readonly problems: readonly Problem[];
}

export interface RestoreOptions extends JobOptions {
  /** Replace existing files at the destination (atomically); otherwise an existing file is a problem. */
  readonly overwrite?: boolean;
  readonly onRestored?: (entry: VaultEntry, destination: string) => void;
  /**
   * Hears, when the restore's turn comes, the chosen paths as they are named then: what was chosen may have been
   * renamed or moved while the restore waited, and is restored under its name at that moment.
   */
  readonly onStart?: (paths: readonly string[]) => void;
  /**
   * The per-user folder where a restore records its temp files, so a later one can remove what a killed one left;
   * `defaultStateDir()` (COFFER_STATE_DIR, XDG_STATE_HOME, …) when not given.
   */
  readonly stateDir?: string;
}

export interface RestoreReport {
  readonly filesRestored: number;
  readonly foldersRestored: number;
  readonly bytesRestored: number;
  /** Damaged or missing contents, existing destinations, unsafe names: the rest was still restored. */
  readonly problems: readonly Problem[];
}

/** What {@link Vault.reencrypt} did (FORMAT.md section 11). */
export interface ReencryptReport {
  /** The data key everything is now stored under: the active one. */
  readonly keyId: number;
  /** Whether this run added that key first (the header held one key), or continued towards the active one. */
  readonly rotated: boolean;
  /** Data keys removed from the header; empty when something could not be re-encrypted (see `problems`). */
  readonly removedKeyIds: readonly number[];
  readonly filesReencrypted: number;
  readonly bytesReencrypted: number;
  /** Folder and other records sealed again under the new key (files' records are sealed with their contents). */
  readonly recordsResealed: number;
  readonly logEntriesResealed: number;
  /** What still names an older key because it could not be read (damage): the older keys then stay. */
  readonly problems: readonly Problem[];
}

export interface VerifyOptions extends JobOptions {
  /** Also decrypt and authenticate every chunk of every file (slow: reads the whole vault). */
  readonly readData?: boolean;
  /**
   * Bring the contents of unreferenced packs and blob files back into the vault: to the file entry that lost its
   * contents row, or as files under /lost+found (FORMAT.md section 8.5). Needs a writable vault.
   */
  readonly repair?: boolean;
  /** Delete the unreferenced packs and blob files still left (after `repair`, if asked). Ask the user first. */
  readonly deleteUnreferenced?: boolean;
}

/** A pack or blob file in the vault folder. */
export interface StoredFile {
  /** Path relative to the vault folder, "/"-separated: "packs/<id>.pack", "blobs/ab/<id>". */
  readonly path: string;
  readonly size: number;
  /** Why `verify` with `repair` left it where it is. */
  readonly note?: string;
}

export interface VerifyReport {
  readonly ok: boolean;
  readonly filesChecked: number;
  readonly bytesChecked: number;
  /** Damage found; empty when ok. */
  readonly problems: readonly Problem[];
  /**
   * Packs and blob files no index row names (from another copy of the index, a sync service that delivered them
   * before their index, or damage): kept, unless `deleteUnreferenced` removed them.
   */
  readonly unreferenced: readonly StoredFile[];
  /** With `repair`: the files whose contents were brought back, to their own entries or under /lost+found. */
  readonly recovered: readonly VaultEntry[];
  /** With `deleteUnreferenced`: what was deleted. */
  readonly deleted: readonly StoredFile[];
}

/** One key slot as the CLI and the window show it: no salts, nonces or wrapped keys. */
export interface KeySlotInfo {
  /** Position in the header, from 0: what `Vault.removeKeySlot` takes. */
  readonly index: number;
  readonly kind: 'passphrase' | 'recovery-key';
  /** Argon2id parameters of a passphrase slot, with the preset's name (`KdfPreset`) when they are one. */
  readonly kdf?: { readonly opslimit: number; readonly memlimitKiB: number; readonly preset?: string };
  /** Whether this session was unlocked with this slot (absent while locked). */
  readonly unlockedWith?: boolean;
}

/** How many files and folders an unlocked vault holds, and the files' plaintext bytes. */
export interface VaultTotals {
  readonly files: number;
  readonly folders: number;
  readonly totalBytes: number;
}

export interface VaultInfo {
  /** The vault header's version (FORMAT.md section 4): 1 for formats 1.0 and 1.1. */
  readonly formatVersion: number;
  /**
   * The vault format (FORMAT.md section 1, "Versioning"): "1.1" with versioned records and an index commitment,
   * "1.0" for an older vault not yet upgraded (it is upgraded at the first writable unlock).
   */
  readonly format: '1.0' | '1.1';
  readonly vaultId: string;
  readonly locked: boolean;
  readonly readOnly: boolean;
  /** See `Vault.headerOlderThanData`: while true, every change is refused (FORMAT.md 4.7). */
  readonly headerOlderThanData: boolean;
  /** What the user must be told about how the vault was opened (see `Vault.warnings`); usually empty. */
  readonly warnings: readonly string[];
  readonly kdf: readonly { readonly opslimit: number; readonly memlimitKiB: number }[];
  /** How new files' stored sizes are padded (FORMAT.md section 5.7); fixed when the vault was created. */
  readonly contentPadding: 'padme' | 'none';
  /** Every key slot: kind, KDF, and (while unlocked) which one opened. */
  readonly slots: readonly KeySlotInfo[];
  /** Counts and sizes; present only while unlocked. */
  readonly files?: number;
  readonly folders?: number;
  readonly totalBytes?: number;
  /** Bytes the vault folder holds on disk (contents, index, header). */
  readonly storedBytes: number;
  readonly keyIds?: readonly number[];
}
