import { beforeEach, describe, expect, it } from 'vitest';

import type { JobEvent } from '../../src/shared/contract.js';
import {
  formatTimeLeft,
  jobFigures,
  jobsShown,
  SHOW_RUNNING_AFTER_MS,
} from '../../src/renderer/job-figures.js';
import { previewKind } from '../../src/shared/preview-kind.js';
import {
  dismissEndedJobs,
  dismissJob,
  jobEvent,
  followMovedFolders,
  placeJob,
  showVault,
  useCoffer,
  vaultLocked,
  type JobView,
} from '../../src/renderer/store.js';
import { VAULT } from '../components/vault-summary.js';

const base = { vaultId: 'v1', kind: 'restore' } as const;
const progress = { filesDone: 1, filesTotal: 4, bytesDone: 100, bytesTotal: 400 };

describe('the jobs in the window', () => {
  beforeEach(() => {
    showVault(VAULT);
    vaultLocked('v1');
    showVault(VAULT);
  });

  it('keeps several jobs in the order they started, with every problem of each', () => {
    const events: JobEvent[] = [
      { ...base, jobId: 'a', type: 'started' },
      { ...base, jobId: 'b', kind: 'add', type: 'started' },
      { ...base, jobId: 'a', type: 'progress', progress },
      {
        ...base,
        jobId: 'a',
        type: 'problem',
        problem: { path: '/x', code: 'INTEGRITY', message: 'damaged' },
      },
      { ...base, jobId: 'a', type: 'problem', problem: { path: '/y', code: 'IO', message: 'unreadable' } },
    ];
    for (const event of events) jobEvent(event);
    const { jobs } = useCoffer.getState();
    expect(jobs.map((job) => job.jobId)).toEqual(['a', 'b']);
    expect(jobs[0]?.progress).toEqual(progress);
    expect(jobs[0]?.problems.map((problem) => problem.path)).toEqual(['/x', '/y']);
    expect(jobs[1]?.status).toBe('running');
  });

  it('keeps a finished check’s report, and forgets every job when the vault locks', () => {
    const report = {
      ok: false,
      filesChecked: 2,
      bytesChecked: 10,
      problems: [{ path: '/x', code: 'INTEGRITY', message: 'damaged' }],
      unreferenced: [{ path: 'packs/p.pack', size: 5 }],
      recovered: [],
      deleted: [],
    };
    jobEvent({
      ...base,
      kind: 'verify',
      jobId: 'c',
      type: 'ended',
      status: 'done',
      result: { kind: 'verify', report },
    });
    const [check] = useCoffer.getState().jobs;
    expect(check?.verifyReport).toEqual(report);
    expect(check?.summary).toBe('Damage found.');
    vaultLocked('v1');
    expect(useCoffer.getState().jobs).toEqual([]);
  });

  it('counts the jobs that ended, which is what the browser watches: not their progress, nor a dismissal', () => {
    const ended = { kind: 'add', type: 'ended', status: 'cancelled' } as const;
    const seen: number[] = [];
    const unsubscribe = useCoffer.subscribe((state, before) => {
      if (state.jobsEnded !== before.jobsEnded) seen.push(state.jobsEnded);
    });
    jobEvent({ ...base, jobId: 'a', type: 'started' });
    jobEvent({ ...base, jobId: 'b', type: 'started' });
    for (let i = 0; i < 10; i++) jobEvent({ ...base, jobId: 'a', type: 'progress', progress });
    jobEvent({ ...base, ...ended, jobId: 'a' });
    dismissJob('a');
    jobEvent({ ...base, ...ended, jobId: 'b' });
    unsubscribe();
    expect(seen).toEqual([1, 2]);
    expect(useCoffer.getState().jobs.map((job) => job.jobId)).toEqual(['b']);
    vaultLocked('v1');
    expect(useCoffer.getState().jobsEnded).toBe(0);
  });

  it('counts an add’s committed rows for the browser, leaving the job rows as they were', () => {
    jobEvent({ ...base, jobId: 'a', type: 'started' });
    const { jobs } = useCoffer.getState();
    jobEvent({ ...base, jobId: 'a', type: 'committed', filesFinished: 3 });
    jobEvent({ ...base, jobId: 'a', type: 'committed', filesFinished: 9 });
    expect(useCoffer.getState().addsCommitted).toBe(2);
    expect(useCoffer.getState().jobs).toBe(jobs);
    vaultLocked('v1');
    expect(useCoffer.getState().addsCommitted).toBe(0);
  });

  it('replaces only the job an event is about, so the other rows keep their objects', () => {
    jobEvent({ ...base, jobId: 'a', type: 'started' });
    jobEvent({ ...base, jobId: 'b', type: 'started' });
    const [first, second] = useCoffer.getState().jobs;
    jobEvent({ ...base, jobId: 'b', type: 'progress', progress });
    const [firstAfter, secondAfter] = useCoffer.getState().jobs;
    expect(firstAfter).toBe(first);
    expect(secondAfter).not.toBe(second);
    expect(secondAfter?.progress).toEqual(progress);
  });

  it('ignores the events of another vault’s jobs', () => {
    jobEvent({ ...base, vaultId: 'other', jobId: 'z', type: 'started' });
    expect(useCoffer.getState().jobs).toEqual([]);
  });

  it('keeps where each job puts its files, noted before or after its events, until dismissed or locked', () => {
    placeJob('v1', 'early', { into: '/Reports' });
    jobEvent({ ...base, jobId: 'early', type: 'started' });
    jobEvent({ ...base, jobId: 'late', type: 'started' });
    jobEvent({ ...base, jobId: 'late', type: 'ended', status: 'cancelled' });
    placeJob('v1', 'late', { to: '/home/u/Restored' });
    // Noted as the job's id comes back, for a job that ended and was dismissed meanwhile: no row comes of it.
    placeJob('v1', 'gone', { into: '/' });
    expect(useCoffer.getState().jobs.map((job) => job.jobId)).toEqual(['early', 'late']);
    expect(useCoffer.getState().places).toMatchObject({
      early: { into: '/Reports' },
      late: { to: '/home/u/Restored' },
    });
    dismissEndedJobs();
    expect(useCoffer.getState().places).not.toHaveProperty('late');
    expect(useCoffer.getState().places).toHaveProperty('early');
    // Another vault's job, or any once the vault locked, is not noted: the names would outlive the lock.
    placeJob('other', 'elsewhere', { into: '/' });
    expect(useCoffer.getState().places).not.toHaveProperty('elsewhere');
    vaultLocked('v1');
    expect(useCoffer.getState().places).toEqual({});
    placeJob('v1', 'after-lock', { into: '/' });
    expect(useCoffer.getState().places).toEqual({});
  });

  it('follows an add’s folder when it, or a folder holding it, is renamed or moved, and nothing else', () => {
    placeJob('v1', 'reports', { into: '/Work/Reports' });
    placeJob('v1', 'reports-old', { into: '/Work/Reports-old' });
    placeJob('v1', 'top', { into: '/' });
    placeJob('v1', 'restore', { to: '/home/u/Work' });
    const before = useCoffer.getState().places;
    followMovedFolders([{ from: '/Elsewhere', to: '/Gone' }]);
    expect(useCoffer.getState().places).toBe(before);
    followMovedFolders([{ from: '/Work', to: '/Archive/Work 2024' }]);
    expect(useCoffer.getState().places).toEqual({
      reports: { into: '/Archive/Work 2024/Reports' },
      'reports-old': { into: '/Archive/Work 2024/Reports-old' },
      top: { into: '/' },
      restore: { to: '/home/u/Work' },
    });
    followMovedFolders([{ from: '/Archive/Work 2024/Reports', to: '/Archive/Work 2024/Q4' }]);
    expect(useCoffer.getState().places).toMatchObject({
      reports: { into: '/Archive/Work 2024/Q4' },
      'reports-old': { into: '/Archive/Work 2024/Reports-old' },
    });
    // A folder and one inside it moved together (chosen from search results): each place follows the deepest.
    followMovedFolders([
      { from: '/Archive', to: '/Old/Archive' },
      { from: '/Archive/Work 2024/Q4', to: '/Old/Q4' },
    ]);
    expect(useCoffer.getState().places).toMatchObject({
      reports: { into: '/Old/Q4' },
      'reports-old': { into: '/Old/Archive/Work 2024/Reports-old' },
    });
  });
});

describe('speed and time left', () => {
  it('averages the speed since the start and estimates the rest from it', () => {
    expect(jobFigures(progress, 0, 2000)).toEqual({ bytesPerSecond: 50, secondsLeft: 6 });
  });

  it('says nothing before any byte moved', () => {
    expect(jobFigures(undefined, 0, 1000)).toEqual({});
    expect(jobFigures({ ...progress, bytesDone: 0 }, 0, 1000)).toEqual({});
  });

  it('words the time left in seconds, minutes or hours', () => {
    expect(formatTimeLeft(0.2)).toBe('1 s left');
    expect(formatTimeLeft(42)).toBe('42 s left');
    expect(formatTimeLeft(125)).toBe('about 3 min left');
    expect(formatTimeLeft(3 * 3600 + 600)).toBe('about 3 h 10 min left');
  });
});

describe('what can be previewed', () => {
  it('by extension, whatever its case', () => {
    expect(previewKind('IMG_0412.JPG')).toEqual({ kind: 'image', type: 'image/jpeg' });
    expect(previewKind('main.rs')).toEqual({ kind: 'text' });
    expect(previewKind('song.flac')).toEqual({ kind: 'audio', type: 'audio/flac' });
    expect(previewKind('clip.webm')).toEqual({ kind: 'video', type: 'video/webm' });
    expect(previewKind('archive.zip')).toBeUndefined();
    expect(previewKind('Makefile')).toEqual({ kind: 'text' });
  });

  it('PDFs as application/pdf, rendered page by page rather than shown as text', () => {
    expect(previewKind('Passport scan.pdf')).toEqual({ kind: 'pdf', type: 'application/pdf' });
    expect(previewKind('REPORT.PDF')).toEqual({ kind: 'pdf', type: 'application/pdf' });
    expect(previewKind('notes.pdf.txt')).toEqual({ kind: 'text' });
  });
});

describe('which jobs the panel shows', () => {
  const job = (jobId: string, startedAt: number, status: JobView['status'] = 'running'): JobView => ({
    jobId,
    kind: 'add',
    status,
    problems: [],
    startedAt,
  });

  it('a running job once it has run for a while, and when the next one is due', () => {
    const jobs = [job('a', 1000), job('b', 1100), job('c', 1200)];
    expect(jobsShown(jobs, 1200)).toEqual({ shown: [], nextAt: 1000 + SHOW_RUNNING_AFTER_MS });
    const later = jobsShown(jobs, 1000 + SHOW_RUNNING_AFTER_MS + 150);
    expect(later.shown.map((shown) => shown.jobId)).toEqual(['a', 'b']);
    expect(later.nextAt).toBe(1200 + SHOW_RUNNING_AFTER_MS);
    expect(jobsShown(jobs, 1200 + SHOW_RUNNING_AFTER_MS)).toEqual({ shown: jobs });
  });

  it('a running job that seems to start in the future (the clock was set back) at once', () => {
    expect(jobsShown([job('a', 5000)], 1000)).toEqual({ shown: [job('a', 5000)] });
  });

  it('how a job ended at once, however short it was', () => {
    const jobs = [job('done', 1000, 'done'), job('failed', 1000, 'failed'), job('running', 1000)];
    const { shown, nextAt } = jobsShown(jobs, 1001);
    expect(shown.map((shown) => shown.jobId)).toEqual(['done', 'failed']);
    expect(nextAt).toBe(1000 + SHOW_RUNNING_AFTER_MS);
  });
});
