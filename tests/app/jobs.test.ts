import { afterEach, describe, expect, it, vi } from 'vitest';

import {
  COMMITTED_EVENT_EVERY_MS,
  EventCoalescer,
  JobRegistry,
  WAIT_TOLD_AFTER_MS,
} from '../../src/app/jobs.js';
import { CancelledError, IoError } from '../../src/core/errors.js';
import type { Progress } from '../../src/core/types.js';
import type { JobEvent, JobReport } from '../../src/shared/contract.js';

const progress = (filesDone: number): Progress => ({
  filesDone,
  filesTotal: 1000,
  bytesDone: 0,
  bytesTotal: 0,
});

afterEach(() => {
  vi.useRealTimers();
});

/** A job's work that runs until it is aborted, then ends cancelled, `windDownMs` later. */
const untilAborted =
  (windDownMs = 0) =>
  ({ signal }: { signal: AbortSignal }) =>
    new Promise<never>((_, reject) => {
      signal.addEventListener('abort', () => {
        setTimeout(() => {
          reject(new CancelledError());
        }, windDownMs);
      });
    });

/** A coalescer of progress every 50 ms on a clock the test sets, with fake timers; what it sent, by files done. */
function coalescerOnTestClock() {
  vi.useFakeTimers();
  const clock = { now: 0 };
  const sent: number[] = [];
  const coalescer = new EventCoalescer<Progress>((p) => sent.push(p.filesDone), {
    intervalMs: 50,
    now: () => clock.now,
  });
  return { clock, sent, coalescer };
}

describe('progress coalescing', () => {
  it('sends the first at once, then at most one per interval, always the latest, and the last on flush', () => {
    const { clock, sent, coalescer } = coalescerOnTestClock();
    for (let i = 1; i <= 1000; i++) coalescer.push(progress(i));
    expect(sent).toEqual([1]);
    clock.now = 50;
    vi.advanceTimersByTime(50);
    expect(sent).toEqual([1, 1000]);
    for (let i = 1001; i <= 1010; i++) coalescer.push(progress(i));
    expect(sent).toEqual([1, 1000]);
    coalescer.flush();
    expect(sent).toEqual([1, 1000, 1010]);
    // Nothing pending: the timer that was set sends nothing more.
    clock.now = 200;
    vi.advanceTimersByTime(200);
    expect(sent).toEqual([1, 1000, 1010]);
  });

  it('sends nothing once discarded: neither what was pending nor what is pushed later', () => {
    const { clock, sent, coalescer } = coalescerOnTestClock();
    coalescer.push(progress(1));
    coalescer.push(progress(2));
    coalescer.discard();
    clock.now = 100;
    coalescer.push(progress(3));
    coalescer.flush();
    vi.advanceTimersByTime(100);
    expect(sent).toEqual([1]);
  });

  it('turns a burst of a job into a handful of events, ending with the final progress', async () => {
    vi.useFakeTimers();
    const events: JobEvent[] = [];
    const jobs = new JobRegistry((event) => events.push(event), { now: () => 0 });
    const ended = new Promise<void>((resolve) => {
      jobs.start('v-1', 'verify', async ({ onProgress }) => {
        for (let i = 1; i <= 10_000; i++) onProgress(progress(i));
        await Promise.resolve();
        resolve();
        return {
          kind: 'verify',
          report: {
            ok: true,
            filesChecked: 10_000,
            bytesChecked: 0,
            problems: [],
            unreferenced: [],
            recovered: [],
            deleted: [],
          },
        };
      });
    });
    await ended;
    await vi.runAllTimersAsync();
    const sent = events.flatMap((event) => (event.type === 'progress' ? [event.progress.filesDone] : []));
    expect(sent).toEqual([1, 10_000]);
    expect(events.map((event) => event.type)).toEqual(['started', 'progress', 'progress', 'ended']);
  });
});

describe('job registry', () => {
  const ended = (events: JobEvent[], jobId: string): Promise<JobEvent> =>
    vi.waitFor(() => {
      const end = events.find((event) => event.jobId === jobId && event.type === 'ended');
      if (!end) throw new Error('not ended yet');
      return end;
    });

  it('reports a failure with its code, a cancel as cancelled, and runs cleanup either way', async () => {
    const events: JobEvent[] = [];
    const jobs = new JobRegistry((event) => events.push(event));
    const cleaned: string[] = [];
    const failing = jobs.start(
      'v-1',
      'add',
      () => Promise.reject(new IoError('Could not write: the disk is full.')),
      () => cleaned.push('failing'),
    );
    const cancelled = jobs.start('v-1', 'restore', untilAborted(), () => cleaned.push('cancelled'));
    expect(
      jobs
        .list()
        .map((job) => job.jobId)
        .sort(),
    ).toEqual([failing, cancelled].sort());
    jobs.cancel(cancelled);
    expect(await ended(events, failing)).toMatchObject({
      status: 'failed',
      code: 'IO',
      message: 'Could not write: the disk is full.',
      filesFinished: 0,
    });
    expect(await ended(events, cancelled)).toMatchObject({ status: 'cancelled' });
    expect(cleaned.sort()).toEqual(['cancelled', 'failing']);
    expect(jobs.list()).toEqual([]);
    expect(() => {
      jobs.cancel(cancelled);
    }).toThrow(/No such job/);
  });

  it('says how many files a stopped add or restore had finished (folders not counted); other kinds say none', async () => {
    const events: JobEvent[] = [];
    const jobs = new JobRegistry((event) => events.push(event));
    let working = 0;
    const finishing =
      (types: readonly ('file' | 'folder')[]) =>
      (context: { signal: AbortSignal; onFinished: (entry: { type: 'file' | 'folder' }) => void }) => {
        working++;
        for (const type of types) context.onFinished({ type });
        return untilAborted()(context);
      };
    const add = jobs.start('v-1', 'add', finishing(['folder', 'file', 'file', 'folder', 'file']));
    const restore = jobs.start('v-1', 'restore', finishing([]));
    const check = jobs.start('v-1', 'verify', finishing(['file']));
    await vi.waitFor(() => {
      expect(working).toBe(3);
    });
    await jobs.stop('v-1');
    expect(await ended(events, add)).toMatchObject({ status: 'cancelled', filesFinished: 3 });
    expect(await ended(events, restore)).toMatchObject({ status: 'cancelled', filesFinished: 0 });
    expect(await ended(events, check)).not.toHaveProperty('filesFinished');
  });

  it('tells an add’s committed files a second after its first commit, then at most once a second, never after its end', async () => {
    vi.useFakeTimers();
    const events: JobEvent[] = [];
    let now = 0;
    const jobs = new JobRegistry((event) => events.push(event), { now: () => now });
    let finish: (type: 'file' | 'folder') => void = () => undefined;
    let end: () => void = () => undefined;
    const work = (context: { onFinished: (entry: { type: 'file' | 'folder' }) => void }) => {
      finish = (type) => {
        context.onFinished({ type });
      };
      return new Promise<JobReport>((resolve) => {
        end = () => {
          resolve({
            kind: 'add',
            report: { filesAdded: 4, foldersAdded: 1, bytesAdded: 0, replaced: 0, skipped: 0, problems: [] },
          });
        };
      });
    };
    const add = jobs.start('v-1', 'add', work);
    const committed = () =>
      events.flatMap((event) => (event.type === 'committed' ? [event.filesFinished] : []));
    await vi.advanceTimersByTimeAsync(0);
    finish('folder');
    finish('file');
    finish('file');
    expect(committed()).toEqual([]);
    now = COMMITTED_EVENT_EVERY_MS;
    await vi.advanceTimersByTimeAsync(COMMITTED_EVENT_EVERY_MS);
    expect(committed()).toEqual([2]);
    finish('file');
    now += COMMITTED_EVENT_EVERY_MS;
    await vi.advanceTimersByTimeAsync(COMMITTED_EVENT_EVERY_MS);
    expect(committed()).toEqual([2, 3]);
    finish('file');
    end();
    await vi.runAllTimersAsync();
    // The last is told by the end, not by a 'committed' after it.
    expect(committed()).toEqual([2, 3]);
    expect(events.filter((event) => event.jobId === add).at(-1)).toMatchObject({
      type: 'ended',
      status: 'done',
    });

    // A restore's files are counted for a stop, not told as they go: nothing in the vault changed.
    jobs.start('v-1', 'restore', work);
    await vi.advanceTimersByTimeAsync(0);
    finish('file');
    now += COMMITTED_EVENT_EVERY_MS;
    await vi.advanceTimersByTimeAsync(COMMITTED_EVENT_EVERY_MS);
    end();
    await vi.runAllTimersAsync();
    expect(committed()).toEqual([2, 3]);
  });

  it('tells a wait for another job only once it has lasted a while, and then when the turn came', async () => {
    vi.useFakeTimers();
    const events: JobEvent[] = [];
    const jobs = new JobRegistry((event) => events.push(event));
    let onWaiting: (waiting: boolean) => void = () => undefined;
    jobs.start('v-1', 'reencrypt', (context) => {
      ({ onWaiting } = context);
      return new Promise<never>(() => undefined);
    });
    const told = () => events.flatMap((event) => (event.type === 'waiting' ? [event.waiting] : []));
    // The work starts a microtask after start().
    await vi.advanceTimersByTimeAsync(0);
    // A batch's short wait behind a preview's read: nothing said.
    onWaiting(true);
    vi.advanceTimersByTime(WAIT_TOLD_AFTER_MS - 1);
    onWaiting(false);
    vi.advanceTimersByTime(WAIT_TOLD_AFTER_MS);
    expect(told()).toEqual([]);
    // A long one: said once it has lasted, and its end said too.
    onWaiting(true);
    vi.advanceTimersByTime(WAIT_TOLD_AFTER_MS);
    expect(told()).toEqual([true]);
    expect(jobs.list()[0]?.waiting).toBe(true);
    onWaiting(false);
    expect(told()).toEqual([true, false]);
    expect(jobs.list()[0]?.waiting).toBe(false);
  });

  it('tells nothing of a wait once the job has ended (cancelled before its turn came)', async () => {
    vi.useFakeTimers();
    const events: JobEvent[] = [];
    const jobs = new JobRegistry((event) => events.push(event));
    const jobId = jobs.start('v-1', 'verify', ({ onWaiting, signal }) => {
      onWaiting(true);
      return new Promise<never>((_, reject) => {
        signal.addEventListener('abort', () => {
          reject(new CancelledError());
        });
      });
    });
    await vi.advanceTimersByTimeAsync(0);
    jobs.cancel(jobId);
    await vi.advanceTimersByTimeAsync(WAIT_TOLD_AFTER_MS * 2);
    expect(events.map((event) => event.type)).toEqual(['started', 'ended']);
  });

  it('stop() aborts only the jobs of that vault and settles when they ended', async () => {
    const events: JobEvent[] = [];
    const jobs = new JobRegistry((event) => events.push(event));
    const mine = jobs.start('v-1', 'verify', untilAborted());
    const other = jobs.start('v-2', 'verify', untilAborted());
    await jobs.stop('v-1');
    expect(events.find((event) => event.jobId === mine && event.type === 'ended')).toMatchObject({
      status: 'cancelled',
    });
    expect(jobs.list().map((job) => job.jobId)).toEqual([other]);
    await jobs.stop();
    expect(jobs.list()).toEqual([]);
  });

  it('stop() tells which jobs it stopped had not begun: still waiting for their first turn', async () => {
    const jobs = new JobRegistry(() => undefined);
    const progress = { filesDone: 1, filesTotal: 2, bytesDone: 1, bytesTotal: 2 };
    jobs.start('v-1', 'restore', (context) => {
      context.onWaiting(true);
      return untilAborted()(context);
    });
    jobs.start('v-1', 'add', (context) => {
      context.onWaiting(true);
      context.onWaiting(false);
      return untilAborted()(context);
    });
    // A re-encryption takes a turn per batch: waiting again after its first, it had begun.
    jobs.start('v-1', 'reencrypt', (context) => {
      context.onProgress(progress);
      context.onWaiting(true);
      return untilAborted()(context);
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(await jobs.stop('v-1')).toEqual([
      { kind: 'restore', begun: false },
      { kind: 'add', begun: true },
      { kind: 'reencrypt', begun: true },
    ]);
  });

  it('stop() answers with the kinds of the jobs it stopped, not of one cancelled before or finished regardless', async () => {
    const jobs = new JobRegistry(() => undefined);
    jobs.start('v-1', 'add', untilAborted());
    jobs.start('v-1', 'verify', untilAborted());
    // Cancelled by the user, and ending as the stop comes: the user knows of it already.
    const cancelled = jobs.start('v-1', 'reencrypt', untilAborted(10));
    // Running when the cancel comes, but it does not look at it: it ends 'done'.
    jobs.start(
      'v-1',
      'restore',
      () =>
        new Promise((resolve) => {
          setTimeout(() => {
            resolve({
              kind: 'restore',
              report: { filesRestored: 1, foldersRestored: 0, bytesRestored: 1, problems: [] },
            });
          }, 20);
        }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    jobs.cancel(cancelled);
    expect(await jobs.stop('v-1')).toEqual([
      { kind: 'add', begun: true },
      { kind: 'verify', begun: true },
    ]);
    expect(await jobs.stop('v-1')).toEqual([]);
  });
});
