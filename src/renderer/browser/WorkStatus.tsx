import { LoaderCircle } from 'lucide-react';

import { WAITING_FOR_ANOTHER_JOB } from '../job-figures.js';
import { useCoffer } from '../store.js';

/** A change under way that takes long enough to need saying (a large delete), and the jobs it waits to end. */
export interface WorkUnderWay {
  /** What it does, in words, without the closing ellipsis. */
  readonly words: string;
  /** The jobs that ran on the vault when it was asked for: a change that runs alone starts once they have ended. */
  readonly behind: ReadonlySet<string>;
}

/** Words for a change that runs alone on the vault (a delete), to show in {@link WorkStatus} while it runs. */
export function workThatRunsAlone(words: string): WorkUnderWay {
  const running = useCoffer.getState().jobs.filter((job) => job.status === 'running');
  return { words, behind: new Set(running.map((job) => job.jobId)) };
}

/**
 * The status bar's region for work under way: what it does with a spinner, and that it waits while a job it must
 * not run beside has not ended (the engine admits a delete only alone, so it waits for every job before it).
 */
export function WorkStatus({ work }: { work: WorkUnderWay | null }) {
  const waits = useCoffer(
    (state) =>
      work !== null && state.jobs.some((job) => job.status === 'running' && work.behind.has(job.jobId)),
  );
  return (
    <span role="status" aria-label="Work under way" className="status-working">
      {work !== null && (
        <>
          <LoaderCircle size={14} aria-hidden="true" className="spin" />{' '}
          {waits ? `${work.words} · ${WAITING_FOR_ANOTHER_JOB}` : `${work.words}…`}
        </>
      )}
    </span>
  );
}
