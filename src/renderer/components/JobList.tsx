import { X } from 'lucide-react';

import { call } from '../api.js';
import { formatSize } from '../format.js';
import { dismissJob, plural, type JobView } from '../store.js';

const VERBS = { add: 'Adding', restore: 'Restoring', verify: 'Checking' } as const;

function progressText(job: JobView): string {
  const { progress } = job;
  if (progress === undefined) return `${VERBS[job.kind]}…`;
  return `${VERBS[job.kind]} ${plural(progress.filesDone, 'file')} of ${progress.filesTotal.toLocaleString()} · ${formatSize(progress.bytesDone)} of ${formatSize(progress.bytesTotal)}`;
}

/** The jobs of this vault: a bar while running, then what happened until dismissed. */
export function JobList({ jobs }: { jobs: readonly JobView[] }) {
  if (jobs.length === 0) return null;
  return (
    <ul className="jobs" aria-label="Jobs">
      {jobs.map((job) => (
        <li key={job.jobId} className={`job job-${job.status}`}>
          {job.status === 'running' ? (
            <>
              <span className="job-text" role="status">
                {progressText(job)}
              </span>
              <progress
                max={job.progress?.bytesTotal || 1}
                value={job.progress?.bytesDone ?? 0}
                aria-label={`${VERBS[job.kind]} progress`}
              />
              <button
                type="button"
                className="small"
                onClick={() => void call('job.cancel', { jobId: job.jobId })}
              >
                Cancel
              </button>
            </>
          ) : (
            <>
              <span className="job-text" role="status">
                {job.summary}
                {job.problems > 0 && ` ${plural(job.problems, 'problem')}.`}
              </span>
              <button
                type="button"
                className="icon-button"
                aria-label="Dismiss"
                onClick={() => {
                  dismissJob(job.jobId);
                }}
              >
                <X size={16} aria-hidden="true" />
              </button>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}
