import { describe, expect, it } from 'vitest';

import type { JobEvent } from '../../src/shared/contract.js';
import { JobNoticeTracker, LONG_JOB_MS } from '../../src/shared/job-notice.js';

const base = { jobId: 'j-1', vaultId: 'v-1', kind: 'add' } as const;
const started: JobEvent = { ...base, type: 'started' };
const problem = {
  path: '/Taxes/2025 divorce.pdf',
  code: 'IO',
  message: 'Could not read "/home/a/x".',
} as const;
const added = (problems: (typeof problem)[] = []): JobEvent => ({
  ...base,
  type: 'ended',
  status: 'done',
  result: {
    kind: 'add',
    report: { filesAdded: 1200, foldersAdded: 3, bytesAdded: 1, replaced: 0, skipped: 0, problems },
  },
});

/** Runs started → ended with `ms` between them; returns the notice. */
function run(ended: JobEvent, ms: number, background: boolean) {
  const tracker = new JobNoticeTracker();
  tracker.observe(started, 1_000, () => background);
  return tracker.observe(ended, 1_000 + ms, () => background);
}

describe('the notification when a job ends', () => {
  it('is shown for a long job that ended in the background, with counts only', () => {
    expect(run(added(), LONG_JOB_MS, true)).toEqual({
      title: 'Coffer: add finished',
      body: 'Added 1,200 files.',
    });
    const withProblem = run(added([problem]), LONG_JOB_MS + 1, true);
    expect(withProblem?.body).toBe('Added 1,200 files. 1 problem: open Coffer to see them.');
    // Never a name or a path from the vault or the disk: a notification can show on the lock screen.
    expect(JSON.stringify(withProblem)).not.toMatch(/divorce|Taxes|home|v-1/);
  });

  it('is not shown for a short job, in the foreground, or for a cancelled one', () => {
    expect(run(added(), LONG_JOB_MS - 1, true)).toBeNull();
    expect(run(added(), 60_000, false)).toBeNull();
    expect(run({ ...base, type: 'ended', status: 'cancelled' }, 60_000, true)).toBeNull();
  });

  it('says a job failed without its message (which may quote a path), and words restores and checks', () => {
    const failed = run(
      { ...base, type: 'ended', status: 'failed', code: 'IO', message: 'Cannot write "/home/a/secret".' },
      60_000,
      true,
    );
    expect(failed).toEqual({ title: 'Coffer: add failed', body: 'Open Coffer to see what happened.' });
    const restore: JobEvent = {
      ...base,
      kind: 'restore',
      type: 'ended',
      status: 'done',
      result: {
        kind: 'restore',
        report: { filesRestored: 1, foldersRestored: 0, bytesRestored: 5, problems: [] },
      },
    };
    expect(run(restore, 60_000, true)?.body).toBe('Restored 1 file.');
    // A file left as it was, not told to replace it, is counted as kept; another in the way is a problem.
    const kept = { path: '/a.txt', code: 'ALREADY_EXISTS', message: 'exists', kept: true } as const;
    const inTheWay = { path: '/b', code: 'ALREADY_EXISTS', message: 'a file is there' } as const;
    const withKept: JobEvent = {
      ...restore,
      result: {
        kind: 'restore',
        report: { filesRestored: 1, foldersRestored: 0, bytesRestored: 5, problems: [kept, inTheWay] },
      },
    };
    expect(run(withKept, 60_000, true)?.body).toBe(
      'Restored 1 file; kept 1 file already there. 1 problem: open Coffer to see them.',
    );
  });

  it('counts from the first event the window saw, and forgets a job once it ended', () => {
    const tracker = new JobNoticeTracker();
    const progress: JobEvent = {
      ...base,
      type: 'progress',
      progress: { filesDone: 1, filesTotal: 2, bytesDone: 1, bytesTotal: 2 },
    };
    tracker.observe(progress, 0, () => true);
    tracker.observe(progress, LONG_JOB_MS, () => true);
    expect(tracker.observe(added(), LONG_JOB_MS, () => true)).not.toBeNull();
    // Its start is forgotten: the same id ending again counts from now.
    expect(tracker.observe(added(), LONG_JOB_MS * 10, () => true)).toBeNull();
  });
});
