// @vitest-environment jsdom
import './dom.js';

import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';

import { installApi } from '../../src/renderer/api.js';
import { UnlockScreen } from '../../src/renderer/components/UnlockScreen.js';
import { securityErrorSentence } from '../../src/renderer/error-messages.js';
import { logProblemNotice } from '../../src/renderer/security/activity-words.js';
import { useCoffer } from '../../src/renderer/store.js';
import type { Problem, SecurityChange } from '../../src/shared/contract.js';
import { fakeApi, Refusal, type FakeApi, type Handlers } from './fake-api.js';
import { LOCKED_VAULT, requests, settle } from './fixtures.js';

const BACKUP = { handle: 'file-3', label: 'Personal-2025-01-01.coffer-header', count: 1 };

/** The unlock screen of `LOCKED_VAULT`, with the host's file dialog answering BACKUP unless told otherwise. */
function showUnlock(handlers: Handlers = {}): FakeApi {
  const api = fakeApi({ 'dialog.pickFiles': () => BACKUP, ...handlers });
  installApi(api);
  useCoffer.setState({ vault: LOCKED_VAULT });
  render(<UnlockScreen vault={LOCKED_VAULT} />);
  return api;
}

/** Presses "Restore a header backup…" and waits for the dialog the picked file opens. */
async function chooseBackup() {
  await userEvent.click(screen.getByRole('button', { name: 'Restore a header backup…' }));
  return screen.findByRole('dialog', { name: 'Restore a header backup' });
}

const restoreButton = (dialog: HTMLElement) =>
  within(dialog).getByRole('button', { name: /^(Restore header|Restoring…)$/ });

/** The text of the elements that describe `element` (its accessible description, without a library for it). */
const description = (element: HTMLElement) =>
  (element.getAttribute('aria-describedby') ?? '')
    .split(' ')
    .map((id) => document.getElementById(id)?.textContent ?? '')
    .join(' ');

beforeEach(() => {
  useCoffer.setState({ vault: null, headerRestoreAsked: null });
});

describe('restoring a header backup', () => {
  it('asks the host for the file, then says what restoring it replaces, with the passphrase field focused', async () => {
    const api = showUnlock();
    const dialog = await chooseBackup();
    expect(requests(api, 'dialog.pickFiles')).toEqual([{ purpose: 'header-restore', vaultId: 'v1' }]);
    expect(dialog.textContent).toContain('Restore Personal-2025-01-01.coffer-header as this vault’s header?');
    expect(dialog.textContent).toContain(
      'ones added or changed since it was saved no longer do, and ones removed since then work again.',
    );
    expect(document.activeElement).toBe(within(dialog).getByLabelText('A passphrase of the backup'));
    expect(restoreButton(dialog).hasAttribute('disabled')).toBe(true);
    await userEvent.keyboard('a');
    expect(restoreButton(dialog).hasAttribute('disabled')).toBe(false);
  });

  it('asks for the file at once when the vault was locked to restore it, and only that once', async () => {
    useCoffer.setState({ headerRestoreAsked: LOCKED_VAULT.vaultId });
    const api = showUnlock();
    expect(await screen.findByRole('dialog', { name: 'Restore a header backup' })).toBeTruthy();
    expect(requests(api, 'dialog.pickFiles')).toEqual([{ purpose: 'header-restore', vaultId: 'v1' }]);
    expect(useCoffer.getState().headerRestoreAsked).toBeNull();
  });

  it('asks nothing for another vault’s restore', async () => {
    useCoffer.setState({ headerRestoreAsked: 'another vault' });
    const api = showUnlock();
    await settle();
    expect(requests(api, 'dialog.pickFiles')).toEqual([]);
  });

  it('opens nothing when the file dialog is cancelled', async () => {
    showUnlock({ 'dialog.pickFiles': () => null });
    await userEvent.click(screen.getByRole('button', { name: 'Restore a header backup…' }));
    await settle();
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('restores with a passphrase of the backup, then says to unlock with what it holds, and what the log missed', async () => {
    const missed: Problem = { path: '', code: 'IO', message: 'The disk is full.' };
    const api = showUnlock({ 'security.importHeader': () => ({ logProblems: [missed] }) });
    const dialog = await chooseBackup();
    await userEvent.type(
      within(dialog).getByLabelText('A passphrase of the backup'),
      'old words here{Enter}',
    );
    await settle();
    expect(requests(api, 'security.importHeader')).toEqual([
      { vaultId: 'v1', file: 'file-3', secretKind: 'passphrase', secret: 'old words here' },
    ]);
    expect(JSON.stringify(api.calls.filter((c) => c.channel !== 'security.importHeader'))).not.toContain(
      'old words here',
    );
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(
      screen.getByText(
        'The header backup “Personal-2025-01-01.coffer-header” is restored. Unlock with a passphrase or the ' +
          'recovery key it holds.',
      ),
    ).toBeTruthy();
    expect(screen.getByText(logProblemNotice(missed))).toBeTruthy();
    // The vault stays locked: the passphrase that opens it is asked next.
    expect(useCoffer.getState().vault?.locked).toBe(true);
    expect(screen.getByLabelText<HTMLInputElement>('Passphrase').value).toBe('');
  });

  it('restores with the backup’s recovery key instead, and tells a typo in it in the engine’s words', async () => {
    const typo = 'This recovery key has a typo: its checksum does not match (group 4).';
    const api = showUnlock({ 'security.importHeader': () => new Refusal('INVALID_ARGUMENT', typo) });
    const dialog = await chooseBackup();
    await userEvent.type(within(dialog).getByLabelText('A passphrase of the backup'), 'half typed');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Use the recovery key instead' }));
    const keyField = within(dialog).getByLabelText<HTMLInputElement>('The recovery key of the backup');
    expect(keyField.value).toBe('');
    await userEvent.type(keyField, 'ABCDE-FGHIX{Enter}');
    expect((await within(dialog).findByRole('alert')).textContent).toBe(typo);
    expect(requests(api, 'security.importHeader')).toEqual([
      { vaultId: 'v1', file: 'file-3', secretKind: 'recovery-key', secret: 'ABCDE-FGHIX' },
    ]);
    await userEvent.click(within(dialog).getByRole('button', { name: 'Use a passphrase instead' }));
    expect(within(dialog).queryByRole('alert')).toBeNull();
    expect(within(dialog).getByLabelText<HTMLInputElement>('A passphrase of the backup').value).toBe('');
  });

  it('with a passphrase, says an invalid request is about the file, not a typo', async () => {
    // Only a recovery key has a checksum: the engine's words for INVALID_ARGUMENT are shown for the key alone.
    showUnlock({ 'security.importHeader': () => new Refusal('INVALID_ARGUMENT', 'handle file-3 expired') });
    const dialog = await chooseBackup();
    await userEvent.type(
      within(dialog).getByLabelText('A passphrase of the backup'),
      'old words here{Enter}',
    );
    expect((await within(dialog).findByRole('alert')).textContent).toBe(
      'The chosen file is no longer valid, or it is too big to be a header backup. Choose the file again.',
    );
  });

  it('says a passphrase that does not open the backup changed nothing, as the field’s description', async () => {
    showUnlock({ 'security.importHeader': () => new Refusal('WRONG_PASSPHRASE') });
    const dialog = await chooseBackup();
    const field = within(dialog).getByLabelText<HTMLInputElement>('A passphrase of the backup');
    await userEvent.type(field, 'wrong words{Enter}');
    const said = securityErrorSentence('header-restore', 'WRONG_PASSPHRASE');
    expect((await within(dialog).findByRole('alert')).textContent).toBe(said);
    expect(said).toContain('Nothing was changed.');
    expect(field.getAttribute('aria-invalid')).toBe('true');
    expect(description(field)).toContain(said);
    // Focused again with what was typed selected, to be typed over.
    expect(document.activeElement).toBe(field);
    expect([field.selectionStart, field.selectionEnd]).toEqual([0, 'wrong words'.length]);
  });

  it('says a file that is not this vault’s header backup is not one, in words for restoring', async () => {
    showUnlock({ 'security.importHeader': () => new Refusal('INTEGRITY') });
    const dialog = await chooseBackup();
    await userEvent.type(
      within(dialog).getByLabelText('A passphrase of the backup'),
      'old words here{Enter}',
    );
    expect((await within(dialog).findByRole('alert')).textContent).toBe(
      "That file is not a header backup of this vault: it is another vault's, damaged, or another file. " +
        'Choose the ".coffer-header" file saved from this vault\'s Security page. Nothing was changed.',
    );
  });

  it('lets nothing be changed while the backup is opened', async () => {
    showUnlock({ 'security.importHeader': () => new Promise<SecurityChange>(() => undefined) });
    const dialog = await chooseBackup();
    await userEvent.type(
      within(dialog).getByLabelText('A passphrase of the backup'),
      'old words here{Enter}',
    );
    expect(restoreButton(dialog).textContent).toBe('Restoring…');
    for (const control of [
      restoreButton(dialog),
      within(dialog).getByLabelText('A passphrase of the backup'),
      within(dialog).getByRole('button', { name: 'Use the recovery key instead' }),
      within(dialog).getByRole('button', { name: 'Cancel' }),
    ])
      expect(control.hasAttribute('disabled'), control.outerHTML).toBe(true);
  });

  it('goes back to the unlock screen with Cancel, restoring nothing', async () => {
    const api = showUnlock();
    const dialog = await chooseBackup();
    await userEvent.type(within(dialog).getByLabelText('A passphrase of the backup'), 'old words here');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(requests(api, 'security.importHeader')).toEqual([]);
    expect(screen.queryByText(/is restored/)).toBeNull();
  });
});
