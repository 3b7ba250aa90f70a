/** The activity log's entries and the log's own problems in words (what, how many; no names: the log has none). */
import type { ActivityLogEntry, Problem } from '../../shared/contract.js';
import { plural } from '../../shared/plural.js';
import { formatSize } from '../format.js';

type Counts = Readonly<Record<string, number>>;

const n = (counts: Counts, name: string): number => counts[name] ?? 0;

/** "1 entry", "12 oldest entries". */
export function entriesCount(count: number, adjective = ''): string {
  const before = adjective === '' ? '' : `${adjective} `;
  return plural(count, `${before}entry`, `${before}entries`);
}

/** "3 files, 1 folder (2.1 MB)", leaving out what is zero. */
function items(counts: Counts): string {
  const parts = [];
  if (n(counts, 'files') > 0 || n(counts, 'folders') === 0) parts.push(plural(n(counts, 'files'), 'file'));
  if (n(counts, 'folders') > 0) parts.push(plural(n(counts, 'folders'), 'folder'));
  return `${parts.join(', ')}${n(counts, 'bytes') > 0 ? ` (${formatSize(n(counts, 'bytes'))})` : ''}`;
}

const ways = (counts: Counts): string => `the vault now has ${plural(n(counts, 'slots'), 'way')} in`;

const KIND_WORDS: Readonly<Record<string, (counts: Counts, flags: readonly string[]) => string>> = {
  unlock: (counts) =>
    n(counts, 'failedAttempts') > 0
      ? `Unlocked, after ${plural(n(counts, 'failedAttempts'), 'failed attempt')} since the last unlock`
      : 'Unlocked',
  add: (counts) => `Added ${items(counts)}`,
  restore: (counts) => `Restored ${items(counts)}`,
  delete: (counts) => `Deleted ${plural(n(counts, 'entries'), 'item')}`,
  move: (counts) => `Moved ${plural(n(counts, 'entries'), 'item')}`,
  rename: () => 'Renamed an item',
  'create-folder': (counts) => `Created ${plural(n(counts, 'folders'), 'folder')}`,
  verify: (counts, flags) =>
    `${flags.includes('readData') ? 'Checked all data' : 'Checked the vault'}: ${plural(n(counts, 'files'), 'file')}, ` +
    plural(n(counts, 'problems'), 'problem'),
  rotate: (counts) => `Rotated the data key (key ${n(counts, 'previousKeyId')} → key ${n(counts, 'keyId')})`,
  reencrypt: (counts) =>
    `Re-encrypted ${plural(n(counts, 'files'), 'file')} under key ${n(counts, 'keyId')}` +
    (n(counts, 'keysRemoved') > 0 ? `; removed ${plural(n(counts, 'keysRemoved'), 'older key')}` : ''),
  'passphrase-changed': (counts) => `Changed a passphrase (${ways(counts)})`,
  'slot-added': (counts) => `Added a passphrase (${ways(counts)})`,
  'slot-removed': (counts) => `Removed a passphrase (${ways(counts)})`,
  'recovery-key-made': () => 'Made a new recovery key (the previous one stopped working)',
  'header-imported': () => 'Put back a header backup',
  'log-trimmed': (counts) =>
    `Made room in this log: dropped the ${entriesCount(n(counts, 'dropped'), 'oldest')}`,
  'log-repaired': (counts) =>
    `Repaired the end of this log after a crash (${entriesCount(n(counts, 'discardedEntries'))} lost)`,
};

const OUTCOME_WORDS = {
  done: '',
  problems: ' — with problems',
  cancelled: ' — stopped',
  failed: ' — failed',
};

/** One entry in words: "Added 3 files (2.1 MB)", "Unlocked", "Checked all data: … — with problems". */
export function describeActivity(entry: ActivityLogEntry): string {
  const words = KIND_WORDS[entry.kind];
  const what = words
    ? words(entry.counts, entry.flags)
    : 'Something a newer version of Coffer recorded (this version cannot say what)';
  return `${what}${OUTCOME_WORDS[entry.outcome]}`;
}

/** "12 older entries were dropped…" for the head of the log view, or null when none were. */
export function droppedSentence(dropped: number): string | null {
  if (dropped === 0) return null;
  return `${entriesCount(dropped, 'older')} ${dropped === 1 ? 'was' : 'were'} dropped to keep the log small (it keeps the most recent ones).`;
}

/**
 * A problem the activity log had recording an operation, for the window's notices: the operation is done; the log
 * missed it; what to do.
 */
export function logProblemNotice(problem: Problem): string {
  return (
    `The vault's activity log could not record a change (the change itself is done): ${problem.message} ` +
    'Free some disk space and check the vault folder can be written, then run “Check vault” in the vault details.'
  );
}
