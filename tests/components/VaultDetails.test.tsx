// @vitest-environment jsdom
import './dom.js';

import { act, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { installApi, onEvent } from '../../src/renderer/api.js';
import { VaultDetails } from '../../src/renderer/components/VaultDetails.js';
import { errorSentence } from '../../src/renderer/error-messages.js';
import { clearVaultContents, jobEvent, showVault } from '../../src/renderer/store.js';
import type { ResponseOf, ResultErrorCode, VaultInfo, VerifyReport } from '../../src/shared/contract.js';
import { fakeApi, Refusal, type FakeApi, type Handlers } from './fake-api.js';
import { INFO as EMPTY_INFO, VAULT } from './fixtures.js';

const INFO: VaultInfo = {
  ...EMPTY_INFO,
  kdf: [
    { opslimit: 3, memlimitKiB: 262_144 },
    { opslimit: 4, memlimitKiB: 1_048_576 },
  ],
  files: 12_345,
  folders: 67,
  totalBytes: 3_400_000_000,
  storedBytes: 3_600_000_000,
  keyIds: [1, 2],
};

const details = (info: Partial<VaultInfo> = {}): ResponseOf<'vault.info'> => ({
  ...VAULT,
  info: { ...INFO, ...info },
});

const REPORT: VerifyReport = {
  ok: true,
  filesChecked: 12,
  bytesChecked: 3_000_000,
  problems: [],
  unreferenced: [],
  recovered: [],
  deleted: [],
};

let api: FakeApi;
let stopListening: () => void = () => undefined;

function open(handlers: Handlers = {}) {
  api = fakeApi({ 'vault.info': () => details(), 'job.verify': () => ({ jobId: 'check-1' }), ...handlers });
  installApi(api);
  // As App.tsx does: the check's job events go into the store the details read its report from.
  stopListening = onEvent('job', jobEvent);
  const close = vi.fn();
  render(<VaultDetails vaultId="v1" onClose={close} />);
  return close;
}

/** The check job's start, as the back end sends it once the job runs. */
function checkStarted() {
  act(() => {
    api.emit('job', { jobId: 'check-1', vaultId: 'v1', kind: 'verify', type: 'started' });
  });
}

/** The check job's end, as the back end sends it: done with a report, stopped, or failed with its words. */
function checkEnded(
  end:
    | { status: 'done'; result: { kind: 'verify'; report: VerifyReport } }
    | { status: 'cancelled' }
    | { status: 'failed'; code: ResultErrorCode; message: string },
) {
  act(() => {
    api.emit('job', { jobId: 'check-1', vaultId: 'v1', kind: 'verify', type: 'ended', ...end });
  });
}

/** The check job's end with its report. */
function checkDone(report: VerifyReport) {
  checkEnded({ status: 'done', result: { kind: 'verify', report } });
}

/** The facts as the user reads them: each term and what follows it. */
function facts(): [string | null, string | null][] {
  const dialog = screen.getByRole('dialog', { name: 'Vault details' });
  const terms = within(dialog).getAllByRole('term');
  const definitions = within(dialog).getAllByRole('definition');
  return terms.map((term, index) => [term.textContent, definitions[index]?.textContent ?? null]);
}

const verifyRequests = () => api.calls.filter((c) => c.channel === 'job.verify').map((c) => c.request);

beforeEach(() => {
  clearVaultContents();
  showVault(VAULT);
});

afterEach(() => {
  stopListening();
});

describe('the vault details', () => {
  it('shows the counts, sizes, format, key derivation and key ids', async () => {
    open();
    await screen.findByText('Personal');
    expect(api.calls[0]).toEqual({ channel: 'vault.info', request: { vaultId: 'v1' } });
    expect(facts()).toEqual([
      ['Name', 'Personal'],
      ['Folder', '/home/u/Personal'],
      ['Files', (12_345).toLocaleString()],
      ['Folders', '67'],
      ['Size of the files', '3.4 GB'],
      ['Size on disk', '3.6 GB'],
      ['Format version', '1.1'],
      [
        'Key derivation',
        `Argon2id, 3 passes, 256 MiB memory; Argon2id, 4 passes, ${(1024).toLocaleString()} MiB memory`,
      ],
      ['Size padding', 'On: each file’s size shows only roughly (to within about 12 %)'],
      ['Data keys in the vault', 'key 1, key 2'],
    ]);
  });

  it('says when the vault is read only, has no padding, and what the user was warned of at unlock', async () => {
    open({
      'vault.info': () =>
        details({
          readOnly: true,
          contentPadding: 'none',
          keyIds: [],
          warnings: ['The vault was opened through its header backup: its header is damaged.'],
        }),
    });
    await screen.findByText('Personal');
    expect(facts().slice(-4)).toEqual([
      ['Size padding', 'Off'],
      ['Data keys in the vault', '—'],
      ['Access', 'Read only'],
      ['Warning', 'The vault was opened through its header backup: its header is damaged.'],
    ]);
  });

  it('says the vault is read only until the newer header is restored, while its header is older than its data', async () => {
    open({ 'vault.info': () => details({ headerOlderThanData: true }) });
    await screen.findByText('Personal');
    expect(facts().at(-1)).toEqual([
      'Access',
      'Read only until the newer header is restored (the header in use is older than the data)',
    ]);
  });

  it('says in words why the facts could not be read, and still offers the checks', async () => {
    open({ 'vault.info': () => new Refusal('VAULT_LOCKED') });
    expect((await screen.findByRole('alert')).textContent).toBe(errorSentence('VAULT_LOCKED'));
    expect(screen.getByRole('button', { name: 'Check vault' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Check all data' })).toBeTruthy();
  });

  it('"Check vault" checks the structure; "Check all data" reads every byte', async () => {
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'Check vault' }));
    checkDone(REPORT);
    await userEvent.click(screen.getByRole('button', { name: 'Check all data' }));
    expect(verifyRequests()).toEqual([
      { vaultId: 'v1', readData: false },
      { vaultId: 'v1', readData: true },
    ]);
  });

  it('while a check runs, says so and starts no second one; then shows its report', async () => {
    open();
    const checkVault = await screen.findByRole('button', { name: 'Check vault' });
    await userEvent.click(checkVault);
    checkStarted();
    // Shown once job.verify has answered with the check's job id, which the fake does a moment after the click.
    await screen.findByText('Checking… (progress in the jobs panel)');
    const checkAll = screen.getByRole('button', { name: 'Check all data' });
    expect(checkVault.getAttribute('aria-disabled')).toBe('true');
    expect(checkAll.getAttribute('aria-disabled')).toBe('true');
    await userEvent.click(checkAll);
    await userEvent.click(checkVault);
    expect(verifyRequests()).toHaveLength(1);

    checkDone(REPORT);
    expect(screen.queryByText('Checking… (progress in the jobs panel)')).toBeNull();
    expect(checkVault.getAttribute('aria-disabled')).toBe('false');
    const report = screen.getByRole('region', { name: 'Check report' });
    // The quick check reads each file's size and last chunk, not its bytes: it says so, and what reads them all.
    expect(within(report).getByRole('status').textContent).toBe(
      'No damage found. Checked the structure of 12 files (each one’s size and last chunk); “Check all data” reads every byte.',
    );
  });

  it('says a check waits while another job on the vault holds it back, then that it checks', async () => {
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'Check all data' }));
    act(() => {
      api.emit('job', { jobId: 'check-1', vaultId: 'v1', kind: 'verify', type: 'started' });
      api.emit('job', { jobId: 'check-1', vaultId: 'v1', kind: 'verify', type: 'waiting', waiting: true });
    });
    await screen.findByText(
      'The check waits until other work on this vault ends: a job in the jobs panel, a preview, or a file being opened in another app.',
    );
    expect(screen.queryByText('Checking… (progress in the jobs panel)')).toBeNull();
    act(() => {
      api.emit('job', { jobId: 'check-1', vaultId: 'v1', kind: 'verify', type: 'waiting', waiting: false });
    });
    await screen.findByText('Checking… (progress in the jobs panel)');
    checkDone({
      ...REPORT,
      unreferenced: [
        { path: 'a', size: 1 },
        { path: 'b', size: 2 },
      ],
    });
    const report = screen.getByRole('region', { name: 'Check report' });
    expect(
      within(report).getByText(/^2 stored files in the vault folder belong to no file.* They are kept\.$/),
    ).toBeTruthy();
  });

  it('lists what a check found damaged, and the stored files that belong to no file', async () => {
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'Check all data' }));
    checkStarted();
    await screen.findByText('Checking… (progress in the jobs panel)');
    checkDone({
      ...REPORT,
      ok: false,
      problems: [
        { path: '/photos/beach.jpg', code: 'INTEGRITY', message: 'Chunk 2 is damaged.' },
        { path: '(index)', code: 'INTEGRITY', message: 'The index snapshot does not match.' },
      ],
      unreferenced: [{ path: 'data/ab/cdef.blob', size: 2_048 }],
    });
    const report = screen.getByRole('region', { name: 'Check report' });
    expect(within(report).getByRole('status').textContent).toBe(
      'Damage found: 2 problems. Checked 12 files (3.0 MB read back intact).',
    );
    const damaged = within(report).getByRole('list', { name: 'Damaged' });
    expect(
      within(damaged)
        .getAllByRole('listitem')
        .map((item) => item.textContent),
    ).toEqual(['/photos/beach.jpg: Chunk 2 is damaged.', '(index): The index snapshot does not match.']);
    expect(
      within(report).getByText(/^1 stored file in the vault folder belongs to no file.* It is kept\.$/),
    ).toBeTruthy();
    const unreferenced = within(report).getByRole('list', { name: 'Unreferenced' });
    expect(unreferenced.textContent).toBe('data/ab/cdef.blob (2.0 kB)');
  });

  it('says in the back end’s words why a check failed', async () => {
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'Check vault' }));
    checkStarted();
    await screen.findByText('Checking… (progress in the jobs panel)');
    checkEnded({
      status: 'failed',
      code: 'IO',
      message: 'The vault folder could not be read. Check the disk.',
    });
    expect(screen.getByRole('alert').textContent).toBe('The vault folder could not be read. Check the disk.');
  });

  it('says when a check was stopped', async () => {
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'Check vault' }));
    checkStarted();
    await screen.findByText('Checking… (progress in the jobs panel)');
    checkEnded({ status: 'cancelled' });
    expect(screen.getByText('The check was stopped.')).toBeTruthy();
    expect(screen.queryByRole('region', { name: 'Check report' })).toBeNull();
  });

  it('says in words why a check could not start', async () => {
    open({ 'job.verify': () => new Refusal('BUSY') });
    await userEvent.click(await screen.findByRole('button', { name: 'Check vault' }));
    expect((await screen.findByRole('alert')).textContent).toBe(errorSentence('BUSY'));
  });

  it('closes by its Close button and by Escape', async () => {
    const close = open();
    await screen.findByText('Personal');
    await userEvent.click(screen.getByRole('button', { name: 'Close' }));
    await userEvent.keyboard('{Escape}');
    expect(close).toHaveBeenCalledTimes(2);
  });
});
