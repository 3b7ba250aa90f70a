import { AlertTriangle, X } from 'lucide-react';
import '../panels.css';

import { call } from '../api.js';
import { formatSize } from '../format.js';
import { formatTimeLeft, jobFigures } from '../job-figures.js';
import { dismissJob, plural, type JobView } from '../store.js';

const VERBS = { add: 'Adding', restore: 'Restoring', verify: 'Checking' } as const;
const NOUNS = { add: 'Add', restore: 'Restore', verify: 'Check' } as const;

/** What a user can do about a problem, by its engine error code. */
const NEXT_STEPS: Partial<Record<string, string>> = {
  INTEGRITY: 'The stored copy is damaged: restore this file from a backup of the vault folder.',
  NOT_FOUND: 'It was moved or deleted meanwhile; check the path and try again.',
  ALREADY_EXISTS: 'Restore again and choose to overwrite, or pick another folder.',
  IO: 'Check the disk and that you may read and write there, then try again.',
  SOURCE_CHANGED: 'The file changed while it was read; add it again once it is not in use.',
  INVALID_NAME: 'Rename it to something every system can store, then add it again.',
};

function nextStep(code: string): string {
  return NEXT_STEPS[code] ?? 'Try again; if it keeps happening, check the vault (Vault details).';
}

function runningText(job: JobView, now: number): string {
  const { progress } = job;
  if (progress === undefined) return `${VERBS[job.kind]}…`;
  const parts = [
    `${progress.filesDone.toLocaleString()} of ${plural(progress.filesTotal, 'file')}`,
    `${formatSize(progress.bytesDone)} of ${formatSize(progress.bytesTotal)}`,
  ];
  const { bytesPerSecond, secondsLeft } = jobFigures(progress, job.startedAt, job.progressAt ?? now);
  if (bytesPerSecond !== undefined) parts.push(`${formatSize(bytesPerSecond)}/s`);
  if (secondsLeft !== undefined) parts.push(formatTimeLeft(secondsLeft));
  return `${VERBS[job.kind]} · ${parts.join(' · ')}`;
}

function JobRow({ job }: { job: JobView }) {
  const running = job.status === 'running';
  const label = `${NOUNS[job.kind]} job`;
  return (
    <li className={`job job-${job.status}`} aria-label={label}>
      <div className="job-line">
        <span className="job-text" role="status">
          {running
            ? runningText(job, Date.now())
            : `${job.summary ?? ''}${job.problems.length > 0 ? ` ${plural(job.problems.length, 'problem')}:` : ''}`}
        </span>
        {running ? (
          <button
            type="button"
            className="small"
            onClick={() => void call('job.cancel', { jobId: job.jobId })}
          >
            Cancel
          </button>
        ) : (
          <button
            type="button"
            className="icon-button"
            aria-label={`Dismiss ${label.toLowerCase()}`}
            onClick={() => {
              dismissJob(job.jobId);
            }}
          >
            <X size={16} aria-hidden="true" />
          </button>
        )}
      </div>
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
              <AlertTriangle size={14} aria-hidden="true" className="danger-icon" />
              <span>
                <span className="problem-path">{problem.path}</span>: {problem.message}{' '}
                <span className="muted">{nextStep(problem.code)}</span>
              </span>
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/**
 * Every add, restore and check of this vault, several at once: a bar with files, bytes, speed and time left and a
 * Cancel button while running; then what happened and each problem (path, what, what to do) until dismissed.
 */
export function JobsPanel({ jobs }: { jobs: readonly JobView[] }) {
  if (jobs.length === 0) return null;
  return (
    <section className="jobs-panel" aria-label="Jobs">
      <ul className="jobs">
        {jobs.map((job) => (
          <JobRow key={job.jobId} job={job} />
        ))}
      </ul>
    </section>
  );
}
