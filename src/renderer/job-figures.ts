/** Speed and time left of a running job, from its progress so far. */
import type { Progress } from '../shared/contract.js';

export interface JobFigures {
  /** Bytes per second, or undefined before there is anything to measure. */
  readonly bytesPerSecond?: number;
  /** Seconds left at the speed so far, or undefined while unknown. */
  readonly secondsLeft?: number;
}

/** The average speed since the job started; a steadier estimate than the last interval's. */
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
