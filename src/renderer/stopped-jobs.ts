import type { JobKind, StoppedWork } from '../shared/contract.js';
import { plural } from '../shared/plural.js';

/*
 * What a job stopped part-way leaves, in words: for its own row in the jobs panel, and for the unlock screen after
 * a lock stopped jobs (their rows, which name files, went with the lock).
 */

/**
 * Each kind of job (and a delete waiting for its turn): its noun (with its article, and plural), and what is left
 * after a lock stopped `who`, which had `begun` or was still waiting for another job on the vault to end.
 */
const STOPPED: Readonly<
  Record<
    StoppedWork['kind'],
    { a: string; noun: string; nouns: string; left: (who: string, begun: boolean) => string }
  >
> = {
  add: {
    a: 'an',
    noun: 'add',
    nouns: 'adds',
    left: (who, begun) =>
      begun
        ? `Files ${who} had finished are in the vault and nothing half-added is: add the rest again.`
        : `Nothing was added: ${who} had not begun. Add again what you still want in the vault.`,
  },
  restore: {
    a: 'a',
    noun: 'restore',
    nouns: 'restores',
    left: (who, begun) =>
      begun
        ? `Files ${who} had finished are in their folder and nothing half-written is: restore the rest again.`
        : `Nothing was restored: ${who} had not begun. Restore again what you still want.`,
  },
  verify: {
    a: 'a',
    noun: 'check',
    nouns: 'checks',
    left: () => 'Run “Check all data” again from Vault details.',
  },
  reencrypt: {
    a: 'a',
    noun: 're-encryption',
    nouns: 're-encryptions',
    left: () => 'Start the re-encryption again from Security: it goes on where it stopped.',
  },
  // Only a delete still waiting for its turn is stopped by a lock: one that had begun ends whole first.
  delete: {
    a: 'a',
    noun: 'delete',
    nouns: 'deletes',
    left: (who) => `Nothing was deleted: ${who} had not begun. Delete again what you still want gone.`,
  },
};

/** What a stopped job of `kind` left and what to do, `who` naming the job ("it", "the adds"). */
function leftByStoppedJob(kind: StoppedWork['kind'], who: string, begun: boolean): string {
  return STOPPED[kind].left(who, begun);
}

/**
 * An add's or a restore's words: what it does, where its files go (`place`; `where` when none went), what it never
 * leaves there, and its verb to do the rest.
 */
const PUT_IN_PLACE = {
  add: {
    doing: 'adding',
    done: 'added',
    place: 'in the vault',
    where: 'in the vault',
    never: 'half-added',
    again: 'Add',
  },
  restore: {
    doing: 'restoring',
    done: 'restored',
    place: 'in the folder you chose',
    where: 'in the folder',
    never: 'half-written',
    again: 'Restore',
  },
} as const;

const are = (count: number): string => (count === 1 ? 'is' : 'are');

/**
 * A stopped job's row, in words. An add or a restore that says how many files it had finished names them: they are
 * in place for good, and the user needs to know where to pick up. Without a count (another kind) the words say what
 * such a job leaves.
 */
export function stoppedJobSummary(kind: JobKind, filesFinished?: number): string {
  if (filesFinished === undefined || (kind !== 'add' && kind !== 'restore'))
    return `Stopped. ${leftByStoppedJob(kind, 'it', true)}`;
  const { doing, done, place, where, never, again } = PUT_IN_PLACE[kind];
  // No advice on how to answer the name question when adding the rest again: that depends on what was answered
  // before (Replace and Keep both each call for their own).
  if (filesFinished === 0) return `Stopped before any file was ${done}; nothing ${never} is ${where}.`;
  const those = filesFinished === 1 ? 'it' : 'those';
  return (
    `Stopped after ${doing} ${plural(filesFinished, 'file')}: ${those} ${are(filesFinished)} ${place}, and ` +
    `nothing ${never} is. ${again} the rest again.`
  );
}

/**
 * A failed job's row: the failure's words, then, for an add or a restore that had put files in place before it
 * failed (a full disk, say), that those are whole and stay.
 */
export function failedJobSummary(kind: JobKind, message: string, filesFinished?: number): string {
  if (filesFinished === undefined || filesFinished === 0 || (kind !== 'add' && kind !== 'restore'))
    return message;
  const { done, place } = PUT_IN_PLACE[kind];
  const files = plural(filesFinished, 'file');
  return `${message} The ${files} ${done} before it stopped ${are(filesFinished)} ${place}, whole.`;
}

/**
 * What the unlock screen says when the lock stopped jobs part-way (their rows, which name files, went with the
 * lock): which kinds, and what each left; null when it stopped none. Jobs of a kind of which none had begun did
 * nothing, and are told so; when some had begun, what those left is what matters.
 */
export function stoppedByLockNotice(stopped: readonly StoppedWork[]): string | null {
  const byKind = new Map<StoppedWork['kind'], { count: number; begun: boolean }>();
  for (const { kind, begun } of stopped) {
    const seen = byKind.get(kind);
    byKind.set(kind, { count: (seen?.count ?? 0) + 1, begun: (seen?.begun ?? false) || begun });
  }
  if (byKind.size === 0) return null;
  const named = [...byKind].map(([kind, { count }]) => {
    const { a, noun, nouns } = STOPPED[kind];
    return count === 1 ? `${a} ${noun}` : `${count.toLocaleString('en-US')} ${nouns}`;
  });
  const list =
    named.length === 1 ? named.join('') : `${named.slice(0, -1).join(', ')} and ${named.at(-1) ?? ''}`;
  const after = [...byKind].map(([kind, { count, begun }]) => {
    const { noun, nouns } = STOPPED[kind];
    return leftByStoppedJob(kind, count === 1 ? `the ${noun}` : `the ${nouns}`, begun);
  });
  const ended = stopped.some(({ begun }) => begun) ? 'finished' : 'began';
  return [`Locking stopped ${list} before ${stopped.length === 1 ? 'it' : 'they'} ${ended}.`, ...after].join(
    ' ',
  );
}
