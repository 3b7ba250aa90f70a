import { Info, TriangleAlert, X } from 'lucide-react';
import { memo, useEffect, useReducer, useRef, useState } from 'react';
import '../panels.css';

import { ApiError, call, describeError } from '../api.js';
import { focusIsNowhere } from '../focus.js';
import { formatSize } from '../format.js';
import { formatTimeLeft, jobFigures, jobsShown, WAITING_FOR_OTHER_WORK } from '../job-figures.js';
import { plural } from '../../shared/plural.js';
import { dismissEndedJobs, dismissJob, useCoffer, type JobView } from '../store.js';
import { folderLabel } from '../browser/entries.js';
import { ErrorText } from './ErrorText.js';

const VERBS = {
  add: 'Adding',
  restore: 'Restoring',
  verify: 'Checking',
  reencrypt: 'Re-encrypting',
} as const;
const NOUNS = { add: 'Add', restore: 'Restore', verify: 'Check', reencrypt: 'Re-encrypt' } as const;

/**
 * After Cancel was pressed on a row, presses this soon after its job ended do not dismiss it: Cancel becomes
 * Dismiss in place, and a second click or a held Enter meant for Cancel must not take away the outcome unread.
 */
export const DISMISS_AFTER_END_MS = 750;

/** Panels with fewer ended jobs than this have no "Clear finished": each row's own Dismiss does as well. */
const CLEAR_ENDED_FROM = 2;

/**
 * Asks the back end to stop a job; resolves to the words of a refusal, or null. A Cancel pressed as the job ended
 * is refused (no such job runs); the job's end event says how it ended, so that refusal needs no words of its own.
 */
async function cancelJob(jobId: string): Promise<string | null> {
  try {
    await call('job.cancel', { jobId });
    return null;
  } catch (error) {
    return error instanceof ApiError && error.code === 'INVALID_ARGUMENT' ? null : describeError(error);
  }
}

function runningText(job: JobView, now: number): string {
  const { progress } = job;
  // Before its turn, rather than a verb for work not begun: a second add waits for the first.
  if (job.waiting === true) return `${NOUNS[job.kind]} · ${WAITING_FOR_OTHER_WORK}`;
  if (progress === undefined) return `${VERBS[job.kind]}…`;
  const parts = [
    `${progress.filesDone.toLocaleString()} of ${plural(progress.filesTotal, 'file')}`,
    `${formatSize(progress.bytesDone)} of ${formatSize(progress.bytesTotal)}`,
  ];
  const { bytesPerSecond, secondsLeft } = jobFigures(
    progress,
    job.workStartedAt ?? job.startedAt,
    job.progressAt ?? now,
  );
  if (bytesPerSecond !== undefined) parts.push(`${formatSize(bytesPerSecond)}/s`);
  if (secondsLeft !== undefined) parts.push(formatTimeLeft(secondsLeft));
  return `${VERBS[job.kind]} · ${parts.join(' · ')}`;
}

/**
 * After a dismissal took away the button that had the keyboard, gives it to the panel's first button, or, the
 * panel gone with its last job, to `elsewhere`: otherwise it would be nowhere, and Tab would start over.
 */
function keepKeyboard(elsewhere: (() => void) | undefined): void {
  requestAnimationFrame(() => {
    if (!focusIsNowhere()) return;
    const next = document.querySelector<HTMLElement>('.jobs-panel button');
    if (next) next.focus();
    else elsewhere?.();
  });
}

// Memoised: a progress event replaces only its own job's object, so the other rows are not drawn again.
const JobRow = memo(function JobRow({
  job,
  onShowInFolder,
  onEmptied,
}: {
  job: JobView;
  onShowInFolder?: ((jobId: string) => void) | undefined;
  onEmptied?: (() => void) | undefined;
}) {
  const running = job.status === 'running';
  const place = useCoffer((state) => state.places[job.jobId]);
  const vaultName = useCoffer((state) => state.vault?.name ?? '');
  const label = `${NOUNS[job.kind]} job`;
  // A file a restore left as it was, not told to replace it, is what the person chose, not a problem.
  const troubles = job.problems.filter((problem) => problem.kept !== true).length;
  const [cancelRefused, setCancelRefused] = useState<string | null>(null);
  const cancelPressed = useRef(false);
  return (
    <li className={`job job-${job.status}`} aria-label={label}>
      <div className="job-line">
        {/* Busy while it runs: its figures change many times a second, and a screen reader should hear the outcome. */}
        <span className="job-text" role="status" aria-busy={running}>
          {running
            ? runningText(job, Date.now())
            : `${job.summary ?? ''}${troubles > 0 ? ` ${plural(troubles, 'problem')}:` : ''}`}
        </span>
        {onShowInFolder && job.kind === 'restore' && job.status === 'done' && (
          <button
            type="button"
            className="small"
            onClick={() => {
              onShowInFolder(job.jobId);
            }}
          >
            Show in folder
          </button>
        )}
        {/* One button, Cancel while the job runs and Dismiss once it ended: the keyboard that pressed Cancel stays on it. */}
        <button
          type="button"
          className={running ? 'small' : 'icon-button'}
          aria-label={running ? undefined : `Dismiss ${label.toLowerCase()}`}
          onClick={() => {
            if (running) {
              cancelPressed.current = true;
              setCancelRefused(null);
              void cancelJob(job.jobId).then(setCancelRefused);
            } else if (!cancelPressed.current || Date.now() - (job.endedAt ?? 0) >= DISMISS_AFTER_END_MS) {
              dismissJob(job.jobId);
              keepKeyboard(onEmptied);
            }
          }}
        >
          {running ? 'Cancel' : <X size={16} aria-hidden="true" />}
        </button>
      </div>
      {place !== undefined && (
        <span className="job-place">
          {'into' in place ? `Into ${folderLabel(vaultName, place.into)}` : `To ${place.to}`}
        </span>
      )}
      {running && <ErrorText message={cancelRefused} />}
      {running && (
        <progress
          max={job.progress?.bytesTotal || 1}
          value={job.progress?.bytesDone ?? 0}
          aria-label={`${VERBS[job.kind]} progress`}
        />
      )}
      {job.problems.length > 0 && (
        <ul className="job-problems" aria-label={`${label} problems`}>
          {job.problems.map((problem, index) => (
            <li key={`${problem.path}-${index}`}>
              {problem.kept === true ? (
                <Info size={14} aria-hidden="true" className="info-icon" />
              ) : (
                <TriangleAlert size={14} aria-hidden="true" className="danger-icon" />
              )}
              <span>
                {problem.kept === true && <span className="visually-hidden">Kept: </span>}
                {/* The engine's message says what happened and what to do (src/core/errors.ts). */}
                <span className="problem-path">{problem.path}</span>: {problem.message}
              </span>
            </li>
          ))}
        </ul>
      )}
    </li>
  );
});

/**
 * Every add, restore and check of this vault, several at once: a bar with files, bytes, speed and time left and a
 * Cancel button while running (from a moment after it started: see {@link jobsShown}); then what happened and
 * each problem (path, what, what to do) until dismissed (one by one, or all ended jobs at once), and for a finished
 * restore "Show in folder".
 */
export function JobsPanel({
  onShowInFolder,
  onEmptied,
}: {
  /** Shows a finished restore's files in the file manager; absent where the host cannot. */
  onShowInFolder?: ((jobId: string) => void) | undefined;
  /** Takes the keyboard when its last job was dismissed from it (the panel goes with it). */
  onEmptied?: (() => void) | undefined;
}) {
  // Its own subscription: progress events (about 20 a second per job) re-render this panel, not the browser.
  const jobs = useCoffer((state) => state.jobs);
  const [reveals, reveal] = useReducer((count: number) => count + 1, 0);
  const { shown, nextAt } = jobsShown(jobs, Date.now());
  // Drawn again when the next hidden job is due, should no event of it come first; set again after each firing,
  // in case the timer fired before the clock reached it.
  useEffect(() => {
    if (nextAt === undefined) return;
    const timer = setTimeout(reveal, Math.max(0, nextAt - Date.now()));
    return () => {
      clearTimeout(timer);
    };
  }, [nextAt, reveals]);
  if (shown.length === 0) return null;
  const ended = shown.filter((job) => job.status !== 'running').length;
  return (
    <section className="jobs-panel" aria-label="Jobs">
      {ended >= CLEAR_ENDED_FROM && (
        <div className="jobs-header">
          <button
            type="button"
            className="small"
            onClick={() => {
              dismissEndedJobs();
              keepKeyboard(onEmptied);
            }}
          >
            Clear finished
          </button>
        </div>
      )}
      <ul className="jobs">
        {shown.map((job) => (
          <JobRow key={job.jobId} job={job} onShowInFolder={onShowInFolder} onEmptied={onEmptied} />
        ))}
      </ul>
    </section>
  );
}
