/** Speed and time left of a running job, from its progress so far; which jobs the panel shows; waiting words. */
import type { Progress } from '../shared/contract.js';
import type { JobView } from './store.js';

export interface JobFigures {
  /** Bytes per second, or undefined before there is anything to measure. */
  readonly bytesPerSecond?: number;
  /** Seconds left at the speed so far, or undefined while unknown. */
  readonly secondsLeft?: number;
}

/**
 * The average speed since the job's work began (`startedAt`); a steadier estimate than the last interval's.
 */
export function jobFigures(progress: Progress | undefined, startedAt: number, now: number): JobFigures {
  const elapsed = (now - startedAt) / 1000;
  if (progress === undefined || elapsed <= 0 || progress.bytesDone === 0) return {};
  const bytesPerSecond = progress.bytesDone / elapsed;
  const secondsLeft = Math.max(0, progress.bytesTotal - progress.bytesDone) / bytesPerSecond;
  return { bytesPerSecond, secondsLeft };
}

/** "about 2 min left", "5 s left". */
export function formatTimeLeft(seconds: number): string {
  if (seconds < 60) return `${Math.max(1, Math.ceil(seconds))} s left`;
  if (seconds < 3600) return `about ${Math.ceil(seconds / 60)} min left`;
  const hours = Math.floor(seconds / 3600);
  return `about ${hours} h ${Math.ceil((seconds - hours * 3600) / 60)} min left`;
}

/** How long a job runs before the jobs panel shows it running (how it ended is always shown). */
export const SHOW_RUNNING_AFTER_MS = 400;

/** What a delete says while it waits behind a job on its vault. */
export const WAITING_FOR_ANOTHER_JOB = 'waiting for another job on this vault to end…';

/**
 * What a job says while the engine holds it back: not always for a job the panel shows (a delete, a preview still
 * reading a file, a file being opened in another app, the space an add freed being reclaimed).
 */
export const WAITING_FOR_OTHER_WORK = 'waiting for other work on this vault to end…';

/**
 * The jobs the panel shows at `now`: every ended one, and those running for {@link SHOW_RUNNING_AFTER_MS} or
 * more; with when the next one still hidden is due, if any. A job that ends sooner shows only its outcome, as a
 * file manager shows no progress for a copy done at once: a bar that flashes for a moment tells nothing, and
 * drawing it takes the computer from the job itself.
 */
export function jobsShown(
  jobs: readonly JobView[],
  now: number,
): { shown: readonly JobView[]; nextAt?: number } {
  // A clock set back makes the time run negative: such a job shows rather than hiding until the clock catches up.
  const hidden = jobs.filter((job) => {
    const running = now - job.startedAt;
    return job.status === 'running' && running >= 0 && running < SHOW_RUNNING_AFTER_MS;
  });
  if (hidden.length === 0) return { shown: jobs };
  return {
    shown: jobs.filter((job) => !hidden.includes(job)),
    nextAt: Math.min(...hidden.map((job) => job.startedAt + SHOW_RUNNING_AFTER_MS)),
  };
}
