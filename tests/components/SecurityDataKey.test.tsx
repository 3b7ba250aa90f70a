// @vitest-environment jsdom
import './dom.js';

import { act, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import type { JobEvent } from '../../src/shared/contract.js';
import { type FakeApi, Refusal } from './fake-api.js';
import {
  expectToldAndFocused,
  openSecurity,
  openTab,
  passphraseSlot,
  vaultInfo,
  type SecurityPage,
} from './security-page.js';
import { requests, settle } from './fixtures.js';

const TWO_KEYS = vaultInfo([passphraseSlot(0, 'moderate', true)], { keyIds: [1, 2] });

/** The data-key facts as the user reads them: each term and what follows it. */
function facts(): [string | null, string | null][] {
  const panel = screen.getByRole('tabpanel');
  const definitions = within(panel).getAllByRole('definition');
  return within(panel)
    .getAllByRole('term')
    .map((term, index) => [term.textContent, definitions[index]?.textContent ?? null]);
}

/** A job event without what every event of the re-encryption carries (its id, vault and kind). */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Sends one event of the re-encryption job, as the back end does while it runs. */
function reencryption(api: FakeApi, event: DistributiveOmit<JobEvent, 'jobId' | 'vaultId' | 'kind'>) {
  act(() => {
    api.emit('job', { jobId: 'job-9', vaultId: 'v1', kind: 'reencrypt', ...event });
  });
}

const reencryptButton = () => screen.getByRole('button', { name: 'Rotate and re-encrypt' });

/** Opens the Data key tab and presses "Rotate and re-encrypt": the back end starts it as job-9. */
async function startReencryption(): Promise<SecurityPage> {
  const page = await openSecurity(TWO_KEYS, { 'job.reencrypt': () => ({ jobId: 'job-9' }) });
  await openTab('Data key');
  await userEvent.click(reencryptButton());
  await settle();
  reencryption(page.api, { type: 'started' });
  return page;
}

describe('the data key', () => {
  it('shows the data keys in the vault and the one new data is written with', async () => {
    await openSecurity(TWO_KEYS);
    await openTab('Data key');
    expect(facts()).toEqual([
      ['Data keys in the vault', 'key 1, key 2'],
      ['New data is written with', 'key 2'],
    ]);
  });

  it('rotates the key, says which key new data uses now, and shows the keys again', async () => {
    const page = await openSecurity(TWO_KEYS, {
      'vault.rotateKey': () => {
        page.setInfo(vaultInfo(TWO_KEYS.slots, { keyIds: [1, 2, 3] }));
        return { keyId: 3, previousKeyId: 2 };
      },
    });
    await openTab('Data key');
    await userEvent.click(screen.getByRole('button', { name: 'Rotate data key' }));
    await settle();
    expect(requests(page.api, 'vault.rotateKey')).toEqual([{ vaultId: 'v1' }]);
    // Asked after the change, so what the log could not record about it is shown.
    expect(requests(page.api, 'security.logProblems')).toEqual([{ vaultId: 'v1' }]);
    expectToldAndFocused('Data key rotated: new data is written with key 3 (was key 2).');
    expect(facts()).toEqual([
      ['Data keys in the vault', 'key 1, key 2, key 3'],
      ['New data is written with', 'key 3'],
    ]);
  });

  it('says another task is changing the vault when the back end is busy', async () => {
    await openSecurity(TWO_KEYS, { 'vault.rotateKey': () => new Refusal('BUSY') });
    await openTab('Data key');
    await userEvent.click(screen.getByRole('button', { name: 'Rotate data key' }));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Another task is changing the vault right now. Wait for it to finish in the jobs panel (or cancel it), ' +
        'then try again.',
    );
  });
});

describe('rotating and re-encrypting', () => {
  it('starts it as a job, says it runs in the jobs panel, and does not start it twice', async () => {
    const page = await startReencryption();
    expect(requests(page.api, 'job.reencrypt')).toEqual([{ vaultId: 'v1' }]);
    expect(screen.getByText('Re-encrypting… (progress in the jobs panel)')).toBeTruthy();
    // Unavailable but still focusable, so the keyboard focus stays where it was.
    expect(reencryptButton().getAttribute('aria-disabled')).toBe('true');
    expect(document.activeElement).toBe(reencryptButton());
    await userEvent.click(reencryptButton());
    await settle();
    expect(requests(page.api, 'job.reencrypt')).toHaveLength(1);
  });

  it('says what the finished job did, and shows the keys the vault has left', async () => {
    const page = await startReencryption();
    page.setInfo(vaultInfo(TWO_KEYS.slots, { keyIds: [3] }));
    reencryption(page.api, {
      type: 'ended',
      status: 'done',
      result: {
        kind: 'reencrypt',
        report: {
          keyId: 3,
          rotated: true,
          removedKeyIds: [1, 2],
          filesReencrypted: 12,
          bytesReencrypted: 4096,
          recordsResealed: 3,
          logEntriesResealed: 5,
          problems: [],
        },
      },
    });
    await settle();
    expect(
      screen.getByText('Re-encrypted 12 files under key 3; older keys removed.').getAttribute('role'),
    ).toBe('status');
    expect(screen.queryByText('Re-encrypting… (progress in the jobs panel)')).toBeNull();
    expect(reencryptButton().getAttribute('aria-disabled')).toBe('false');
    expect(facts()).toEqual([
      ['Data keys in the vault', 'key 3'],
      ['New data is written with', 'key 3'],
    ]);
  });

  it('says why the job failed, in the back end’s words', async () => {
    const page = await startReencryption();
    reencryption(page.api, {
      type: 'ended',
      status: 'failed',
      code: 'IO',
      message: 'The disk is full. Free some space and start it again.',
    });
    expect(screen.getByRole('alert').textContent).toBe(
      'The disk is full. Free some space and start it again.',
    );
  });

  it('says a stopped job continues where it stopped when started again', async () => {
    const page = await startReencryption();
    reencryption(page.api, { type: 'ended', status: 'cancelled' });
    expect(screen.getByText('Stopped. Start it again to continue where it stopped.')).toBeTruthy();
    expect(reencryptButton().getAttribute('aria-disabled')).toBe('false');
  });

  it('says another task is changing the vault when the job cannot start', async () => {
    await openSecurity(TWO_KEYS, { 'job.reencrypt': () => new Refusal('BUSY') });
    await openTab('Data key');
    await userEvent.click(reencryptButton());
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Another task is changing the vault right now. Wait for it to finish in the jobs panel (or cancel it), ' +
        'then try again.',
    );
  });
});
