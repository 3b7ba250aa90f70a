import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readFileSync,
  readSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';

import { ascii } from '../crypto/bytes.js';
import { ID_BYTES } from '../crypto/constants.js';
import type { Keyring } from '../crypto/keys.js';
import { IntegrityError, IoError, UnsupportedFormatError } from '../errors.js';
import { writeFileAtomicSync } from '../publish.js';
import { ACTIVITY_LOG_FILE, TEMP_DIR, UNLOCK_FAILURES_FILE, VAULT_READ_FLAGS } from './layout.js';
import {
  LOG_ENTRY_BYTES,
  LogSealer,
  type ActivityEntry,
  type ActivityEvent,
  type LogKeys,
} from './log-entry.js';

/**
 * The activity log (FORMAT.md section 10): `activity.log` in the vault folder, a 32-byte file header and then
 * fixed-size sealed entries, appended one write and one fsync each. Bounded: once it holds `maxEntries`, it is
 * rewritten (temp file, fsync, rename) with the newest `keepEntries` and an entry saying how many were dropped.
 */

const MAGIC = ascii('COFFERAL');
const LOG_VERSION = 1;
export const LOG_HEADER_BYTES = 32;
/** A reader refuses a log longer than this many entries: no writer makes one, and it would all be read. */
const READ_CAP_ENTRIES = 16_384;
const SUBJECT = 'activity log';

export interface LogLimits {
  /** The most entries the file holds; an append beyond it rewrites the file. */
  readonly maxEntries: number;
  /** How many of the newest entries a rewrite keeps (fewer than `maxEntries` − 3). */
  readonly keepEntries: number;
}

/** About 1 MB of log; a rewrite keeps three quarters, so one happens every 2,500 operations once it is full. */
const DEFAULT_LOG_LIMITS: LogLimits = { maxEntries: 10_000, keepEntries: 7_500 };

/**
 * Something wrong with the log. `torn-tail` (the last entry cut off, or not opening) is what a crash during an
 * append leaves, and is repaired by the next append; `newer-key` is an entry sealed under a key the header in use
 * lacks because it is older than the log; the others mean entries were damaged, removed, reordered or replayed.
 */
export interface LogProblem {
  readonly kind: 'torn-tail' | 'newer-key' | 'damaged' | 'out-of-order' | 'start-removed';
  readonly message: string;
}

export interface ActivityLogReport {
  /** The entries that open, oldest first. */
  readonly entries: readonly ActivityEntry[];
  /** How many older entries the size bound has dropped since the log began. */
  readonly dropped: number;
  readonly problems: readonly LogProblem[];
}

/** The log's 32 bytes: magic ‖ u16 version ‖ u16 reserved ‖ u32 reserved ‖ vault id. */
function logHeader(vaultId: Buffer): Buffer {
  const out = Buffer.alloc(LOG_HEADER_BYTES);
  MAGIC.copy(out, 0);
  out.writeUInt16LE(LOG_VERSION, 8);
  vaultId.copy(out, 16);
  return out;
}

/** @throws {@link IntegrityError} or {@link UnsupportedFormatError} unless `bytes` start with this vault's log header. */
function checkLogHeader(bytes: Buffer, vaultId: Buffer): void {
  if (bytes.length < LOG_HEADER_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new IntegrityError(bytes.length < LOG_HEADER_BYTES ? 'truncated' : 'malformed', logDamage());
  }
  const version = bytes.readUInt16LE(8);
  if (version !== LOG_VERSION) throw new UnsupportedFormatError(SUBJECT, version, LOG_VERSION);
  if (bytes.readUInt16LE(10) !== 0 || bytes.readUInt32LE(12) !== 0)
    throw new IntegrityError('malformed', logDamage());
  if (!bytes.subarray(16, 16 + ID_BYTES).equals(vaultId)) throw new IntegrityError('wrong-file', logDamage());
}

function logDamage(): { subject: string; advice: string } {
  return {
    subject: `${SUBJECT} (${ACTIVITY_LOG_FILE})`,
    advice:
      `Nothing can be recorded in it or read from it. Move ${ACTIVITY_LOG_FILE} out of the vault folder to start ` +
      'a new log (keep the old one as evidence); the files in the vault are not affected.',
  };
}

/** The entries and torn bytes of a log file's body. */
function split(bytes: Buffer): { entries: Buffer[]; tornBytes: number } {
  const body = bytes.length - LOG_HEADER_BYTES;
  const entries: Buffer[] = [];
  for (let at = LOG_HEADER_BYTES; at + LOG_ENTRY_BYTES <= bytes.length; at += LOG_ENTRY_BYTES)
    entries.push(bytes.subarray(at, at + LOG_ENTRY_BYTES));
  return { entries, tornBytes: body % LOG_ENTRY_BYTES };
}

/** Each entry opened, or `undefined` where it does not (damaged, tampered, from another vault). */
function openAll(sealer: LogSealer, entries: readonly Buffer[]): (ActivityEntry | undefined)[] {
  return entries.map((entry) => {
    try {
      return sealer.open(entry);
    } catch (error) {
      if (error instanceof IntegrityError) return undefined;
      throw error;
    }
  });
}

/** The key id an entry claims (bytes 8–11), read without opening it. */
function claimedKeyId(entry: Buffer): number {
  return entry.readUInt32LE(8);
}

/** Whether an entry claims a key id above every one `keyring` holds: a newer header's (FORMAT.md 10.4). */
function underNewerKey(entry: Buffer, keyring: Keyring): boolean {
  return keyring.above([claimedKeyId(entry)]).length > 0;
}

/**
 * The seq a rewrite gives the first entry it adds after `entries` (FORMAT.md 10.3): by position after the last
 * that opens; in a log where none opens, after the last one's seq field when it is under a newer key (it was kept
 * because that field follows the entry before it), else the number of entries.
 */
function nextSeq(
  entries: readonly Buffer[],
  opened: readonly (ActivityEntry | undefined)[],
  keyring: Keyring,
): number {
  const lastOpened = opened.findLastIndex((entry) => entry !== undefined);
  const entry = opened[lastOpened];
  if (entry !== undefined) return entry.seq + (opened.length - lastOpened);
  const last = entries.at(-1);
  if (last !== undefined && underNewerKey(last, keyring)) {
    const claimed = LogSealer.claimedSeq(last);
    if (claimed < BigInt(Number.MAX_SAFE_INTEGER)) return Number(claimed) + 1;
  }
  return entries.length;
}

/**
 * Whether the last whole entry is a torn one (FORMAT.md 10.4): it does not open, nothing follows it, and it is not
 * the entry a writer under a newer header appended (under a newer key, its seq field one more than the entry
 * before it's, or 0 for the first). Stale bytes that a crash left in its place are thus dropped, and an entry under
 * a key an older header lacks is kept, also when every entry is under such keys (after a re-encryption).
 */
function tornLastEntry(
  entries: readonly Buffer[],
  opened: readonly (ActivityEntry | undefined)[],
  tornBytes: number,
  keyring: Keyring,
): boolean {
  const last = entries.at(-1);
  if (last === undefined || tornBytes > 0 || opened.at(-1) !== undefined) return false;
  return !(underNewerKey(last, keyring) && seqFollows(entries));
}

/** Whether the last entry's seq field is one more than the entry before it's (0 when it is the only one). */
function seqFollows(entries: readonly Buffer[]): boolean {
  const last = entries.at(-1);
  const before = entries.at(-2);
  if (last === undefined) return false;
  return LogSealer.claimedSeq(last) === (before === undefined ? 0n : LogSealer.claimedSeq(before) + 1n);
}

/** The most bytes a log file that a writer made can have. */
const LOG_READ_CAP = LOG_HEADER_BYTES + READ_CAP_ENTRIES * LOG_ENTRY_BYTES;

/**
 * A small file of the vault folder, read whole (never through a link, never more than `cap` bytes); undefined when
 * there is none.
 * @throws {@link IntegrityError} when it is not a regular file or is larger than `cap`.
 */
function readVaultFile(path: string, cap: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, VAULT_READ_FLAGS);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size > cap) throw new IntegrityError('malformed', logDamage());
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads and checks a log (FORMAT.md section 10.4): every entry must open, and their sequence numbers must run on
 * by one from the first, which is 0 unless the newest `log-trimmed` entry names it as the first kept.
 */
function checkLog(sealer: LogSealer, keyring: Keyring, bytes: Buffer): ActivityLogReport {
  const { entries: stored, tornBytes } = split(bytes);
  const opened = openAll(sealer, stored);
  const problems: LogProblem[] = [];
  if (tornBytes > 0) {
    problems.push({
      kind: 'torn-tail',
      message: `The last entry of the activity log is incomplete (${tornBytes} bytes): a write cut off by a crash. The next change repairs it.`,
    });
  } else if (tornLastEntry(stored, opened, tornBytes, keyring)) {
    opened.pop();
    problems.push({
      kind: 'torn-tail',
      message:
        'The last entry of the activity log does not open: a write cut off by a crash, or damage. The next change repairs it.',
    });
  }
  let base: number | undefined;
  const entries: ActivityEntry[] = [];
  /** Where the last entry under a newer key is. */
  let lastNewerKey = -1;
  opened.forEach((entry, position) => {
    if (entry === undefined) {
      const problem = unopenedEntryProblem(stored[position], position, keyring);
      if (problem.kind === 'newer-key') lastNewerKey = position;
      problems.push(problem);
      return;
    }
    base ??= entry.seq - position;
    if (entry.seq - position !== base) {
      problems.push({
        kind: 'out-of-order',
        message:
          `Entry ${position + 1} of the activity log has sequence number ${entry.seq}, not ${base + position}: ` +
          'entries before it were removed, reordered or replayed.',
      });
    }
    entries.push(entry);
  });
  const first = base ?? 0;
  const trimmedAt = opened.findLastIndex((entry) => entry?.kind === 'log-trimmed');
  const firstKept = opened[trimmedAt]?.counts.firstKept ?? 0;
  // A newer `log-trimmed` may be among the entries under a newer key: the start cannot be checked then.
  if (first !== firstKept && lastNewerKey <= trimmedAt) {
    problems.push({
      kind: 'start-removed',
      message:
        `The activity log starts at entry ${first}, but ${firstKept === 0 ? 'no entry says older ones were dropped' : `it says it keeps entries from ${firstKept}`}: ` +
        'entries at its start (or its end) were removed.',
    });
  }
  return { entries, dropped: firstKept, problems };
}

/** What an entry that does not open is: under a key a newer header holds, or damaged. */
function unopenedEntryProblem(stored: Buffer | undefined, position: number, keyring: Keyring): LogProblem {
  if (stored !== undefined && underNewerKey(stored, keyring))
    return {
      kind: 'newer-key',
      message:
        `Entry ${position + 1} of the activity log is sealed under key ${claimedKeyId(stored)}, which the header in ` +
        'use does not hold: the header is older than the log (one from before a key rotation was put back), or ' +
        'the entry was damaged. Restoring the newer header (coffer.header.bak, or a header backup made after the ' +
        'last key rotation) makes it readable.',
    };
  if (stored !== undefined && keyring.lacking([claimedKeyId(stored)]).length > 0)
    return {
      kind: 'damaged',
      message:
        `Entry ${position + 1} of the activity log is sealed under key ${claimedKeyId(stored)}, which the header in ` +
        'use no longer holds: an older header, put back after a re-encryption removed that key, wrote it; or it ' +
        'was damaged. It cannot be read again.',
    };
  return {
    kind: 'damaged',
    message: `Entry ${position + 1} of the activity log does not open: it was damaged, edited or copied in from elsewhere.`,
  };
}

/** A vault's activity log. Writes are synchronous (one write and one fsync), like the index's. */
export class ActivityLog {
  readonly #path: string;
  readonly #tempDir: string;
  readonly #vaultId: Buffer;
  readonly #sealer: LogSealer;
  readonly #keyring: LogKeys['keyring'];
  readonly #limits: LogLimits;

  constructor(vaultDir: string, keys: LogKeys, limits: LogLimits = DEFAULT_LOG_LIMITS) {
    this.#path = join(vaultDir, ACTIVITY_LOG_FILE);
    this.#tempDir = join(vaultDir, TEMP_DIR);
    this.#vaultId = keys.vaultId;
    this.#sealer = new LogSealer(keys);
    this.#keyring = keys.keyring;
    this.#limits = limits;
  }

  /**
   * Reads and checks the whole log; a vault without one has an empty log.
   * @throws {@link IntegrityError} when the file's header is not this vault's log's, or it is not a regular file.
   * @throws {@link UnsupportedFormatError} for a log from a newer Coffer.
   */
  read(): ActivityLogReport {
    const bytes = readVaultFile(this.#path, LOG_READ_CAP);
    if (bytes === undefined) return { entries: [], dropped: 0, problems: [] };
    checkLogHeader(bytes, this.#vaultId);
    return checkLog(this.#sealer, this.#keyring, bytes);
  }

  /**
   * The key ids the log's entries name (bytes 8–11 of each, FORMAT.md 11.1), read without opening them; none when
   * the log is missing or is not this vault's. A last entry whose seq field does not follow the one before it is
   * left out: stale bytes a crash left, which could name any key id (FORMAT.md 4.7).
   */
  keyIdsNamed(): Set<number> {
    const bytes = readVaultFile(this.#path, LOG_READ_CAP);
    if (bytes === undefined) return new Set();
    try {
      checkLogHeader(bytes, this.#vaultId);
    } catch (error) {
      if (error instanceof IntegrityError || error instanceof UnsupportedFormatError) return new Set();
      throw error;
    }
    const { entries, tornBytes } = split(bytes);
    const counted = tornBytes === 0 && !seqFollows(entries) ? entries.slice(0, -1) : entries;
    return new Set(counted.map(claimedKeyId));
  }

  /**
   * Seals every entry under an older key again under the active one, same seq and contents (re-encryption,
   * FORMAT.md section 11), and writes the file anew as a rewrite does (temp file, fsync, rename). Entries that do
   * not open stay byte for byte: they are damage, reported as before.
   * @returns how many entries were sealed again, and how many claiming an older key the header holds did not open.
   * @throws {@link IntegrityError} or {@link UnsupportedFormatError} when the file is not this vault's log.
   * @throws the file system's error when it cannot be written (the old file stays).
   */
  reseal(): { resealed: number; unopened: number } {
    const bytes = readVaultFile(this.#path, LOG_READ_CAP);
    if (bytes === undefined) return { resealed: 0, unopened: 0 };
    checkLogHeader(bytes, this.#vaultId);
    const { entries } = split(bytes);
    let resealed = 0;
    let unopened = 0;
    const out = entries.map((entry) => {
      try {
        const sealed = this.#sealer.reseal(entry);
        if (sealed !== entry) resealed++;
        return sealed;
      } catch (error) {
        if (!(error instanceof IntegrityError)) throw error;
        // Counted when it names an older key the header holds: one claiming the active key names nothing to
        // retire, and one under a key the header lacks (a removed one's, a newer header's) stays as unreadable.
        const keyId = claimedKeyId(entry);
        if (keyId !== this.#keyring.activeKeyId && this.#keyring.find(keyId) !== undefined) unopened++;
        return entry;
      }
    });
    if (resealed > 0) {
      const whole = LOG_HEADER_BYTES + entries.length * LOG_ENTRY_BYTES;
      this.#replace(Buffer.concat([bytes.subarray(0, LOG_HEADER_BYTES), ...out, bytes.subarray(whole)]));
    }
    return { resealed, unopened };
  }

  /** Writes the whole log file anew: temp file, fsync, rename. */
  #replace(bytes: Buffer): void {
    writeFileAtomicSync(
      { temp: join(this.#tempDir, `${randomBytes(ID_BYTES).toString('hex')}.tmp`), target: this.#path },
      bytes,
    );
  }

  /**
   * Appends one entry durably: one write at the end of the file and an fsync. A log with a torn last entry, or one
   * at its size bound, is rewritten instead (temp file, fsync, rename), with an entry saying what was repaired or
   * dropped.
   * @throws {@link IntegrityError} or {@link UnsupportedFormatError} when the file is not this vault's log.
   * @throws the file system's error when it cannot be written.
   */
  append(event: ActivityEvent): void {
    let fd: number;
    try {
      // Read and write, at the end, never through a link (VAULT_READ_FLAGS' O_RDONLY is 0).
      fd = openSync(this.#path, VAULT_READ_FLAGS | constants.O_RDWR | constants.O_APPEND);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      this.#rewrite(logHeader(this.#vaultId), event);
      return;
    }
    let appended: boolean;
    try {
      appended = this.#appendInPlace(fd, event);
    } finally {
      closeSync(fd);
    }
    if (!appended) this.#rewrite(readVaultFile(this.#path, LOG_READ_CAP) ?? logHeader(this.#vaultId), event);
  }

  /** Appends at the end when the log is whole and has room; false when it must be rewritten. */
  #appendInPlace(fd: number, event: ActivityEvent): boolean {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new IntegrityError('malformed', logDamage());
    const header = Buffer.alloc(LOG_HEADER_BYTES);
    readSync(fd, header, 0, LOG_HEADER_BYTES, 0);
    checkLogHeader(stats.size < LOG_HEADER_BYTES ? header.subarray(0, stats.size) : header, this.#vaultId);
    const body = stats.size - LOG_HEADER_BYTES;
    const count = Math.floor(body / LOG_ENTRY_BYTES);
    if (body % LOG_ENTRY_BYTES !== 0 || count >= this.#limits.maxEntries) return false;
    let seq = 0;
    if (count > 0) {
      const last = Buffer.alloc(LOG_ENTRY_BYTES);
      readSync(fd, last, 0, LOG_ENTRY_BYTES, stats.size - LOG_ENTRY_BYTES);
      const [opened] = openAll(this.#sealer, [last]);
      if (opened === undefined) return false;
      seq = opened.seq + 1;
    }
    const entry = this.#sealer.seal(seq, event);
    const written = writeSync(fd, entry);
    // Part of the entry is a torn one, which the next append repairs; the entry itself was not written.
    if (written !== entry.length)
      throw new IoError(
        `Could not write the activity log: the disk took ${written} of the entry's ${entry.length} bytes (it may ` +
          'be full). The next change repairs the log.',
      );
    fsyncSync(fd);
    return true;
  }

  /**
   * Writes the log anew: its whole entries (less a torn last one), then a `log-repaired` entry if
   * anything was cut off, a `log-trimmed` one if it is over its bound, and `event`.
   */
  #rewrite(bytes: Buffer, event: ActivityEvent): void {
    checkLogHeader(bytes, this.#vaultId);
    const { entries, tornBytes } = split(bytes);
    const opened = openAll(this.#sealer, entries);
    let discardedEntries = 0;
    if (tornLastEntry(entries, opened, tornBytes, this.#keyring)) {
      entries.pop();
      opened.pop();
      discardedEntries = 1;
    }
    let seq = nextSeq(entries, opened, this.#keyring);
    const added: ActivityEvent[] = [];
    if (tornBytes > 0 || discardedEntries > 0)
      added.push({ kind: 'log-repaired', counts: { tornBytes, discardedEntries } });
    let kept = entries;
    if (entries.length + added.length + 2 > this.#limits.maxEntries) {
      kept = entries.slice(-this.#limits.keepEntries);
      // By its place when it does not open: its seq field is not authenticated, and may be any number.
      const firstKept = opened[entries.length - kept.length]?.seq ?? Math.max(0, seq - kept.length);
      added.push({
        kind: 'log-trimmed',
        counts: { firstKept, dropped: entries.length - kept.length },
      });
    }
    added.push(event);
    const sealed = added.map((next) => this.#sealer.seal(seq++, next));
    this.#replace(Buffer.concat([bytes.subarray(0, LOG_HEADER_BYTES), ...kept, ...sealed]));
  }
}

// ---------------------------------------------------------------- failed unlocks (FORMAT.md section 10.5)

const FAILURES_MAGIC = ascii('COFFERUF');
const FAILURES_BYTES = 16;

/** Failed unlock attempts counted in the vault folder since the last unlock; 0 when none (or unreadable). */
export function unlockFailures(vaultDir: string): number {
  let bytes: Buffer | undefined;
  try {
    bytes = readVaultFile(join(vaultDir, UNLOCK_FAILURES_FILE), FAILURES_BYTES);
  } catch {
    return 0;
  }
  if (bytes?.length !== FAILURES_BYTES || !bytes.subarray(0, 8).equals(FAILURES_MAGIC)) return 0;
  return bytes.readUInt32LE(8);
}

/** Adds one to the count of failed unlocks (written atomically through `tmp/`). */
export function countFailedUnlock(vaultDir: string): void {
  const bytes = Buffer.alloc(FAILURES_BYTES);
  FAILURES_MAGIC.copy(bytes, 0);
  bytes.writeUInt32LE(Math.min(0xffffffff, unlockFailures(vaultDir) + 1), 8);
  writeFileAtomicSync(
    {
      temp: join(vaultDir, TEMP_DIR, `${randomBytes(ID_BYTES).toString('hex')}.tmp`),
      target: join(vaultDir, UNLOCK_FAILURES_FILE),
    },
    bytes,
  );
}

/** Removes the count once an unlock has recorded it in the log; only a regular file, never through a link. */
export function clearUnlockFailures(vaultDir: string): void {
  const path = join(vaultDir, UNLOCK_FAILURES_FILE);
  try {
    if (lstatSync(path).isFile()) unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
