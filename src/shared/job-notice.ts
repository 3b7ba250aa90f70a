/**
 * When a job's end earns a system notification, and what it says. Shared by Electron's main process (which shows
 * it with Electron's Notification) and the renderer in the preview (the web Notification API), so both hosts
 * decide alike. No Node, no DOM: a test drives it with plain values.
 *
 * What it says: counts only. A notification may show on the lock screen and in the system's notification history,
 * where anyone at the computer can read it, so it never carries a decrypted name, a path, the vault's name or an
 * error's own message (which may quote a path); the window, once opened, says the rest.
 */
import type { JobEvent, JobKind } from './contract.js';

/** A job must have run at least this long for its end to be notified: a short one ends while the user waits. */
export const LONG_JOB_MS = 5_000;

export interface JobNotice {
  readonly title: string;
  readonly body: string;
}

const NOUNS: Readonly<Record<JobKind, string>> = {
  add: 'Add',
  restore: 'Restore',
  verify: 'Check',
  reencrypt: 'Re-encryption',
};

function count(amount: number, noun: string): string {
  return `${amount.toLocaleString('en')} ${noun}${amount === 1 ? '' : 's'}`;
}

function describeDone(event: Extract<JobEvent, { type: 'ended'; status: 'done' }>): JobNotice {
  const { result } = event;
  // A file a restore left as it was, not told to replace it, is what the person chose, not a problem.
  const kept = result.report.problems.filter((problem) => problem.kept === true).length;
  const problems = result.report.problems.length - kept;
  const tail = problems > 0 ? ` ${count(problems, 'problem')}: open Coffer to see them.` : '';
  switch (result.kind) {
    case 'add':
      return {
        title: 'Coffer: add finished',
        body: `Added ${count(result.report.filesAdded, 'file')}.${tail}`,
      };
    case 'restore':
      return {
        title: 'Coffer: restore finished',
        body:
          `Restored ${count(result.report.filesRestored, 'file')}` +
          (kept > 0 ? `; kept ${count(kept, 'file')} already there` : '') +
          `.${tail}`,
      };
    case 'verify':
      return {
        title: 'Coffer: check finished',
        body: result.report.ok
          ? `No damage found in ${count(result.report.filesChecked, 'file')}.`
          : `Damage found.${tail}`,
      };
    case 'reencrypt':
      return {
        title: 'Coffer: re-encryption finished',
        body:
          result.report.removedKeyIds.length > 0
            ? `Re-encrypted ${count(result.report.filesReencrypted, 'file')}; the old keys are removed.`
            : `The old keys were kept.${tail}`,
      };
  }
}

/**
 * Tracks when each job started and decides, when it ends, whether to notify: only for a job that ran at least
 * {@link LONG_JOB_MS}, ended done or failed (a cancel is the user's own doing, or a lock's), while the window was
 * in the background (hidden, minimised or not focused).
 */
export class JobNoticeTracker {
  readonly #startedAt = new Map<string, number>();

  /**
   * Takes one job event; returns the notice to show for it, or null.
   * @param now - milliseconds (any clock, the same for every call)
   * @param inBackground - whether the window is hidden or unfocused now (asked only when a job ends)
   */
  observe(event: JobEvent, now: number, inBackground: () => boolean): JobNotice | null {
    if (event.type !== 'ended') {
      // A job's first event is 'started', but a window that arrived later starts counting at what it sees first.
      if (!this.#startedAt.has(event.jobId)) this.#startedAt.set(event.jobId, now);
      return null;
    }
    const startedAt = this.#startedAt.get(event.jobId) ?? now;
    this.#startedAt.delete(event.jobId);
    if (event.status === 'cancelled' || now - startedAt < LONG_JOB_MS || !inBackground()) return null;
    if (event.status === 'failed') {
      return {
        title: `Coffer: ${NOUNS[event.kind].toLowerCase()} failed`,
        body: 'Open Coffer to see what happened.',
      };
    }
    return describeDone(event);
  }
}
