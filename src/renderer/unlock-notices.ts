import { INDEX_PROBLEM_PATH, type JobKind, type Problem } from '../shared/contract.js';

/**
 * What the window must tell the user after an unlock: how the vault had to be opened (a crash's interrupted write
 * rolled back in a private copy, FORMAT.md 8.2; the header's backup standing in, 4.7), the vault went back to an
 * older copy since this computer last saw it (8.8), the index as a whole failed its checks (in the engine's
 * words), and entries that could not be read and are left out (counted, since each is only an id the user cannot
 * act on).
 */
export function unlockNotices(reply: {
  readonly problems: readonly Problem[];
  readonly openWarnings: readonly string[];
  readonly rollbackWarning: string | null;
}): string[] {
  const notices = [...reply.openWarnings];
  if (reply.rollbackWarning !== null) notices.push(reply.rollbackWarning);
  const whole = reply.problems.filter((problem) => problem.path === INDEX_PROBLEM_PATH);
  for (const problem of whole) notices.push(problem.message);
  const entries = reply.problems.length - whole.length;
  if (entries > 0) {
    notices.push(
      `${entries} ${entries === 1 ? 'entry' : 'entries'} of this vault could not be read and ` +
        `${entries === 1 ? 'is' : 'are'} left out of the list. Open Vault details and choose “Check vault” to ` +
        'see what is damaged.',
    );
  }
  return notices;
}

/** Each kind of job: its noun (with its article, and plural), and what is left after a lock stopped `who`. */
const STOPPED: Readonly<
  Record<JobKind, { a: string; noun: string; nouns: string; after: (who: string) => string }>
> = {
  add: {
    a: 'an',
    noun: 'add',
    nouns: 'adds',
    after: (who) =>
      `Files ${who} had finished are in the vault and nothing half-added is: add the rest again.`,
  },
  restore: {
    a: 'a',
    noun: 'restore',
    nouns: 'restores',
    after: (who) =>
      `Files ${who} had finished are in their folder and nothing half-written is: restore the rest again.`,
  },
  verify: {
    a: 'a',
    noun: 'check',
    nouns: 'checks',
    after: () => 'Run “Check all data” again from Vault details.',
  },
  reencrypt: {
    a: 'a',
    noun: 're-encryption',
    nouns: 're-encryptions',
    after: () => 'Start the re-encryption again from Security: it goes on where it stopped.',
  },
};

/** What a stopped job of `kind` left and what to do, `who` naming the job ("it", "the adds"). */
export function leftByStoppedJob(kind: JobKind, who: string): string {
  return STOPPED[kind].after(who);
}

/**
 * What the unlock screen says when the lock stopped jobs part-way (their rows, which name files, went with the
 * lock): which kinds, and what each left; null when it stopped none.
 */
export function stoppedByLockNotice(kinds: readonly JobKind[]): string | null {
  const counts = new Map<JobKind, number>();
  for (const kind of kinds) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  if (counts.size === 0) return null;
  const named = [...counts].map(([kind, count]) => {
    const { a, noun, nouns } = STOPPED[kind];
    return count === 1 ? `${a} ${noun}` : `${count.toLocaleString('en-US')} ${nouns}`;
  });
  const list =
    named.length === 1 ? named.join('') : `${named.slice(0, -1).join(', ')} and ${named.at(-1) ?? ''}`;
  const after = [...counts].map(([kind, count]) => {
    const { noun, nouns } = STOPPED[kind];
    return leftByStoppedJob(kind, count === 1 ? `the ${noun}` : `the ${nouns}`);
  });
  return [`Locking stopped ${list} before ${kinds.length === 1 ? 'it' : 'they'} finished.`, ...after].join(
    ' ',
  );
}
