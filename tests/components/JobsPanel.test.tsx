// @vitest-environment jsdom
import './dom.js';

import { act, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { installApi, onEvent } from '../../src/renderer/api.js';
import { DISMISS_AFTER_END_MS, JobsPanel } from '../../src/renderer/components/JobsPanel.js';
import { clearVaultContents, jobEvent, showVault } from '../../src/renderer/store.js';
import type { JobEvent, JobKind, Problem, Progress } from '../../src/shared/contract.js';
import { fakeApi, Refusal, type FakeApi } from './fake-api.js';
import { requests, VAULT } from './fixtures.js';

/** How long a job runs before the panel shows it (job-figures' SHOW_RUNNING_AFTER_MS, as a user waits it). */
const SHOWN_AFTER_MS = 400;

let api: FakeApi;
let stopListening: () => void;

beforeEach(() => {
  // Speed, time left and when a running job shows come from Date.now() and a timer: the clock is the test's.
  // Buttons are pressed with fireEvent, not user-event: Testing Library's async wrapper around user-event waits
  // on a setTimeout that Vitest's fake timers never fire (it only advances Jest's), so every press would hang.
  vi.useFakeTimers({ now: new Date('2025-01-01T12:00:00Z') });
  api = fakeApi({ 'job.cancel': () => null });
  installApi(api);
  clearVaultContents();
  showVault(VAULT);
  // As App.tsx does: the back end's job events go into the store the panel reads.
  stopListening = onEvent('job', jobEvent);
});

afterEach(() => {
  stopListening();
  vi.useRealTimers();
});

/** A job event without what every event of the job carries (its id, vault and kind). */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Sends one job event from the back end, as the window would receive it. */
function emit(jobId: string, kind: JobKind, event: DistributiveOmit<JobEvent, 'jobId' | 'vaultId' | 'kind'>) {
  act(() => {
    api.emit('job', { jobId, vaultId: VAULT.vaultId, kind, ...event });
  });
}

const progress = (jobId: string, kind: JobKind, figures: Progress) => {
  emit(jobId, kind, { type: 'progress', progress: figures });
};
const problem = (jobId: string, kind: JobKind, reported: Problem) => {
  emit(jobId, kind, { type: 'problem', problem: reported });
};

function wait(ms: number) {
  act(() => {
    vi.advanceTimersByTime(ms);
  });
}

function press(button: HTMLElement) {
  fireEvent.click(button);
}

const row = (name: string) => screen.getByRole('listitem', { name });

/** Has the back end refuse every Cancel with `refusal`, the job events still reaching the store. */
function answerCancelWith(refusal: Refusal) {
  api = fakeApi({ 'job.cancel': () => refusal });
  installApi(api);
  stopListening();
  stopListening = onEvent('job', jobEvent);
}

describe('the jobs panel', () => {
  it('shows a running job once it has run for a moment, even if no event comes meanwhile', () => {
    render(<JobsPanel />);
    emit('j1', 'add', { type: 'started' });
    expect(screen.queryByRole('region', { name: 'Jobs' })).toBeNull();
    wait(SHOWN_AFTER_MS);
    const add = row('Add job');
    expect(within(add).getByRole('status').textContent).toBe('Adding…');
    expect(within(add).getByRole('button', { name: 'Cancel' })).toBeTruthy();
  });

  it('keeps the keyboard on the button that cancelled a job, which then dismisses it; the figures wait for the outcome', async () => {
    render(<JobsPanel />);
    emit('j1', 'add', { type: 'started' });
    wait(SHOWN_AFTER_MS);
    const add = row('Add job');
    // Busy while it runs: a screen reader hears the outcome, not each of its many figures.
    expect(within(add).getByRole('status').getAttribute('aria-busy')).toBe('true');
    const cancel = within(add).getByRole('button', { name: 'Cancel' });
    cancel.focus();
    press(cancel);
    await act(async () => {
      await Promise.resolve();
    });
    expect(requests(api, 'job.cancel')).toEqual([{ jobId: 'j1' }]);
    emit('j1', 'add', { type: 'ended', status: 'cancelled', filesFinished: 2 });
    expect(within(add).getByRole('status').textContent).toMatch(/^Stopped after adding 2 files: those are/);
    const dismiss = within(add).getByRole('button', { name: 'Dismiss add job' });
    expect(document.activeElement).toBe(dismiss);
    expect(within(add).getByRole('status').getAttribute('aria-busy')).toBe('false');
    // A second press meant for Cancel (a double click, a held Enter) does not take the outcome away unread.
    press(dismiss);
    expect(row('Add job')).toBe(add);
    wait(DISMISS_AFTER_END_MS);
    press(dismiss);
    expect(screen.queryByRole('listitem', { name: 'Add job' })).toBeNull();
  });

  it('says a job waits for another on the vault rather than that it works, until its turn comes', () => {
    render(<JobsPanel />);
    emit('j1', 'add', { type: 'started' });
    emit('j2', 'add', { type: 'started' });
    emit('j2', 'add', { type: 'waiting', waiting: true });
    wait(SHOWN_AFTER_MS);
    const [first, second] = screen.getAllByRole('listitem', { name: 'Add job' });
    if (first === undefined || second === undefined) throw new Error('two add jobs expected');
    expect(within(first).getByRole('status').textContent).toBe('Adding…');
    expect(within(second).getByRole('status').textContent).toBe(
      'Add · waiting for other work on this vault to end…',
    );
    emit('j2', 'add', { type: 'waiting', waiting: false });
    expect(within(second).getByRole('status').textContent).toBe('Adding…');
  });

  it('says a waiting check waits for other work, which need not be a job (a preview being read, say)', () => {
    render(<JobsPanel />);
    emit('c1', 'verify', { type: 'started' });
    emit('c1', 'verify', { type: 'waiting', waiting: true });
    wait(SHOWN_AFTER_MS);
    expect(within(row('Check job')).getByRole('status').textContent).toBe(
      'Check · waiting for other work on this vault to end…',
    );
  });

  it('shows only the outcome of a job that ended at once, with no bar that flashes', () => {
    render(<JobsPanel />);
    emit('j1', 'add', { type: 'started' });
    emit('j1', 'add', {
      type: 'ended',
      status: 'done',
      result: {
        kind: 'add',
        report: { filesAdded: 3, foldersAdded: 0, bytesAdded: 30, replaced: 1, skipped: 2, problems: [] },
      },
    });
    const add = row('Add job');
    expect(within(add).getByRole('status').textContent).toBe(
      'Added 3 files (1 replaced); skipped 2 existing names.',
    );
    expect(screen.queryByRole('progressbar')).toBeNull();
    expect(screen.queryByRole('button', { name: 'Cancel' })).toBeNull();
  });

  it('shows files, bytes, speed and time left of a running job, and a bar of the bytes done', () => {
    render(<JobsPanel />);
    emit('j1', 'restore', { type: 'started' });
    wait(2000);
    progress('j1', 'restore', { filesDone: 3, filesTotal: 10, bytesDone: 2_000_000, bytesTotal: 10_000_000 });
    const restore = row('Restore job');
    // 2 MB in 2 s: 1 MB/s, so the 8 MB left take 8 s.
    expect(within(restore).getByRole('status').textContent).toBe(
      'Restoring · 3 of 10 files · 2.0 MB of 10.0 MB · 1.0 MB/s · 8 s left',
    );
    const bar = within(restore).getByRole('progressbar', { name: 'Restoring progress' });
    expect(bar.getAttribute('value')).toBe('2000000');
    expect(bar.getAttribute('max')).toBe('10000000');

    wait(58_000);
    progress('j1', 'restore', { filesDone: 9, filesTotal: 10, bytesDone: 6_000_000, bytesTotal: 10_000_000 });
    // 6 MB in 60 s: 100 kB/s, so the 4 MB left take 40 s.
    expect(within(restore).getByRole('status').textContent).toBe(
      'Restoring · 9 of 10 files · 6.0 MB of 10.0 MB · 100.0 kB/s · 40 s left',
    );
  });

  it('asks the back end to cancel the job whose Cancel was pressed, and says when it stopped', () => {
    render(<JobsPanel />);
    emit('j1', 'verify', { type: 'started' });
    wait(SHOWN_AFTER_MS);
    press(within(row('Check job')).getByRole('button', { name: 'Cancel' }));
    expect(api.calls).toEqual([{ channel: 'job.cancel', request: { jobId: 'j1' } }]);
    emit('j1', 'verify', { type: 'ended', status: 'cancelled' });
    expect(within(row('Check job')).getByRole('status').textContent).toBe(
      'Stopped. Run “Check all data” again from Vault details.',
    );
    expect(screen.queryByRole('button', { name: 'Cancel' })).toBeNull();
  });

  // A refusal left unhandled fails the run (Vitest reports unhandled rejections as errors).
  it('a Cancel pressed as the job ended leaves no error behind: the end says how it went', async () => {
    answerCancelWith(new Refusal('INVALID_ARGUMENT', 'No such job is running.'));
    render(<JobsPanel />);
    emit('j1', 'add', { type: 'started' });
    wait(SHOWN_AFTER_MS);
    press(within(row('Add job')).getByRole('button', { name: 'Cancel' }));
    emit('j1', 'add', {
      type: 'ended',
      status: 'done',
      result: {
        kind: 'add',
        report: { filesAdded: 3, foldersAdded: 0, bytesAdded: 30, replaced: 0, skipped: 0, problems: [] },
      },
    });
    await act(async () => {
      await vi.runAllTimersAsync();
    });
    expect(api.calls).toEqual([{ channel: 'job.cancel', request: { jobId: 'j1' } }]);
    expect(within(row('Add job')).getByRole('status').textContent).toBe('Added 3 files.');
  });

  it('says in words when a Cancel is refused while the job runs on', async () => {
    answerCancelWith(new Refusal('INTERNAL', 'socket closed'));
    render(<JobsPanel />);
    emit('j1', 'add', { type: 'started' });
    wait(SHOWN_AFTER_MS);
    press(within(row('Add job')).getByRole('button', { name: 'Cancel' }));
    await act(async () => {
      await vi.runAllTimersAsync();
    });
    expect(within(row('Add job')).getByRole('alert').textContent).toMatch(
      /^Something unexpected went wrong inside Coffer/,
    );
  });

  it('lists each problem with its path and the engine’s words for what happened and what to do', () => {
    render(<JobsPanel />);
    emit('j1', 'restore', { type: 'started' });
    const reported = [
      {
        path: '/photos/beach.jpg',
        code: 'INTEGRITY',
        message: 'Its contents are damaged. Restore it from a backup of the vault folder.',
      },
      {
        path: '/notes.txt',
        code: 'ALREADY_EXISTS',
        message: 'A file of that name is already in the destination. Restore with "Replace" to overwrite it.',
        kept: true,
      },
      {
        path: '/drafts',
        code: 'ALREADY_EXISTS',
        message: 'A file is where the folder would go, so the folder was not restored.',
      },
    ] as const;
    for (const each of reported) problem('j1', 'restore', each);
    emit('j1', 'restore', {
      type: 'ended',
      status: 'done',
      result: {
        kind: 'restore',
        report: { filesRestored: 5, foldersRestored: 1, bytesRestored: 500, problems: reported },
      },
    });
    const restore = row('Restore job');
    // A file left as it was, as the restore was told, is said as kept, not counted among the problems.
    // Another file in the way (a folder's place taken) is a problem all the same.
    expect(within(restore).getByRole('status').textContent).toBe(
      'Restored 5 files; kept 1 file already there. 2 problems:',
    );
    const problems = within(restore).getByRole('list', { name: 'Restore job problems' });
    expect(
      within(problems)
        .getAllByRole('listitem')
        .map((item) => item.textContent),
    ).toEqual([
      '/photos/beach.jpg: Its contents are damaged. Restore it from a backup of the vault folder.',
      'Kept: /notes.txt: A file of that name is already in the destination. Restore with "Replace" to overwrite it.',
      '/drafts: A file is where the folder would go, so the folder was not restored.',
    ]);
    // Rendered without onShowInFolder: a host that cannot show files offers no button that would fail.
    expect(within(restore).queryByRole('button', { name: 'Show in folder' })).toBeNull();
  });

  it('says in the back end’s words why a job failed', () => {
    render(<JobsPanel />);
    emit('j1', 'add', { type: 'started' });
    emit('j1', 'add', {
      type: 'ended',
      status: 'failed',
      code: 'IO',
      message: 'The disk is full. Free some space and add again.',
    });
    expect(within(row('Add job')).getByRole('status').textContent).toBe(
      'The disk is full. Free some space and add again.',
    );
  });

  it('measures the speed from when the work began, not the time the job waited for another', () => {
    render(<JobsPanel />);
    emit('add-2', 'add', { type: 'started' });
    wait(10_000);
    progress('add-2', 'add', { filesDone: 0, filesTotal: 4, bytesDone: 0, bytesTotal: 2000 });
    wait(1000);
    progress('add-2', 'add', { filesDone: 1, filesTotal: 4, bytesDone: 500, bytesTotal: 2000 });
    expect(within(row('Add job')).getByRole('status').textContent).toBe(
      'Adding · 1 of 4 files · 500 B of 2.0 kB · 500 B/s · 3 s left',
    );
  });

  it('measures the speed from the end of the wait when the first progress after it already counts bytes', () => {
    render(<JobsPanel />);
    emit('add-2', 'add', { type: 'started' });
    emit('add-2', 'add', { type: 'waiting', waiting: true });
    wait(10_000);
    emit('add-2', 'add', { type: 'waiting', waiting: false });
    wait(1000);
    progress('add-2', 'add', { filesDone: 1, filesTotal: 4, bytesDone: 500, bytesTotal: 2000 });
    expect(within(row('Add job')).getByRole('status').textContent).toBe(
      'Adding · 1 of 4 files · 500 B of 2.0 kB · 500 B/s · 3 s left',
    );
  });

  it('counts the waits of a job between its batches in its speed: it will wait again', () => {
    render(<JobsPanel />);
    emit('re', 'reencrypt', { type: 'started' });
    wait(1000);
    progress('re', 'reencrypt', { filesDone: 1, filesTotal: 4, bytesDone: 1000, bytesTotal: 4000 });
    emit('re', 'reencrypt', { type: 'waiting', waiting: true });
    wait(1000);
    emit('re', 'reencrypt', { type: 'waiting', waiting: false });
    wait(2000);
    progress('re', 'reencrypt', { filesDone: 2, filesTotal: 4, bytesDone: 2000, bytesTotal: 4000 });
    // 2 kB in 4 s, the wait included: 500 B/s, so the 2 kB left take 4 s.
    expect(within(row('Re-encrypt job')).getByRole('status').textContent).toBe(
      'Re-encrypting · 2 of 4 files · 2.0 kB of 4.0 kB · 500 B/s · 4 s left',
    );
  });

  it('keeps several jobs apart: each row its own figures, and Cancel cancels only its own job', () => {
    render(<JobsPanel />);
    emit('add-1', 'add', { type: 'started' });
    emit('check-1', 'verify', { type: 'started' });
    wait(1000);
    progress('add-1', 'add', { filesDone: 1, filesTotal: 4, bytesDone: 500, bytesTotal: 2000 });
    progress('check-1', 'verify', { filesDone: 2, filesTotal: 7, bytesDone: 3000, bytesTotal: 9000 });
    expect(screen.getAllByRole('listitem').map((item) => item.getAttribute('aria-label'))).toEqual([
      'Add job',
      'Check job',
    ]);
    expect(within(row('Add job')).getByRole('status').textContent).toBe(
      'Adding · 1 of 4 files · 500 B of 2.0 kB · 500 B/s · 3 s left',
    );
    expect(within(row('Check job')).getByRole('status').textContent).toBe(
      'Checking · 2 of 7 files · 3.0 kB of 9.0 kB · 3.0 kB/s · 2 s left',
    );
    press(within(row('Check job')).getByRole('button', { name: 'Cancel' }));
    expect(api.calls).toEqual([{ channel: 'job.cancel', request: { jobId: 'check-1' } }]);
  });

  it('keeps an ended job until it is dismissed, and the other jobs after', () => {
    render(<JobsPanel />);
    emit('add-1', 'add', { type: 'started' });
    emit('add-1', 'add', { type: 'ended', status: 'cancelled' });
    emit('check-1', 'verify', { type: 'started' });
    wait(SHOWN_AFTER_MS);
    press(within(row('Add job')).getByRole('button', { name: 'Dismiss add job' }));
    expect(screen.queryByRole('listitem', { name: 'Add job' })).toBeNull();
    expect(row('Check job')).toBeTruthy();
  });

  it('clears every ended job at once, the running ones staying, once two have ended', () => {
    render(<JobsPanel />);
    const clear = () => screen.queryByRole('button', { name: 'Clear finished' });
    emit('add-1', 'add', { type: 'started' });
    emit('add-1', 'add', { type: 'ended', status: 'cancelled' });
    emit('check-1', 'verify', { type: 'started' });
    wait(SHOWN_AFTER_MS);
    expect(clear()).toBeNull();
    emit('restore-1', 'restore', { type: 'started' });
    emit('restore-1', 'restore', {
      type: 'ended',
      status: 'failed',
      code: 'IO',
      message: 'The disk is full.',
    });
    press(clear() as HTMLElement);
    expect(screen.getAllByRole('listitem').map((item) => item.getAttribute('aria-label'))).toEqual([
      'Check job',
    ]);
    expect(clear()).toBeNull();
  });

  it('keeps the keyboard in the panel after Clear finished, and hands it on when the panel goes', () => {
    const emptied = vi.fn();
    render(<JobsPanel onEmptied={emptied} />);
    for (const jobId of ['add-1', 'add-2']) {
      emit(jobId, 'add', { type: 'started' });
      emit(jobId, 'add', { type: 'ended', status: 'cancelled' });
    }
    emit('check-1', 'verify', { type: 'started' });
    wait(SHOWN_AFTER_MS);
    const clear = screen.getByRole('button', { name: 'Clear finished' });
    clear.focus();
    press(clear);
    wait(50);
    expect(document.activeElement).toBe(within(row('Check job')).getByRole('button', { name: 'Cancel' }));
    emit('check-1', 'verify', { type: 'ended', status: 'cancelled' });
    const dismiss = within(row('Check job')).getByRole('button', { name: 'Dismiss check job' });
    dismiss.focus();
    press(dismiss);
    wait(50);
    expect(screen.queryByRole('region', { name: 'Jobs' })).toBeNull();
    expect(emptied).toHaveBeenCalledOnce();
  });

  it('offers "Show in folder" for a finished restore where the host can, naming the job', () => {
    const showInFolder = vi.fn();
    render(<JobsPanel onShowInFolder={showInFolder} />);
    for (const [jobId, kind] of [
      ['restore-1', 'restore'],
      ['add-1', 'add'],
    ] as const) {
      emit(jobId, kind, { type: 'started' });
      emit(jobId, kind, {
        type: 'ended',
        status: 'done',
        result:
          kind === 'restore'
            ? { kind, report: { filesRestored: 1, foldersRestored: 0, bytesRestored: 1, problems: [] } }
            : {
                kind,
                report: {
                  filesAdded: 1,
                  foldersAdded: 0,
                  bytesAdded: 1,
                  replaced: 0,
                  skipped: 0,
                  problems: [],
                },
              },
      });
    }
    expect(within(row('Add job')).queryByRole('button', { name: 'Show in folder' })).toBeNull();
    press(within(row('Restore job')).getByRole('button', { name: 'Show in folder' }));
    expect(showInFolder).toHaveBeenCalledWith('restore-1');
  });
});
