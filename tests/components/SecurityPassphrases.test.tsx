// @vitest-environment jsdom
import './dom.js';

import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { installApi } from '../../src/renderer/api.js';
import { errorSentence, securityErrorSentence } from '../../src/renderer/error-messages.js';
import { logProblemNotice } from '../../src/renderer/security/activity-words.js';
import { SecurityDialog } from '../../src/renderer/security/SecurityDialog.js';
import { useCoffer } from '../../src/renderer/store.js';
import type { Channel, Problem, VaultInfo } from '../../src/shared/contract.js';
import { fakeApi, Refusal } from './fake-api.js';
import {
  expectToldAndFocused,
  openSecurity,
  passphraseSlot,
  recoveryKeySlot,
  type SecurityPage,
  vaultInfo,
} from './security-page.js';
import { requests, settle, VAULT } from './fixtures.js';

/** Two passphrases (this window used the first) and a recovery key. */
const THREE_WAYS = vaultInfo([passphraseSlot(0, 'sensitive', true), passphraseSlot(1), recoveryKeySlot(2)]);

/** The ways in as the table shows them: name, key strength, and what can be done (or why not). */
function waysIn(): string[][] {
  const table = screen.getByRole('table', { name: 'Ways into this vault' });
  return within(table)
    .getAllByRole('row')
    .slice(1)
    .map((row) => [
      within(row).getByRole('rowheader').textContent,
      ...within(row)
        .getAllByRole('cell')
        .map((cell) => cell.textContent),
    ]);
}

const button = (name: string) => screen.getByRole('button', { name });

/** Fills the change or add form: the current passphrase (or recovery key), then the new passphrase twice. */
async function fillForm(current: string, passphrase: string, repeat = passphrase) {
  const form = within(screen.getByRole('form'));
  const typed: [RegExp | string, string][] = [
    [/^(Current passphrase|Recovery key you unlocked with)$/, current],
    ['New passphrase', passphrase],
    ['Repeat new passphrase', repeat],
  ];
  for (const [label, text] of typed) if (text !== '') await userEvent.type(form.getByLabelText(label), text);
}

/** Opens "Change passphrase…", fills the form with `current` and the new `passphrase`, and sends it. */
async function changePassphrase(current: string, passphrase: string) {
  await userEvent.click(button('Change passphrase…'));
  await fillForm(current, passphrase);
  await userEvent.click(within(screen.getByRole('form')).getByRole('button', { name: 'Change passphrase' }));
}

/** Every request but those to `channel`, as text: a secret typed for `channel` must appear nowhere in it. */
const allRequestsBut = ({ api }: SecurityPage, channel: Channel) =>
  JSON.stringify(api.calls.filter((c) => c.channel !== channel));

describe('the Security page', () => {
  it('is named for its vault, opens on the passphrases, and closes with Close or Esc', async () => {
    const page = await openSecurity(THREE_WAYS);
    const dialog = screen.getByRole('dialog', { name: 'Security of Personal' });
    expect(within(dialog).getByRole('tab', { selected: true }).textContent).toBe('Passphrases');
    expect(requests(page.api, 'vault.info')).toEqual([{ vaultId: 'v1' }]);
    await userEvent.keyboard('{Escape}');
    expect(page.onClose).toHaveBeenCalledTimes(1);
    await userEvent.click(within(dialog).getByRole('button', { name: 'Close' }));
    expect(page.onClose).toHaveBeenCalledTimes(2);
  });

  it('says in words when the vault’s facts cannot be read, and shows no tabs', async () => {
    installApi(fakeApi({ 'vault.info': () => new Refusal('VAULT_LOCKED') }));
    render(<SecurityDialog vault={VAULT} onClose={() => undefined} />);
    expect((await screen.findByRole('alert')).textContent).toBe(errorSentence('VAULT_LOCKED'));
    expect(screen.queryByRole('tablist')).toBeNull();
  });
});

describe('the ways into the vault', () => {
  it('lists each passphrase with its key strength, the recovery key, and which one this window used', async () => {
    await openSecurity(THREE_WAYS);
    expect(waysIn()).toEqual([
      [
        'Passphrase 1',
        'Strong (1 GiB) — slower to unlock',
        'Used for this unlockCannot be removed while this window uses it',
      ],
      ['Passphrase 2', 'Standard (256 MiB) — recommended', 'Remove passphrase 2…'],
      ['Recovery key', 'No key derivation', 'Remove recovery key…'],
    ]);
  });

  it('says the only way in cannot be removed, and offers no Remove', async () => {
    await openSecurity(vaultInfo([passphraseSlot(0, 'moderate', true)]));
    expect(waysIn()).toEqual([
      [
        'Passphrase 1',
        'Standard (256 MiB) — recommended',
        'Used for this unlockThe only way in: cannot be removed',
      ],
    ]);
    expect(screen.queryByRole('button', { name: /^Remove/ })).toBeNull();
  });

  it('offers no Add once the vault holds 8 ways in, and says why', async () => {
    const eight = [
      passphraseSlot(0, 'moderate', true),
      ...[1, 2, 3, 4, 5, 6, 7].map((i) => passphraseSlot(i)),
    ];
    await openSecurity(vaultInfo(eight));
    expect(button('Add a passphrase…').hasAttribute('disabled')).toBe(true);
    expect(
      screen.getByText('This vault holds 8 ways in, the most it can: remove one to add another.'),
    ).toBeTruthy();
  });
});

describe('removing a way in', () => {
  it('asks first, naming what stops working, and Cancel removes nothing', async () => {
    const page = await openSecurity(THREE_WAYS);
    await userEvent.click(button('Remove passphrase 2…'));
    const asking = screen.getByRole('alertdialog', { name: 'Remove passphrase 2?' });
    expect(asking.textContent).toContain('This passphrase will no longer open the vault.');
    expect(asking.textContent).toContain('A header backup exported before now still opens with it');
    await userEvent.click(within(asking).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(requests(page.api, 'security.removeSlot')).toEqual([]);
  });

  it('removes the slot once confirmed, says so, and shows the ways in that are left', async () => {
    const page = await openSecurity(THREE_WAYS, {
      'security.removeSlot': () => {
        page.setInfo(vaultInfo([passphraseSlot(0, 'sensitive', true), recoveryKeySlot(2)]));
        return { logProblems: [] };
      },
    });
    await userEvent.click(button('Remove recovery key…'));
    const asking = screen.getByRole('alertdialog', { name: 'Remove recovery key?' });
    expect(asking.textContent).toContain('The recovery key will no longer open the vault.');
    // Cancel has the focus (Enter out of habit removes nothing); Tab goes on to the removal.
    expect(document.activeElement).toBe(within(asking).getByRole('button', { name: 'Cancel' }));
    await userEvent.keyboard('{Tab}');
    expect(document.activeElement).toBe(within(asking).getByRole('button', { name: 'Remove recovery key' }));
    await userEvent.keyboard('{Enter}');
    await settle();
    expect(requests(page.api, 'security.removeSlot')).toEqual([{ vaultId: 'v1', index: 2 }]);
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expectToldAndFocused('Recovery key removed: it no longer opens the vault.');
    expect(waysIn().map(([name]) => name)).toEqual(['Passphrase 1', 'Recovery key']);
  });

  it('says why the back end refused, in words for removing, and keeps asking', async () => {
    await openSecurity(THREE_WAYS, { 'security.removeSlot': () => new Refusal('INVALID_ARGUMENT') });
    await userEvent.click(button('Remove passphrase 2…'));
    const asking = screen.getByRole('alertdialog', { name: 'Remove passphrase 2?' });
    await userEvent.click(within(asking).getByRole('button', { name: 'Remove passphrase 2' }));
    expect((await within(asking).findByRole('alert')).textContent).toBe(
      'That passphrase cannot be removed: it is the last way into the vault, or the one this window used. ' +
        'Add another passphrase first, or lock and unlock with another one. Nothing was changed.',
    );
  });
});

describe('changing the passphrase', () => {
  it('sends the current passphrase, the new one and the key strength, then says what changed', async () => {
    const page = await openSecurity(THREE_WAYS, { 'security.changePassphrase': () => ({ logProblems: [] }) });
    await userEvent.click(button('Change passphrase…'));
    const form = screen.getByRole('form', { name: 'Change passphrase' });
    // The slot's own key strength is kept unless another is chosen.
    expect(within(form).getByRole<HTMLSelectElement>('combobox', { name: 'Key strength' }).value).toBe(
      'sensitive',
    );
    await fillForm('old words here', 'velvet tundra quarry');
    await userEvent.selectOptions(within(form).getByRole('combobox', { name: 'Key strength' }), 'moderate');
    await userEvent.click(within(form).getByRole('button', { name: 'Change passphrase' }));
    await settle();
    expect(requests(page.api, 'security.changePassphrase')).toEqual([
      { vaultId: 'v1', current: 'old words here', passphrase: 'velvet tundra quarry', kdf: 'moderate' },
    ]);
    // The secrets go to the one request that needs them, nowhere else.
    expect(allRequestsBut(page, 'security.changePassphrase')).not.toMatch(/old words here|velvet tundra/);
    expect(screen.queryByRole('form')).toBeNull();
    expectToldAndFocused('Passphrase changed. From now on, only the new one opens the vault in its place.');
  });

  it('checks the form before sending: the current passphrase, a new one, typed the same twice', async () => {
    const page = await openSecurity(THREE_WAYS);
    await userEvent.click(button('Change passphrase…'));
    const submit = within(screen.getByRole('form')).getByRole('button', { name: 'Change passphrase' });
    const field = (label: string) => screen.getByLabelText(label, { selector: 'input' });
    /** The field at fault has the keyboard, is marked invalid and is described by the error. */
    const atFault = (label: string) => {
      expect(document.activeElement).toBe(field(label));
      expect(field(label).getAttribute('aria-invalid')).toBe('true');
      expect(field(label).getAttribute('aria-describedby')).toContain(screen.getByRole('alert').id);
    };
    await userEvent.click(submit);
    expect(screen.getByRole('alert').textContent).toBe('Type the current passphrase.');
    atFault('Current passphrase');
    await fillForm('old words here', '', '');
    expect(field('Current passphrase').hasAttribute('aria-invalid')).toBe(false);
    expect(screen.queryByRole('alert')).toBeNull();
    await userEvent.click(submit);
    expect(screen.getByRole('alert').textContent).toBe('Choose the new passphrase.');
    atFault('New passphrase');
    await fillForm('', 'velvet tundra quarry', 'velvet tundra quary');
    await userEvent.click(submit);
    expect(screen.getByRole('alert').textContent).toBe('The two new passphrases differ. Type them again.');
    atFault('Repeat new passphrase');
    await userEvent.type(field('Repeat new passphrase'), 'r');
    expect(field('Repeat new passphrase').hasAttribute('aria-invalid')).toBe(false);
    expect(screen.queryByRole('alert')).toBeNull();
    expect(requests(page.api, 'security.changePassphrase')).toEqual([]);
  });

  it('says a wrong current passphrase changed nothing, and empties only that field', async () => {
    await openSecurity(THREE_WAYS, { 'security.changePassphrase': () => new Refusal('WRONG_PASSPHRASE') });
    await changePassphrase('wrong words', 'velvet tundra quarry');
    expect((await screen.findByRole('alert')).textContent).toBe(
      'That is not the passphrase this vault was unlocked with, so nothing was changed. Type the current ' +
        'passphrase again (check Caps Lock and the keyboard layout).',
    );
    // A failed secret is typed again, never kept; the new passphrase need not be.
    const current = screen.getByLabelText<HTMLInputElement>('Current passphrase');
    expect(current.value).toBe('');
    expect(screen.getByLabelText<HTMLInputElement>('New passphrase').value).toBe('velvet tundra quarry');
    // The field to type it in again has the keyboard, marked invalid and described by the words.
    await waitFor(() => {
      expect(document.activeElement).toBe(current);
    });
    expect(current.getAttribute('aria-invalid')).toBe('true');
    expect(current.getAttribute('aria-describedby')).toContain(screen.getByRole('alert').id);
  });

  it('gives the emptied current passphrase field the keyboard after a refusal that is no field’s fault', async () => {
    await openSecurity(THREE_WAYS, { 'security.changePassphrase': () => new Refusal('BUSY') });
    await changePassphrase('old words here', 'velvet tundra quarry');
    expect((await screen.findByRole('alert')).textContent).toBe(securityErrorSentence('change', 'BUSY'));
    const current = screen.getByLabelText<HTMLInputElement>('Current passphrase');
    expect(current.value).toBe('');
    await waitFor(() => {
      expect(document.activeElement).toBe(current);
    });
    // Not marked as the field at fault: the vault was busy.
    expect(current.getAttribute('aria-invalid')).not.toBe('true');
  });

  it('says it is deriving the key, and lets nothing be changed meanwhile', async () => {
    await openSecurity(THREE_WAYS, {
      'security.changePassphrase': () => new Promise<never>(() => undefined),
    });
    await changePassphrase('old words here', 'velvet tundra quarry');
    const form = screen.getByRole('form', { name: 'Change passphrase' });
    expect(within(form).getByRole('status').textContent).toBe(
      'Deriving the key from the passphrase (Argon2id); this takes a moment.',
    );
    for (const control of [
      within(form).getByLabelText('Current passphrase'),
      within(form).getByLabelText('New passphrase'),
      within(form).getByLabelText('Repeat new passphrase'),
      within(form).getByRole('combobox', { name: 'Key strength' }),
      within(form).getByRole('button', { name: 'Cancel' }),
      within(form).getByRole('button', { name: 'Changing…' }),
    ])
      expect(control.hasAttribute('disabled'), control.outerHTML).toBe(true);
  });

  it('rates the new passphrase as it is typed, counting the vault’s name as known to a guesser', async () => {
    // Three unrelated words rate very strong (CreateVault's tests), unless they are the vault's name.
    await openSecurity(THREE_WAYS, {}, { ...VAULT, name: 'velvet tundra quarry' });
    await userEvent.click(button('Change passphrase…'));
    await screen.findByText(/^Four or more unrelated words/);
    await userEvent.type(screen.getByLabelText('New passphrase'), 'velvet tundra quarry');
    expect(screen.getByRole('meter', { name: 'Passphrase strength' }).getAttribute('value')).toBe('0');
    // The rating is the new field's description, so a screen reader hears it there.
    const described = screen.getByLabelText('New passphrase').getAttribute('aria-describedby') ?? '';
    expect(document.getElementById(described)?.textContent).toContain('Very weak');
  });

  it('asks once before keeping a new passphrase that is easy to guess; editing it takes the warning back', async () => {
    const page = await openSecurity(THREE_WAYS, { 'security.changePassphrase': () => ({ logProblems: [] }) });
    await userEvent.click(button('Change passphrase…'));
    await screen.findByText(/^Four or more unrelated words/);
    await fillForm('old words here', 'password');
    const submit = within(screen.getByRole('form')).getByRole('button', { name: 'Change passphrase' });
    await userEvent.click(submit);
    const field = screen.getByLabelText('New passphrase', { selector: 'input' });
    expect(screen.getByRole('alert').textContent).toBe(
      'This passphrase is easy to guess: anyone with a copy of the vault folder can try guesses offline, as fast ' +
        'as their computer allows. Add more words, or press “Change passphrase” again to use it anyway.',
    );
    expect(document.activeElement).toBe(field);
    expect(field.getAttribute('aria-invalid')).toBe('true');
    expect(field.getAttribute('aria-describedby')).toContain(screen.getByRole('alert').id);
    expect(requests(page.api, 'security.changePassphrase')).toEqual([]);

    // Another passphrase, weak too, is told again; the warning goes as it is typed.
    await userEvent.type(field, '1');
    expect(screen.queryByRole('alert')).toBeNull();
    expect(field.hasAttribute('aria-invalid')).toBe(false);
    await userEvent.type(screen.getByLabelText('Repeat new passphrase'), '1');
    await userEvent.click(submit);
    expect(screen.getByRole('alert').textContent).toMatch(/^This passphrase is easy to guess/);
    await userEvent.click(submit);
    await settle();
    expect(requests(page.api, 'security.changePassphrase')).toEqual([
      { vaultId: 'v1', current: 'old words here', passphrase: 'password1', kdf: 'sensitive' },
    ]);
  });

  it('shows what the activity log could not record about the change, there and with the vault’s notices', async () => {
    const missed: Problem = { path: '', code: 'IO', message: 'The disk is full.' };
    await openSecurity(THREE_WAYS, { 'security.changePassphrase': () => ({ logProblems: [missed] }) });
    useCoffer.setState({ notices: [] });
    await changePassphrase('old words here', 'velvet tundra quarry');
    await settle();
    expect(screen.getByRole('alert').textContent).toBe(logProblemNotice(missed));
    expect(useCoffer.getState().notices).toEqual([logProblemNotice(missed)]);
  });
});

describe('adding a passphrase', () => {
  it('asks the current passphrase, sends the new one at the standard key strength unless told, says so', async () => {
    const page = await openSecurity(THREE_WAYS, {
      'security.addPassphrase': () => ({ index: 3, logProblems: [] }),
    });
    await userEvent.click(button('Add a passphrase…'));
    const form = screen.getByRole('form', { name: 'Add a passphrase' });
    await fillForm('old words here', 'velvet tundra quarry');
    await userEvent.click(within(form).getByRole('button', { name: 'Add a passphrase' }));
    await settle();
    // Not the key strength of the passphrase this window used ('sensitive'): a new passphrase starts at the default.
    expect(requests(page.api, 'security.addPassphrase')).toEqual([
      { vaultId: 'v1', current: 'old words here', passphrase: 'velvet tundra quarry', kdf: 'moderate' },
    ]);
    expect(allRequestsBut(page, 'security.addPassphrase')).not.toMatch(/old words here|velvet tundra/);
    expectToldAndFocused('Passphrase added. It opens the vault from the next unlock.');
  });

  it('says when the key strengths together would make unlocking too slow', async () => {
    await openSecurity(THREE_WAYS, { 'security.addPassphrase': () => new Refusal('KDF_LIMIT') });
    await userEvent.click(button('Add a passphrase…'));
    await fillForm('old words here', 'velvet tundra quarry');
    await userEvent.click(within(screen.getByRole('form')).getByRole('button', { name: 'Add a passphrase' }));
    expect((await screen.findByRole('alert')).textContent).toBe(securityErrorSentence('add', 'KDF_LIMIT'));
    expect(securityErrorSentence('add', 'KDF_LIMIT')).not.toBe(errorSentence('KDF_LIMIT'));
  });

  it('after an unlock with the recovery key, asks for that key, offers no change, and tells a typo in the engine’s words', async () => {
    const withKey: VaultInfo = vaultInfo([passphraseSlot(0), recoveryKeySlot(1, true)]);
    const typo = 'This recovery key has a typo: its checksum does not match (group 3).';
    const page = await openSecurity(withKey, {
      'security.addPassphrase': () => new Refusal('INVALID_ARGUMENT', typo),
    });
    expect(screen.queryByRole('button', { name: 'Change passphrase…' })).toBeNull();
    expect(
      screen.getByText(
        'This window was unlocked with the recovery key. If you forgot a passphrase, add a new one, then ' +
          'remove the forgotten one.',
      ),
    ).toBeTruthy();
    await userEvent.click(button('Add a passphrase…'));
    expect(screen.queryByLabelText('Current passphrase')).toBeNull();
    await userEvent.type(screen.getByLabelText('Recovery key you unlocked with'), 'ABCDE-FGHIJ');
    await fillForm('', 'velvet tundra quarry');
    await userEvent.click(within(screen.getByRole('form')).getByRole('button', { name: 'Add a passphrase' }));
    expect((await screen.findByRole('alert')).textContent).toBe(typo);
    expect(requests(page.api, 'security.addPassphrase')[0]?.current).toBe('ABCDE-FGHIJ');
  });

  it('goes back to the list with Cancel, sending nothing', async () => {
    const page = await openSecurity(THREE_WAYS);
    await userEvent.click(button('Add a passphrase…'));
    await fillForm('old words here', 'velvet tundra quarry');
    await userEvent.click(within(screen.getByRole('form')).getByRole('button', { name: 'Cancel' }));
    expect(screen.getByRole('table', { name: 'Ways into this vault' })).toBeTruthy();
    expect(requests(page.api, 'security.addPassphrase')).toEqual([]);
  });
});

describe('the header backup', () => {
  it('saves it in the folder picked, and says where', async () => {
    const page = await openSecurity(THREE_WAYS, {
      'dialog.pickFolder': () => ({ handle: 'folder-7', label: '/home/ana/Backups', count: 1 }),
      'security.exportHeader': () => ({ fileName: 'Personal.coffer-header', folder: '/home/ana/Backups' }),
    });
    await userEvent.click(button('Save a header backup…'));
    await settle();
    expect(requests(page.api, 'dialog.pickFolder')).toEqual([{ purpose: 'header-backup', vaultId: 'v1' }]);
    expect(requests(page.api, 'security.exportHeader')).toEqual([{ vaultId: 'v1', folder: 'folder-7' }]);
    expectToldAndFocused('Header backup saved as “Personal.coffer-header” in /home/ana/Backups.');
  });

  it('saves nothing and says nothing when the folder dialog is cancelled', async () => {
    const page = await openSecurity(THREE_WAYS, { 'dialog.pickFolder': () => null });
    await userEvent.click(button('Save a header backup…'));
    await settle();
    expect(requests(page.api, 'security.exportHeader')).toEqual([]);
    expect(screen.queryByText(/^Header backup saved/)).toBeNull();
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('says the folder could not be written, in words for the backup', async () => {
    await openSecurity(THREE_WAYS, {
      'dialog.pickFolder': () => ({ handle: 'folder-7', label: '/media/usb', count: 1 }),
      'security.exportHeader': () => new Refusal('IO'),
    });
    await userEvent.click(button('Save a header backup…'));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Coffer could not write the header backup in that folder. Check that the disk is connected, not full and ' +
        'that you may write there, or choose another folder.',
    );
  });
});
