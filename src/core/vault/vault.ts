import { access, constants, mkdir, readdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';

import { FORMAT_VERSION } from '../crypto/constants.js';
import { DEFAULT_KDF_PRESET, KDF_PRESETS, type KdfPreset } from '../crypto/kdf.js';
import { DEFAULT_CONTENT_PADDING, type ContentPadding } from '../crypto/padding.js';
import {
  changePassphraseSlot,
  describeSlots,
  removeKeySlot,
  replaceRecoverySlot,
  type HeaderChange,
} from '../crypto/key-slots.js';
import { RecoveryKey } from '../crypto/recovery-key.js';
import { loadSodium, type SodiumBackend } from '../crypto/sodium.js';
import {
  addPassphraseSlot,
  createVaultKeys,
  parseVaultHeader,
  unlockVaultKeys,
  type UnlockSecret,
} from '../crypto/vault-header.js';
import { addDekToHeader, keepOnlyActiveDek, nextKeyId } from '../crypto/header-dek.js';
import { SecretKey, type Keyring } from '../crypto/keys.js';
import {
  AlreadyExistsError,
  BusyError,
  CancelledError,
  CofferError,
  IntegrityError,
  InvalidArgumentError,
  NotAVaultError,
  NotFoundError,
  VaultLockedError,
  WrongPassphraseError,
} from '../errors.js';
import { nameKey } from '../../shared/name-key.js';
import { checkName, parseVaultPath } from '../names.js';
import {
  INDEX_PROBLEM_PATH,
  type KeySlotInfo,
  type AddOptions,
  type AddReport,
  type JobOptions,
  type Problem,
  type ReencryptReport,
  type RestoreOptions,
  type RestoreReport,
  type VaultEntry,
  type VaultInfo,
  type VaultTotals,
  type VerifyOptions,
  type VerifyReport,
} from '../types.js';
import { VaultActivity } from './activity.js';
import {
  ActivityLog,
  clearUnlockFailures,
  countFailedUnlock,
  unlockFailures,
  type ActivityLogReport,
} from './activity-log.js';
import type { ActivityEvent, ActivityKind } from './log-entry.js';
import { addPaths, addStreams, takenNames, type AddSource, type StreamedFile } from './add.js';
import { asIoError, fsyncDirectory, makeFolders } from './durable.js';
import {
  keyIdsOnlyInBackup,
  loadVaultHeader,
  repairVaultHeader,
  replaceVaultHeader,
  writeVaultHeader,
} from './header-file.js';
import { IndexDb } from './index-db.js';
import { openIndex } from './index-open.js';
import {
  BLOB_DIR,
  checkVaultFolder,
  HEADER_BACKUP_FILE,
  HEADER_FILE,
  INDEX_FILE,
  PACK_DIR,
  PRIVATE_FOLDER_MODE,
  TEMP_DIR,
} from './layout.js';
import { recoverFromCrash } from './leftovers.js';
import { Reencryption } from './reencrypt.js';
import {
  reclaimReleased,
  releasedBy,
  removeReleased,
  settleReleased,
  type ReleasedContents,
} from './release.js';
import { checkRange, plaintextChunks, type ByteRange } from './read.js';
import { restorePaths } from './restore.js';
import type { IndexState } from './seen-states.js';
import { olderHeaderRefusal, Session } from './session.js';
import { snapshotRoom } from './snapshot.js';
import type { TreeNode } from './tree.js';
import { verifyVault } from './verify.js';
import { compareEntries } from '../../shared/name-order.js';

export interface CreateOptions {
  /** Argon2id strength; default {@link DEFAULT_KDF_PRESET}. */
  readonly kdf?: KdfPreset;
  /** Crypto backend; default: sodium-native, else the WebAssembly build. */
  readonly sodium?: SodiumBackend;
  /**
   * How stored files are padded so their sizes show only approximately (FORMAT.md section 5.7); fixed for the
   * vault's life. Default {@link DEFAULT_CONTENT_PADDING}.
   */
  readonly contentPadding?: ContentPadding;
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
 * Refuses a header that lacks a key the vault's data is sealed under (FORMAT.md 4.7): one exported before a key
 * rotation would make everything written since unreadable. Blobs are not read for this (a vault's blob headers
 * are as many as its files); the key they name is one the index or the log names too, as a key leaves the header
 * only when nothing names it (section 11). A key id below the header's largest that only log entries name does not
 * refuse it: a re-encryption removed that key, and an older header put back since wrote those entries; refusing
 * would keep the newer header, the only one that reads the data, out for the sake of log entries.
 * @throws {@link InvalidArgumentError} naming the key ids the header lacks.
 */
function refuseLackingKeys(db: IndexDb, log: ActivityLog, keyring: Keyring): void {
  const largest = Math.max(...keyring.keyIds);
  const lacking = [
    ...new Set([
      ...keyring.lacking(db.keyIdsNamed()),
      ...keyring.lacking(logKeyIdsNamed(log)).filter((keyId) => keyId > largest),
    ]),
  ].sort((a, b) => a - b);
  if (lacking.length === 0) return;
  throw new InvalidArgumentError(
    `This header does not hold key ${lacking.join(', ')}, under which data in the vault is sealed: ` +
      (lacking.some((keyId) => keyId > largest)
        ? 'it was exported before a key rotation'
        : 'a re-encryption removed that key, and files were added under it since (an older header was put back)') +
      ', and importing it would make that data unreadable. Nothing was written. Import a header that holds every ' +
      'key the vault uses ("coffer info" lists them).',
  );
}

/**
 * The key ids the activity log's whole entries name (FORMAT.md 4.7).
 * @throws {@link IntegrityError} or {@link IoError} when the log cannot be read at all.
 */
function logKeyIdsNamed(log: ActivityLog): Set<number> {
  try {
    return log.keyIdsNamed();
  } catch (error) {
    throw asIoError(error, 'Could not read the activity log');
  }
}

/**
 * Refuses a new key while the vault names a key id above every one the header holds (FORMAT.md section 11): the
 * header is older than the data, and a new key would leave the vault's data split between two headers, neither of
 * which reads all of it (the newer header could then no longer be imported).
 * @throws {@link IntegrityError} (`unknown-key`) naming those key ids; nothing is written. As
 * {@link logKeyIdsNamed} when the log cannot be read.
 */
function refuseKeysAbove(keyring: Keyring, db: IndexDb, log: ActivityLog): void {
  const inIndex = keyring.above(db.keyIdsNamed());
  const above = keyring.above([...inIndex, ...logKeyIdsNamed(log)]);
  if (above.length === 0) return;
  throw olderHeaderRefusal(
    'data',
    above,
    'No new key was made.',
    inIndex.length === 0
      ? ' If there is none, only activity-log entries name the key ("coffer log" lists them): moving ' +
          'activity.log out of the vault folder (keep it as evidence) starts a new log and lets the keys change.'
      : '',
  );
}

/** What an unlock reports: the rows that did not open, and why nothing is written when writes are held back. */
function unlockProblems(session: Session): readonly Problem[] {
  if (!session.writesHeld) return session.damaged;
  const { code, message } = session.writesHeld;
  return [...session.damaged, { path: INDEX_PROBLEM_PATH, code, message }];
}

/**
 * What a header older than the vault's data is (FORMAT.md 4.7): `keyIds` are in `coffer.header.bak` and named by
 * the index or the activity log, but not in the header in use.
 */
function olderHeaderError(keyIds: readonly number[]): IntegrityError {
  return new IntegrityError('unknown-key', {
    subject: `vault's data (key ${keyIds.join(', ')}, held only by ${HEADER_BACKUP_FILE})`,
    advice:
      `The header in use (${HEADER_FILE}) is older than the vault's data: an older copy was put back. Until the ` +
      'newer header is back, nothing is written to the vault (changes are refused, nothing is logged) and the ' +
      `backup is kept: import ${HEADER_BACKUP_FILE} ("coffer header <vault> import <vault>/${HEADER_BACKUP_FILE}", ` +
      'or "Restore a header backup…" on the Unlock screen).',
  });
}

/**
 * An encrypted vault folder. Opening takes the vault's lock (one process at a time); unlocking decrypts the index
 * into memory; locking wipes every key and decrypted record; closing releases the lock.
 *
 * Paths are vault paths: "/" is the root, components are separated by "/".
 *
 * Operations may be called while others run: restores and reads run together and beside an add; adds run one at a
 * time; a delete or verify runs alone. One that may not run yet waits its turn (its signal still cancels it).
 * Creating a folder, renaming and moving are done at once, between an add's steps too (the add commits what it
 * holds first); while a delete or verify runs they are refused with {@link BusyError}.
 *
 * Every change of the header (passphrases, slots, the recovery key, a rotation, a re-encryption) is refused,
 * nothing written, with {@link InvalidArgumentError} when `coffer.header` on disk was replaced since the open, and
 * with {@link IntegrityError} (`unknown-key`) when the unlock found the header in use older than the vault's data
 * (FORMAT.md 4.6, 4.7).
 */
export class Vault {
  readonly dir: string;
  readonly #db: IndexDb;
  readonly #sodium: SodiumBackend;
  /** The header in use: replaced by every header change, once it is on disk. */
  #headerBytes: Buffer;
  /** Header changes run one after another: each starts from the header the previous one wrote. */
  #headerChanges: Promise<unknown> = Promise.resolve();
  #session: Session | undefined;
  /** The session's activity log; undefined while locked or when the vault is read-only. */
  #log: ActivityLog | undefined;
  /** Entries that could not be written to the activity log, until {@link Vault.takeLogProblems} hands them on. */
  readonly #logProblems: Problem[] = [];
  #closed = false;
  readonly #activity = new VaultActivity();
  /** Whether a re-encryption runs: it leaves the activity between its batches, but no other may start. */
  #reencrypting = false;
  /** Settles once the operations a lock or close stopped have ended, the keys are wiped and the index closed. */
  #released: Promise<void> = Promise.resolve();

  /**
   * What the user must be told about how the vault was opened, for example that it was read from a rolled-back
   * copy of its index (FORMAT.md section 8.2), or that the header's backup stood in for a damaged header (4.7).
   * Empty for a vault opened as it is.
   */
  readonly warnings: readonly string[];

  private constructor(
    dir: string,
    db: IndexDb,
    sodium: SodiumBackend,
    headerBytes: Buffer,
    warnings: readonly string[] = [],
  ) {
    this.dir = dir;
    this.warnings = warnings;
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
    let db: IndexDb | undefined;
    try {
      const madeIn = await makeFolders(dirname(resolve(dir)));
      // Private when created here; a folder the user made (and left empty for the vault) keeps its mode.
      await mkdir(dir, { mode: PRIVATE_FOLDER_MODE }).then(
        () => madeIn.push(dirname(resolve(dir))),
        (error: unknown) => {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        },
      );
      for (const sub of [BLOB_DIR, PACK_DIR, TEMP_DIR])
        await mkdir(join(dir, sub), { mode: PRIVATE_FOLDER_MODE });
      // The folders made for the vault (the vault folder itself, say) survive a power cut once the folders they
      // were made in are fsynced: before anything is in them, so that a failure here leaves no vault behind.
      for (const folder of madeIn) await fsyncDirectory(folder);
      // The only place an index is created: opening never makes one (an empty index would show the vault empty).
      db = IndexDb.open(join(dir, INDEX_FILE), {
        readOnly: false,
        create: true,
        vaultId: keys.vaultId,
        contentPadding: options.contentPadding ?? DEFAULT_CONTENT_PADDING,
      });
      // The header goes last: a folder without it is not a vault, so a crash mid-create leaves nothing half-made.
      // Its write fsyncs the vault folder, which makes the entries made before it durable too.
      await writeVaultHeader(dir, headerBytes);
      const vault = new Vault(dir, db, sodium, headerBytes);
      vault.#startSession(keys);
      return vault;
    } catch (error) {
      // Its exclusive lock would otherwise hold the folder until this process ends.
      db?.close();
      keys.wipe();
      throw asIoError(error, `Could not create the vault in "${dir}"`);
    }
  }

  /**
   * Opens a vault folder (locked) and takes its lock. When writable, removes what a crashed operation provably
   * left (FORMAT.md section 8.5); nothing else. A vault left by an interrupted write that is opened read-only is read
   * from a rolled-back private copy of its index, and {@link Vault.warnings} says so (FORMAT.md section 8.2).
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
    checkVaultFolder(dir);
    const header = await loadVaultHeader(dir, sodium);
    const readOnly = options.readOnly === true || !(await isWritable(dir));
    // Refuses a missing, empty or foreign index (IntegrityError) rather than starting a new one; this is also what
    // ties a backup header standing in for a damaged one to this vault.
    const { db, warnings } = await openIndex(dir, { readOnly, vaultId: header.vaultId }).catch(
      (error: unknown) => {
        // A backup of another vault does not stand in: the news is what was wrong with coffer.header (FORMAT.md 4.7).
        if (header.replaced && error instanceof IntegrityError && error.reason === 'wrong-file')
          throw header.replaced;
        throw error;
      },
    );
    const headerWarnings = header.warning === undefined ? [] : [header.warning];
    const vault = new Vault(dir, db, sodium, header.bytes, [...headerWarnings, ...warnings]);
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
   * Unlocks with a passphrase (NFC UTF-8 bytes, see `encodePassphrase`): derives the key (about half a second),
   * unwraps the DEKs, decrypts the index.
   * On a writable vault, then rewrites a damaged or missing header file, or a backup left old by a crash, from the
   * header that unlocked (FORMAT.md 4.7). Unless `coffer.header.bak` holds a key id the index or the activity log
   * names that this header lacks (an older header put back): then nothing is written or logged, every change is refused
   * ({@link Vault.headerOlderThanData}), and the last of the problems returned says so.
   * @returns index rows that could not be decrypted (empty for a healthy vault); they are also in `verify()`.
   * @throws {@link WrongPassphraseError}, {@link KdfLimitError}, {@link IntegrityError}; {@link IoError} when
   * the repaired header file cannot be written (the vault stays locked then).
   */
  async unlock(passphrase: Uint8Array): Promise<readonly Problem[]> {
    return this.#unlockWith(passphrase);
  }

  async #unlockWith(secret: UnlockSecret): Promise<readonly Problem[]> {
    this.#requireOpen();
    if (this.#session) return unlockProblems(this.#session);
    // Unlocking a writable vault may write its index, header and log: the folder is checked again first (8.1).
    if (!this.readOnly) checkVaultFolder(this.dir);
    let keys;
    let room;
    try {
      // The index's vault id was checked against this header when the vault was opened.
      const unlocking = unlockVaultKeys(this.#sodium, this.#headerBytes, secret);
      // With the native libsodium, a passphrase's key derivation runs on libuv's thread pool: this thread meanwhile
      // reads what loading the tree needs, and readies memory for the snapshot's plaintext. Neither throws, so
      // `unlocking` is always awaited (and its keys wiped).
      room = snapshotRoom(this.#db.readAheadForUnlock());
      keys = await unlocking;
    } catch (error) {
      if (error instanceof WrongPassphraseError && !this.readOnly) this.#countFailedUnlock();
      throw error;
    }
    // Under a header older than the data nothing is written, the repair included (FORMAT.md 4.7).
    let writesHeld: IntegrityError | undefined;
    if (!this.readOnly) {
      try {
        const keysOnlyInBackup = await this.#keysOnlyInBackupNamed(keys);
        if (keysOnlyInBackup.length > 0) writesHeld = olderHeaderError(keysOnlyInBackup);
        else await repairVaultHeader(this.dir, this.#sodium, this.#headerBytes);
      } catch (error) {
        keys.wipe();
        throw error;
      }
    }
    const session = this.#startSession(keys, room, writesHeld);
    if (this.#log) {
      // The failures are cleared only once the entry that counts them is in the log.
      const failedAttempts = unlockFailures(this.dir);
      if (this.#record({ kind: 'unlock', counts: { failedAttempts } }) && failedAttempts > 0) {
        try {
          clearUnlockFailures(this.dir);
        } catch (error) {
          this.#logProblem(error);
        }
      }
    }
    return unlockProblems(session);
  }

  /**
   * The key ids `coffer.header.bak` holds and the header in use lacks that the index or the activity log names
   * (FORMAT.md 4.7). They are asked only when the backup holds such ids (after a crash mid-change, or an older
   * header put back). The log counts as the index does: after a rotation with nothing added yet, only its entries
   * may be under the new key, and a repaired backup would leave them unreadable for good. A log that cannot be
   * read counts as naming them all.
   */
  async #keysOnlyInBackupNamed(keys: Session['keys']): Promise<number[]> {
    const onlyInBackup = await keyIdsOnlyInBackup(this.dir, this.#sodium, this.#headerBytes);
    if (onlyInBackup.length === 0) return [];
    let logNamed: Iterable<number>;
    try {
      logNamed = this.#activityLogUnder(keys).keyIdsNamed();
    } catch {
      // A log that cannot be read may name any of them: holding writes back loses nothing, a repair might.
      return onlyInBackup;
    }
    const named = new Set([...this.#db.keyIdsNamed(), ...logNamed]);
    return onlyInBackup.filter((keyId) => named.has(keyId));
  }

  /**
   * Counts a wrong passphrase in the vault folder (FORMAT.md section 10.5): it cannot be sealed without the key, so
   * the next unlock seals the count into its log entry. A failure to count is not the user's concern here: the
   * wrong passphrase is.
   */
  #countFailedUnlock(): void {
    try {
      countFailedUnlock(this.dir);
    } catch {
      // Best effort, and said so in FORMAT.md 10.5: the count is unauthenticated and advisory.
    }
  }

  /**
   * Unlocks with the recovery key (see {@link Vault.createRecoveryKey}), printed (spaces, dashes and case do not
   * matter) or already parsed with {@link RecoveryKey.parse} (the caller still owns and wipes it). No key
   * derivation runs. As {@link Vault.unlock} otherwise.
   * @throws {@link InvalidArgumentError} for a malformed key or a typo (its checksum fails), before anything is
   * tried; {@link WrongPassphraseError} for a well-formed key that opens nothing here (another vault's, or revoked).
   */
  async unlockWithRecoveryKey(recoveryKey: string | RecoveryKey): Promise<readonly Problem[]> {
    if (recoveryKey instanceof RecoveryKey) return this.#unlockWith(recoveryKey);
    const key = RecoveryKey.parse(this.#sodium, recoveryKey);
    try {
      return await this.#unlockWith(key);
    } finally {
      key.wipe(this.#sodium);
    }
  }

  /** The key slots of the header in use, in stored order; `unlockedWith` marks the one that opened, when unlocked. */
  keySlots(): KeySlotInfo[] {
    this.#requireOpen();
    return describeSlots(
      parseVaultHeader(this.#sodium, this.#headerBytes),
      this.#session?.keys.openedSlotSalt,
    );
  }

  /**
   * Changes the passphrase this session was unlocked with: only its slot is rewritten, with a new salt and
   * optionally another KDF preset (default: the slot's own), and the header written atomically, so a crash leaves
   * the vault opening with exactly one of the old and new passphrases. Takes one key derivation.
   * @throws {@link InvalidArgumentError} when unlocked with the recovery key, or for an empty passphrase;
   * {@link KdfLimitError} over the budget; {@link ReadOnlyVaultError}; {@link IoError}. Nothing changes then.
   */
  async changePassphrase(newPassphrase: Uint8Array, options: { kdf?: KdfPreset } = {}): Promise<void> {
    await this.#changeHeader(async (session, headerBytes) => {
      const current = describeSlots(
        parseVaultHeader(this.#sodium, headerBytes),
        session.keys.openedSlotSalt,
      ).find((slot) => slot.unlockedWith)?.kdf;
      const kdf = options.kdf ? KDF_PRESETS[options.kdf] : (current ?? KDF_PRESETS[DEFAULT_KDF_PRESET]);
      return changePassphraseSlot(this.#sodium, session.keys, headerBytes, newPassphrase, {
        opslimit: kdf.opslimit,
        memlimitKiB: kdf.memlimitKiB,
      });
    }, 'passphrase-changed');
  }

  /**
   * Adds a passphrase in a new key slot (at most 8 slots), with its own KDF preset (default
   * {@link DEFAULT_KDF_PRESET}).
   * @returns the new slot's index.
   * @throws {@link InvalidArgumentError} when all 8 slots are taken or for an empty passphrase;
   * {@link KdfLimitError} when the slots' total key-derivation work would exceed the budget (FORMAT.md 3);
   * {@link ReadOnlyVaultError}; {@link IoError}. Nothing changes then.
   */
  async addPassphrase(passphrase: Uint8Array, options: { kdf?: KdfPreset } = {}): Promise<number> {
    await this.#changeHeader(
      async (session, headerBytes) => ({
        headerBytes: await addPassphraseSlot(
          this.#sodium,
          session.keys,
          headerBytes,
          passphrase,
          KDF_PRESETS[options.kdf ?? DEFAULT_KDF_PRESET],
        ),
        openedSlotSalt: session.keys.openedSlotSalt,
      }),
      'slot-added',
    );
    return this.keySlots().length - 1;
  }

  /**
   * Removes key slot `index` (see {@link Vault.keySlots}).
   * @throws {@link InvalidArgumentError} for an index with no slot, the last slot, or the slot this session was
   * unlocked with; {@link ReadOnlyVaultError}; {@link IoError}. Nothing changes then.
   */
  async removeKeySlot(index: number): Promise<void> {
    await this.#changeHeader(
      async (session, headerBytes) => ({
        headerBytes: await removeKeySlot(this.#sodium, session.keys, headerBytes, index),
        openedSlotSalt: session.keys.openedSlotSalt,
      }),
      'slot-removed',
    );
  }

  /**
   * Makes a new recovery key and revokes the previous one (a vault has at most one). Show the key once; Coffer
   * keeps no copy. No key derivation runs.
   * @returns the printed key: 8 groups of 5 characters.
   * @throws {@link InvalidArgumentError} when all 8 slots hold passphrases; {@link ReadOnlyVaultError};
   * {@link IoError}. Nothing changes then, and the old recovery key still works.
   */
  async createRecoveryKey(): Promise<string> {
    let printed = '';
    await this.#changeHeader(async (session, headerBytes) => {
      const change = await replaceRecoverySlot(this.#sodium, session.keys, headerBytes);
      printed = change.recoveryKey.format(this.#sodium);
      change.recoveryKey.wipe(this.#sodium);
      return change;
    }, 'recovery-key-made');
    return printed;
  }

  /** The bytes of the header in use, for an offline backup (FORMAT.md 4.7: it keeps working with today's slots). */
  exportHeader(): Buffer {
    this.#unlocked();
    return Buffer.from(this.#headerBytes);
  }

  /**
   * Puts an exported header back into a vault folder whose header is damaged or lost (or to undo slot changes):
   * checks that it is a whole header, of this vault (its index's vault id), and that `secret` unlocks it with its MAC;
   * only then writes it as the header and its backup, and records the import in the activity log (FORMAT.md 10.2,
   * `header-imported`), sealed under the keys the imported header unlocked. Takes the vault's lock meanwhile.
   * @returns the problem of an activity-log entry that could not be written (the import itself is done then);
   * empty when it was recorded.
   * @throws {@link IntegrityError} (`header-damaged`, `truncated`, `malformed`, `wrong-file` for another vault's
   * header, `header-modified`), {@link NotAVaultError}, {@link UnsupportedFormatError}, {@link WrongPassphraseError},
   * {@link KdfLimitError}, {@link VaultInUseError}, {@link IoError}; {@link InvalidArgumentError} for a header that
   * lacks a key id the index or the activity log names (one exported before a key rotation). Nothing is written
   * then.
   */
  static async importHeader(
    dir: string,
    headerBytes: Buffer,
    secret: UnlockSecret,
    options: { sodium?: SodiumBackend } = {},
  ): Promise<readonly Problem[]> {
    const sodium = options.sodium ?? (await loadSodium());
    checkVaultFolder(dir);
    const { vaultId, slots } = parseVaultHeader(sodium, headerBytes);
    const db = IndexDb.open(join(dir, INDEX_FILE), { readOnly: false, create: false, vaultId });
    try {
      const keys = await unlockVaultKeys(sodium, headerBytes, secret);
      try {
        refuseLackingKeys(db, new ActivityLog(dir, { sodium, keyring: keys.keyring, vaultId }), keys.keyring);
        await writeVaultHeader(dir, headerBytes);
        // Only once the header is durable: the entry says it was imported.
        try {
          new ActivityLog(dir, { sodium, keyring: keys.keyring, vaultId }).append({
            kind: 'header-imported',
            counts: { slots: slots.length },
          });
          return [];
        } catch (error) {
          return [logProblemOf(error)];
        }
      } finally {
        keys.wipe();
      }
    } finally {
      db.close();
    }
  }

  /** Runs one header change after the previous one, writes its result and makes it the header in use. */
  async #changeHeader(
    change: (session: Session, headerBytes: Buffer) => Promise<HeaderChange>,
    logged?: ActivityKind,
  ): Promise<void> {
    const session = this.#unlocked();
    session.requireWritable();
    const run = this.#headerChanges.then(async () => {
      checkVaultFolder(this.dir);
      const result = await change(session, this.#headerBytes);
      await replaceVaultHeader(this.dir, this.#sodium, this.#headerBytes, result.headerBytes);
      this.#headerBytes = result.headerBytes;
      session.keys.openedSlotSalt = result.openedSlotSalt;
      if (logged) {
        const slots = parseVaultHeader(this.#sodium, result.headerBytes).slots.length;
        this.#record({ kind: logged, counts: { slots } });
      }
    });
    this.#headerChanges = run.catch(() => undefined);
    await run;
  }

  #startSession(keys: Session['keys'], room?: Buffer, writesHeld?: IntegrityError): Session {
    const session = new Session(this.dir, this.#db, this.#sodium, keys, writesHeld);
    try {
      session.load(room);
    } catch (error) {
      session.wipe();
      throw error;
    }
    this.#session = session;
    // Not while writes are held back either: entries would be sealed under a key the newer header may have retired.
    this.#log = session.writable ? this.#activityLogUnder(keys) : undefined;
    return session;
  }

  /** The vault's activity log, opened and sealed under `keys`. */
  #activityLogUnder(keys: Session['keys']): ActivityLog {
    return new ActivityLog(this.dir, { sodium: this.#sodium, keyring: keys.keyring, vaultId: keys.vaultId });
  }

  /**
   * Appends an entry to the activity log. A failure to write it (a full disk, a damaged log) does not undo or fail
   * the operation it records: it is kept for {@link Vault.takeLogProblems}. Nothing is recorded in a read-only
   * vault, nor once the keys are wiped (an operation stopped by locking).
   * @returns whether the entry was written.
   */
  #record(event: ActivityEvent): boolean {
    const log = this.#log;
    if (!log) return false;
    try {
      // A restore, which checks nothing else in the vault folder, writes here too (and a rewrite goes through tmp/).
      checkVaultFolder(this.dir);
      log.append(event);
      return true;
    } catch (error) {
      if (!(error instanceof VaultLockedError)) this.#logProblem(error);
      return false;
    }
  }

  #logProblem(error: unknown): void {
    this.#logProblems.push(logProblemOf(error));
  }

  /**
   * Activity-log entries that could not be written since the last call (each a problem to show: the operation
   * itself is done), and forgets them.
   */
  takeLogProblems(): Problem[] {
    return this.#logProblems.splice(0);
  }

  /**
   * The activity log (FORMAT.md section 10): every entry that opens, oldest first, how many older ones the size
   * bound dropped, and what is wrong with it (a torn last entry after a crash; entries damaged, removed, reordered
   * or replayed).
   * @throws {@link IntegrityError} when `activity.log` is not this vault's log or not a regular file.
   * @throws {@link UnsupportedFormatError} for a log written by a newer Coffer.
   */
  activityLog(): ActivityLogReport {
    const session = this.#unlocked();
    try {
      return this.#activityLogUnder(session.keys).read();
    } catch (error) {
      throw asIoError(error, 'Could not read the activity log');
    }
  }

  get locked(): boolean {
    return this.#session === undefined;
  }

  /**
   * Reads what loading the tree at unlock reads before it needs a key (the sealed snapshot, ciphertext only, and the
   * count of index rows) while the vault is locked, so that the unlock does not wait for it: the window asks when a
   * vault is opened, while its passphrase is being typed (an unlock also reads ahead during a passphrase's key
   * derivation, but a recovery key needs none, and a first read can take longer than the derivation). A value
   * that cannot be read is left for the unlock to report.
   * @throws {@link InvalidArgumentError} after {@link Vault.close}.
   */
  readAhead(): void {
    this.#requireOpen();
    this.#db.readAheadForUnlock();
  }

  get readOnly(): boolean {
    return this.#db.readOnly;
  }

  /**
   * Whether the unlock found the header in use older than the vault's data (FORMAT.md 4.7): until the newer header
   * is imported, every change is refused and nothing is written. False while locked: the unlock decides it.
   */
  get headerOlderThanData(): boolean {
    return this.#session?.writesHeld !== undefined;
  }

  /**
   * Checks, before work that would change the vault is begun, that it may: unlocked, writable, nothing held back.
   * @throws {@link VaultLockedError} when locked; {@link ReadOnlyVaultError} when the vault cannot be written;
   * {@link IntegrityError} (`unknown-key`) when the header in use is older than the vault's data
   * ({@link Vault.headerOlderThanData}).
   */
  requireWritable(): void {
    this.#unlocked().requireWritable();
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
    this.#log = undefined;
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

  /**
   * Which state of the index this is (its generation and a fingerprint of its sealed commitment), for the rollback
   * memory kept outside the vault ({@link SeenStates}). Read while open, locked or not; meaningful after an unlock
   * has checked the commitment.
   */
  indexState(): IndexState {
    this.#requireOpen();
    const sealed = this.#db.sealedCommitment();
    return {
      vaultId: parseVaultHeader(this.#sodium, this.#headerBytes).vaultId.toString('hex'),
      generation: this.#db.generation().toString(),
      fingerprint: sealed ? this.#sodium.blake2b(32, sealed).toString('hex') : '',
      foundAsFormat10: !this.#db.committed || this.#session?.upgradedIndex === true,
    };
  }

  /** Format, KDF parameters and, while unlocked, counts and sizes. */
  async info(): Promise<VaultInfo> {
    this.#requireOpen();
    const header = parseVaultHeader(this.#sodium, this.#headerBytes);
    const base = {
      formatVersion: FORMAT_VERSION,
      format: this.#db.committed ? ('1.1' as const) : ('1.0' as const),
      vaultId: header.vaultId.toString('hex'),
      locked: this.locked,
      readOnly: this.readOnly,
      headerOlderThanData: this.headerOlderThanData,
      warnings: this.warnings,
      kdf: header.slots.flatMap((slot) => (slot.kind === 'passphrase' ? [slot.kdf] : [])),
      slots: describeSlots(header, this.#session?.keys.openedSlotSalt),
      contentPadding: this.#db.contentPadding(),
      storedBytes: await folderSize(this.dir),
    };
    const session = this.#session;
    if (!session) return base;
    return { ...base, ...this.totals(), keyIds: session.keys.keyring.keyIds };
  }

  /**
   * The counts and plaintext size of what the vault holds, from memory (unlike {@link Vault.info}, which also
   * measures the vault folder on disk): cheap enough to ask after each commit of a running add.
   * @throws {@link VaultLockedError} when locked.
   */
  totals(): VaultTotals {
    const session = this.#unlocked();
    let files = 0;
    let folders = 0;
    let totalBytes = 0;
    for (const node of session.tree.values()) {
      if (node.type === 'file') {
        files++;
        totalBytes += node.size;
      } else folders++;
    }
    return { files, folders, totalBytes };
  }

  /**
   * The entries of a folder, folders first, then by name.
   * @throws {@link NotFoundError} when the path does not exist; {@link InvalidArgumentError} when it is a file.
   */
  list(folderPath = '/'): VaultEntry[] {
    const session = this.#unlocked();
    const folder = session.resolveFolder(folderPath);
    const path = session.tree.pathOf(folder);
    return sortNodes(session.tree.childrenOf(folder?.id ?? null)).map((node) => session.entry(node, path));
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
    const path = session.tree.pathOf(folder);
    return sortNodes(folders).map((node) => session.entry(node, path));
  }

  /** Every entry below a folder, depth first. */
  listRecursive(folderPath = '/'): VaultEntry[] {
    const session = this.#unlocked();
    const out: VaultEntry[] = [];
    const visit = (parent: TreeNode | null, parentPath: string): void => {
      for (const node of sortNodes(session.tree.childrenOf(parent?.id ?? null))) {
        const entry = session.entry(node, parentPath);
        out.push(entry);
        if (node.type === 'folder') visit(node, entry.path);
      }
    };
    const folder = session.resolveFolder(folderPath);
    visit(folder, session.tree.pathOf(folder));
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
   * @throws {@link BusyError} while a delete or verify runs, or an add is being stopped.
   * @throws {@link IoError} when the index cannot be written (the add that runs, if any, ends failed with it).
   */
  mkdir(path: string): VaultEntry {
    const session = this.#readyToChangeAtOnce();
    checkVaultFolder(this.dir);
    const parts = parseVaultPath(path);
    if (parts.length === 0) return this.stat('/');
    this.#besideAdd(session);
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
    if (created.length > 0) this.#record({ kind: 'create-folder', counts: { folders: created.length } });
    return parent ? session.entry(parent) : this.stat('/');
  }

  /**
   * Renames a file or folder in place.
   * @throws {@link NotFoundError}, {@link AlreadyExistsError}, {@link InvalidNameError}.
   * @throws {@link BusyError} while a delete or verify runs, or an add is being stopped.
   * @throws {@link IoError} when the index cannot be written (the add that runs, if any, ends failed with it).
   */
  rename(path: string, newName: string): VaultEntry {
    const session = this.#readyToChangeAtOnce();
    checkVaultFolder(this.dir);
    // Checked before the add that runs is asked to commit; found after, when a row it held is in the vault.
    parseVaultPath(path);
    const name = checkName(newName);
    this.#besideAdd(session);
    const node = session.resolve(path);
    if (!node) throw new InvalidArgumentError('The root folder cannot be renamed.');
    const renamed = this.#rewrite(session, node, { name, parent: node.parent });
    session.noteMoved([node.id]);
    return renamed;
  }

  /**
   * Moves files or folders into another folder, all or nothing.
   * @throws {@link NotFoundError}, {@link AlreadyExistsError}, {@link InvalidArgumentError} (a folder into itself).
   * @throws {@link BusyError} while a delete or verify runs, or an add is being stopped.
   * @throws {@link IoError} when the index cannot be written (the add that runs, if any, ends failed with it).
   */
  move(paths: readonly string[], destinationFolder: string): VaultEntry[] {
    const session = this.#readyToChangeAtOnce();
    checkVaultFolder(this.dir);
    // Checked before the add that runs is asked to commit; found after, as in rename.
    for (const path of [destinationFolder, ...paths]) parseVaultPath(path);
    this.#besideAdd(session);
    const destination = session.resolveFolder(destinationFolder);
    const nodes = paths.map((path) => {
      const node = session.resolve(path);
      if (!node) throw new InvalidArgumentError('The root folder cannot be moved.');
      if (destination && node.type === 'folder' && session.tree.isAncestor(node, destination)) {
        throw new InvalidArgumentError(`"${path}" cannot be moved into itself.`);
      }
      return node;
    });
    const rows = nodes.map((node) => {
      const id = Buffer.from(node.id, 'hex');
      return session.seal(id, { ...node, parent: destination?.id ?? null }, session.nextVersion(id));
    });
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
    session.noteMoved(nodes.map((node) => node.id));
    this.#record({ kind: 'move', counts: { entries: rows.length } });
    return rows.map((row) => session.entry(row.node));
  }

  /**
   * The session, for a change made at once (create a folder, rename, move): they run beside reads, and beside an
   * add (see {@link Vault.#besideAdd}); never beside a delete or verify.
   * @throws {@link ReadOnlyVaultError}; {@link BusyError} while a delete or verify runs.
   */
  #readyToChangeAtOnce(): Session {
    const session = this.#unlocked();
    session.requireWritable();
    this.#activity.requireNoRewriteRunning();
    return session;
  }

  /**
   * Has the add that runs, if any, commit what it holds, once a change made at once has checked what it was given
   * and is about to write (see {@link Session.commitPendingRows}).
   * @throws {@link BusyError} while an add is ending; an {@link IoError} when the add's commit fails.
   */
  #besideAdd(session: Session): void {
    if (!session.commitPendingRows()) throw new BusyError('ending an add', 'Try again in a moment.');
  }

  #rewrite(session: Session, node: TreeNode, change: { name: string; parent: string | null }): VaultEntry {
    const id = Buffer.from(node.id, 'hex');
    const row = session.seal(id, { ...node, ...change }, session.nextVersion(id));
    session.tree.replace(row.node);
    try {
      this.#db.transaction(() => {
        this.#db.putNode(row);
      });
    } catch (error) {
      session.tree.replace(node);
      throw asIoError(error, 'Could not rename');
    }
    this.#record({ kind: 'rename', counts: { entries: 1 } });
    return session.entry(row.node);
  }

  /**
   * Deletes files and folders (folders with everything in them): the index first, in one transaction, then the
   * space is reclaimed, so a crash never leaves an entry whose contents are gone. What is deleted is what the
   * paths name when it is called: renamed or moved while the delete waits its turn, it is still what goes.
   * @throws {@link NotFoundError} when a path does not exist, or what it named was replaced before the delete's turn
   * came (nothing is deleted then).
   * @throws {@link IntegrityError} when the vault folder breaks FORMAT.md section 8.1 (nothing is deleted then).
   */
  async remove(paths: readonly string[]): Promise<number> {
    const session = this.#unlocked();
    session.requireWritable();
    const chosen = session.findAgainLater(paths);
    return this.#activity.run('rewrite', 'deleting', undefined, async () => {
      checkVaultFolder(this.dir);
      return this.#remove(session, chosen());
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
    this.#record({ kind: 'delete', counts: { entries: nodes.length } });
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
    return this.#adding(destinationFolder, options, (session, destination, running, calledAt) =>
      addPaths(session, sources, destination, running, calledAt),
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
    return this.#adding(destinationFolder, options, (session, destination, running, calledAt) =>
      addStreams(session, files, destination, running, calledAt),
    );
  }

  /**
   * Runs an add in its turn (adds run one at a time), with the signal that a lock or close also aborts, into the
   * folder `destinationFolder` names now (renamed or moved while the add waits, still that folder).
   */
  #adding(
    destinationFolder: string,
    options: AddOptions,
    add: (session: Session, destination: string, options: AddOptions, calledAt: number) => Promise<AddReport>,
  ): Promise<AddReport> {
    const session = this.#unlocked();
    session.requireWritable();
    return this.#loggedJob(
      'add',
      (report) => ({ files: report.filesAdded, folders: report.foldersAdded, bytes: report.bytesAdded }),
      (count) => {
        const destination = session.findAgainLater([destinationFolder]);
        // What "replace" answers for is what was in the way now, not what a rename puts there while it waits.
        const calledAt = session.changeCount;
        return this.#activity
          .run('change', 'adding files', options, async (signal) => {
            checkVaultFolder(this.dir);
            const onAdded = (entry: VaultEntry): void => {
              count(entry);
              options.onAdded?.(entry);
            };
            const [into = '/'] = destination();
            return add(session, into, { ...options, signal, onAdded }, calledAt);
          })
          .finally(() => this.#settleAfterReads(session));
      },
    );
  }

  /**
   * Frees the space of what an add released by replacing files (whether it ended done, failed or cancelled). A read
   * running now may have chosen a replaced file before the add committed its successor and still reads it (see
   * {@link Session.releases}), so this waits for the reads running now; nothing asked for meanwhile waits for it.
   * Waited for when it can run at once (so the command line's add ends with its space reclaimed).
   */
  async #settleAfterReads(session: Session): Promise<void> {
    const released = session.releases.take();
    if (released.length === 0) return;
    const reading = this.#activity.readsRunning();
    if (reading === undefined) await this.#freeReplaced(session, released);
    else void reading.then(() => this.#freeReplaced(session, released));
  }

  /**
   * Removes the files the released contents leave no row naming, in a turn of its own beside reads and an add but
   * never under a verify; then compacts the packs they left less than half used if the vault is free at that
   * moment (otherwise the next `verify` that finds no damage does). A lock first leaves the files to the intents the
   * add recorded, which the next open settles. Never throws.
   * @returns once done; at once if its turn must wait (behind a delete or verify), which it then does.
   */
  #freeReplaced(session: Session, released: readonly ReleasedContents[]): Promise<void> {
    session.releases.letGo(released);
    if (this.#session !== session) return Promise.resolve();
    const turn = { waits: false };
    const freeing = this.#activity
      .run(
        'read',
        FREEING_REPLACED,
        {
          onWaiting: (waiting) => {
            turn.waits ||= waiting;
          },
        },
        () => removeReleased(session, released),
      )
      .then(() => {
        if (this.#session !== session) return;
        return this.#activity.runIfFree(
          'rewrite',
          FREEING_REPLACED,
          { busyNext: 'Try again in a moment.' },
          () => reclaimReleased(session, released),
        );
      })
      .catch(() => undefined);
    return turn.waits ? Promise.resolve() : freeing;
  }

  /**
   * Runs an add or a restore and logs it: with its report's counts when it ends, or with what it had reported done
   * when it fails or is cancelled.
   */
  async #loggedJob<R extends { readonly problems: readonly Problem[] }>(
    kind: 'add' | 'restore',
    counts: (report: R) => { files: number; folders: number; bytes: number },
    run: (count: (entry: VaultEntry) => void) => Promise<R>,
  ): Promise<R> {
    const done = { files: 0, folders: 0, bytes: 0 };
    const count = (entry: VaultEntry): void => {
      if (entry.type === 'folder') done.folders++;
      else {
        done.files++;
        done.bytes += entry.size;
      }
    };
    let report: R;
    try {
      report = await run(count);
    } catch (error) {
      this.#record({ kind, outcome: error instanceof CancelledError ? 'cancelled' : 'failed', counts: done });
      throw error;
    }
    const problems = report.problems.length;
    this.#record({
      kind,
      outcome: problems > 0 ? 'problems' : 'done',
      counts: { ...counts(report), problems },
    });
    return report;
  }

  /** Restores files and folders to a folder on disk. See {@link restorePaths}. */
  async restore(
    paths: readonly string[],
    destinationDir: string,
    options: RestoreOptions = {},
  ): Promise<RestoreReport> {
    const session = this.#unlocked();
    return this.#loggedJob(
      'restore',
      (report) => ({
        files: report.filesRestored,
        folders: report.foldersRestored,
        bytes: report.bytesRestored,
      }),
      (count) => {
        // Renamed or moved while the restore waits, what was chosen is still what is restored.
        const chosen = session.findAgainLater(paths);
        return this.#activity.run('read', 'restoring', options, (signal) => {
          const named = chosen();
          options.onStart?.(named);
          return restorePaths(session, named, destinationDir, {
            ...options,
            signal,
            onRestored: (entry, destination) => {
              count(entry);
              options.onRestored?.(entry, destination);
            },
          });
        });
      },
    );
  }

  /**
   * A file's plaintext, or a byte range of it, as a stream; only authenticated bytes are emitted. From its first
   * read until it ends or is destroyed it counts as a running read: a delete or verify waits for it, so destroy a
   * stream that will not be read to the end. Locking destroys it with {@link CancelledError}, at once, whether or
   * not it is being read; one first read after a lock fails with {@link VaultLockedError}, and one after the file
   * was deleted or replaced (by an add) with {@link NotFoundError}; one whose stored file cannot be read with
   * {@link IoError}, and damage with {@link IntegrityError}.
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
        // As the tree has it at its turn: a re-encryption meanwhile moved its contents (same entry, same bytes, new
        // file id); deleted or replaced by an add, its contents may have gone with it.
        const current = session.tree.get(node.id);
        if (!current) throw goneSinceOpened(path);
        // A paused reader asks for nothing more, so only destroying the stream ends it (and its turn) at a lock.
        signal.addEventListener(
          'abort',
          () => {
            stream.destroy(new CancelledError());
          },
          { once: true },
        );
        return plaintextChunks(session, current, range, signal);
      }),
      // Bytes, not objects: at most about a megabyte is decrypted ahead of the reader.
      { objectMode: false, highWaterMark: 1024 * 1024 },
    );
    return stream;
  }

  /**
   * Rotates the data key (FORMAT.md section 2): a new DEK, with the next key id, is added to the header as the last
   * one, and new data (contents, records, the tree snapshot, log entries) is written under it. Nothing stored is
   * re-encrypted: what older keys sealed still reads. The header is replaced atomically, so a crash leaves the old
   * header or the new one, and data is written under the new key only once the new header is durable.
   * @returns the new key id and the one it replaces as the active key.
   * @throws {@link BusyError} while an add, delete or verify runs (reads wait for it instead).
   * @throws {@link ReadOnlyVaultError}; {@link IntegrityError} when the header's MAC no longer verifies, the vault
   * names a key id above every one the header holds (an older header put back), or the activity log cannot be
   * read; {@link InvalidArgumentError} when the header has used every key id.
   * @throws {@link IoError} when the header cannot be written or the log read (the header is then unchanged).
   */
  async rotateKey(): Promise<{ keyId: number; previousKeyId: number }> {
    const session = this.#unlocked();
    session.requireWritable();
    // Refused rather than queued behind it: the user asked for a rotation now, not after an add.
    this.#requireNoJob();
    return this.#activity.run('rewrite', 'rotating the data key', undefined, async () => {
      checkVaultFolder(this.dir);
      return this.#rotate(session);
    });
  }

  /** Refuses while another change or a re-encryption (between its batches, too) runs. */
  #requireNoJob(): void {
    if (this.#reencrypting) throw new BusyError(REENCRYPTING);
    this.#activity.requireNoChangeRunning();
  }

  /** Adds a new DEK as the active one (FORMAT.md section 11), under the caller's write access. */
  async #rotate(session: Session): Promise<{ keyId: number; previousKeyId: number }> {
    const keyring = session.keys.keyring;
    const previousKeyId = keyring.activeKeyId;
    const dek = SecretKey.generate(this.#sodium);
    let keyId = 0;
    try {
      // Through the one way headers change: atomically, with its backup, after any change before it.
      await this.#changeHeader((current, headerBytes) => {
        refuseKeysAbove(current.keys.keyring, this.#db, this.#activityLogUnder(current.keys));
        keyId = nextKeyId(parseVaultHeader(this.#sodium, headerBytes).deks.map((wrapped) => wrapped.keyId));
        return Promise.resolve({
          headerBytes: addDekToHeader(this.#sodium, current.keys, headerBytes, keyId, dek),
          openedSlotSalt: current.keys.openedSlotSalt,
        });
      });
    } catch (error) {
      dek.wipe();
      throw error;
    }
    keyring.add(keyId, dek);
    this.#record({ kind: 'rotate', counts: { keyId, previousKeyId } });
    return { keyId, previousKeyId };
  }

  /**
   * Rotate and re-encrypt (FORMAT.md section 11): moves every file's contents, every record, the tree snapshot, the
   * index commitment and the activity log to the active data key, then removes every older key from the header
   * (and its backup). When the header holds only one key, a new one is added first (as {@link Vault.rotateKey});
   * when it holds several (a rotation without re-encryption, or a re-encryption that was stopped), this continues
   * towards the active one. Runs a batch at a time: reads and restores run between batches; every file reads, from
   * its old blob or its new one, at every moment, also after a crash. Stopped anywhere (a crash, `signal`, a lock),
   * it is continued by calling it again: nothing records progress, what still names an older key is what is left.
   * Something that cannot be read (damage) stays under its older key and is reported in `problems`; the older keys
   * then stay in the header, so that nothing becomes unreadable.
   * @throws {@link BusyError} while an add, delete, verify, rotation or another re-encryption runs.
   * @throws {@link CancelledError} when `signal` aborts or the vault is locked (what was done stays done).
   * @throws {@link ReadOnlyVaultError}; {@link IntegrityError} when the index's rows do not match its commitment,
   * or as for {@link Vault.rotateKey} (nothing is done then); {@link IoError} when the vault cannot be written.
   */
  async reencrypt(options: JobOptions = {}): Promise<ReencryptReport> {
    const session = this.#unlocked();
    session.requireWritable();
    this.#requireNoJob();
    this.#reencrypting = true;
    const job = new Reencryption(session, options.onProgress);
    let rotated = false;
    const turn = <T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> => {
      if (this.#session !== session) throw new CancelledError();
      return this.#activity.run('rewrite', REENCRYPTING, options, work);
    };
    try {
      await turn(async (signal) => {
        checkVaultFolder(this.dir);
        const { keyring } = session.keys;
        refuseKeysAbove(keyring, this.#db, this.#activityLogUnder(session.keys));
        if (keyring.keyIds.length === 1) {
          await this.#rotate(session);
          rotated = true;
        }
        await job.plan(signal);
      });
      let retired: RetiredKeys | undefined;
      do {
        while (await turn((signal) => job.step(signal)));
        // Planned again in the turn that retires the keys: something may have been written under an older key
        // between batches (a file recovered by verify --repair, say), and nothing can be while it runs.
        retired = await turn(async (signal) =>
          (await job.plan(signal)) ? undefined : this.#retireOldKeys(session, job),
        );
      } while (retired === undefined);
      const problems = [...job.problems, ...retired.problems];
      this.#record({
        kind: 'reencrypt',
        outcome: problems.length > 0 ? 'problems' : 'done',
        counts: {
          keyId: session.keys.keyring.activeKeyId,
          files: job.counts.files,
          records: job.counts.records,
          keysRemoved: retired.removedKeyIds.length,
        },
      });
      return {
        keyId: session.keys.keyring.activeKeyId,
        rotated,
        removedKeyIds: retired.removedKeyIds,
        filesReencrypted: job.counts.files,
        bytesReencrypted: job.counts.bytes,
        recordsResealed: job.counts.records,
        logEntriesResealed: retired.logEntriesResealed,
        problems,
      };
    } catch (error) {
      this.#record({
        kind: 'reencrypt',
        outcome: error instanceof CancelledError ? 'cancelled' : 'failed',
        counts: { files: job.counts.files, records: job.counts.records },
      });
      throw error;
    } finally {
      this.#reencrypting = false;
    }
  }

  /**
   * The end of a re-encryption, once nothing in the index names an older key: the index commitment, the tree
   * snapshot and the activity log move to the active key, and then, unless something could not be (damage), every
   * older key leaves the header and its backup.
   */
  async #retireOldKeys(session: Session, job: Reencryption): Promise<RetiredKeys> {
    const { keyring } = session.keys;
    const active = keyring.activeKeyId;
    session.rekeyCommitment();
    session.resealSnapshot();
    const log = this.#log?.reseal() ?? { resealed: 0, unopened: 0 };
    const problems: Problem[] = [];
    if (log.unopened > 0) {
      problems.push({
        path: '(activity log)',
        code: 'INTEGRITY',
        message:
          `${log.unopened} entries of the activity log under an older key do not open, so they were not sealed ` +
          'again and the older keys stay. Move activity.log out of the vault folder (keep it as evidence) and run ' +
          'the re-encryption again.',
      });
    }
    const old = keyring.keyIds.filter((keyId) => keyId !== active);
    if (job.incomplete || problems.length > 0 || old.length === 0)
      return { removedKeyIds: [], logEntriesResealed: log.resealed, problems };
    await this.#changeHeader((current, headerBytes) =>
      Promise.resolve({
        headerBytes: keepOnlyActiveDek(this.#sodium, current.keys, headerBytes, active),
        openedSlotSalt: current.keys.openedSlotSalt,
      }),
    );
    for (const keyId of old) keyring.remove(keyId);
    return { removedKeyIds: old, logEntriesResealed: log.resealed, problems };
  }

  /**
   * What is wrong with the activity log, as problems for `verify`: damaged, removed, reordered or replayed entries,
   * or a log that cannot be read. A torn last entry is what a crash leaves, not damage (and unlocking repaired it).
   */
  #activityLogDamage(): Problem[] {
    const problem = (code: string, message: string): Problem => ({ path: '(activity log)', code, message });
    try {
      return this.activityLog()
        .problems.filter((found) => found.kind !== 'torn-tail')
        .map((found) => problem('INTEGRITY', found.message));
    } catch (error) {
      if (error instanceof CofferError) return [problem(error.code, error.message)];
      throw error;
    }
  }

  /**
   * Checks the index, every stored file and the activity log; with `readData`, authenticates every chunk. See
   * {@link verifyVault}.
   */
  async verify(options: VerifyOptions = {}): Promise<VerifyReport> {
    const session = this.#unlocked();
    const flags = [
      ...(options.readData === true ? ['readData'] : []),
      ...(options.repair === true ? ['repair'] : []),
      ...(options.deleteUnreferenced === true ? ['deleteUnreferenced'] : []),
    ];
    let report: VerifyReport;
    try {
      report = await this.#activity.run('rewrite', 'verifying', options, async (signal) => {
        checkVaultFolder(this.dir);
        const checked = await verifyVault(session, { ...options, signal });
        const logDamage = this.#activityLogDamage();
        return logDamage.length === 0
          ? checked
          : { ...checked, ok: false, problems: [...checked.problems, ...logDamage] };
      });
    } catch (error) {
      this.#record({
        kind: 'verify',
        outcome: error instanceof CancelledError ? 'cancelled' : 'failed',
        flags,
      });
      throw error;
    }
    this.#record({
      kind: 'verify',
      outcome: report.ok ? 'done' : 'problems',
      flags,
      counts: {
        files: report.filesChecked,
        problems: report.problems.length,
        unreferenced: report.unreferenced.length,
        recovered: report.recovered.length,
      },
    });
    return report;
  }
}

/** An activity-log entry that could not be written, as the problem to show (the operation itself is done). */
function logProblemOf(error: unknown): Problem {
  const cause = asIoError(error, 'Could not write the activity log');
  return {
    path: '(activity log)',
    code: cause instanceof CofferError ? cause.code : 'IO',
    message: cause instanceof Error ? cause.message : String(cause),
  };
}

/** What doing {@link Vault.reencrypt} is called in a {@link BusyError}. */
const REENCRYPTING = 're-encrypting the vault';

/** The end of a re-encryption: the keys removed from the header, and why none were. */
interface RetiredKeys {
  readonly removedKeyIds: readonly number[];
  readonly logEntriesResealed: number;
  readonly problems: readonly Problem[];
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

/** What the vault is busy doing while it frees the space of files an add replaced. */
const FREEING_REPLACED = 'freeing the space of files an add replaced';

/** A file a read stream was opened for that was deleted or replaced before its first read. */
function goneSinceOpened(path: string): NotFoundError {
  return new NotFoundError(
    `"${path}" was deleted or replaced after it was opened, so it was not read. Open it again from what is in the vault now.`,
  );
}

/** Folders first, then by name, as the window lists them. */
function sortNodes(nodes: TreeNode[]): TreeNode[] {
  return nodes.sort(compareEntries);
}

async function folderSize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    try {
      total += (await stat(join(entry.parentPath, entry.name))).size;
    } catch (error) {
      // Gone since the listing: a running add's temp file renamed into place, an emptied pack removed.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return total;
}
