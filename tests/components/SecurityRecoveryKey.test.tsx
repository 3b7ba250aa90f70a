// @vitest-environment jsdom
import './dom.js';

import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { securityErrorSentence } from '../../src/renderer/error-messages.js';
import { Refusal } from './fake-api.js';
import {
  expectToldAndFocused,
  openSecurity,
  openTab,
  passphraseSlot,
  recoveryKeySlot,
  vaultInfo,
} from './security-page.js';
import { requests, settle } from './fixtures.js';

const KEY = 'ABCDE-FGHIJ-KLMNP-QRSTU-VWXYZ-23456-789AB-CDEFG';
const GROUPS = KEY.split('-');

const WITHOUT_KEY = vaultInfo([passphraseSlot(0, 'moderate', true)]);
const WITH_KEY = vaultInfo([passphraseSlot(0, 'moderate', true), recoveryKeySlot(1)]);

const button = (name: string) => screen.getByRole('button', { name });

/** Opens the Recovery key tab and asks for a new key with `current` as the current passphrase. */
async function makeKey(current: string, submit: string) {
  await openTab('Recovery key');
  await userEvent.click(button('Make a recovery key…'));
  if (current !== '') await userEvent.type(screen.getByLabelText('Current passphrase'), current);
  await userEvent.click(button(submit));
  await settle();
}

const sheet = () => screen.getByRole('alertdialog', { name: 'Your new recovery key' });

/** Ticks "I have … put it somewhere safe" and presses "I have saved it". */
async function confirmSaved() {
  await userEvent.click(within(sheet()).getByRole('checkbox', { name: /^I have printed or written down/ }));
  await userEvent.click(within(sheet()).getByRole('button', { name: 'I have saved it' }));
}

/** The system clipboard, which jsdom lacks, as a page sees it: `writeText` alone is what the sheet uses. */
function useClipboard(writeText: (text: string) => Promise<void>) {
  Object.defineProperty(navigator, 'clipboard', { configurable: true, value: { writeText } });
}

afterEach(() => {
  vi.restoreAllMocks();
  Reflect.deleteProperty(navigator, 'clipboard');
});

describe('making a recovery key', () => {
  it('asks the current passphrase, then shows the key once, in groups, until it is saved', async () => {
    const page = await openSecurity(WITHOUT_KEY, {
      'security.makeRecoveryKey': () => ({ recoveryKey: KEY, logProblems: [] }),
    });
    await openTab('Recovery key');
    expect(screen.getByText('This vault has no recovery key.')).toBeTruthy();
    await userEvent.click(button('Make a recovery key…'));
    // Nothing to revoke: no warning that one stops working.
    expect(screen.queryByText(/revokes the previous one/)).toBeNull();
    await userEvent.type(screen.getByLabelText('Current passphrase'), 'old words here');
    await userEvent.click(button('Make recovery key'));
    await settle();
    expect(requests(page.api, 'security.makeRecoveryKey')).toEqual([
      { vaultId: 'v1', current: 'old words here' },
    ]);
    expect(
      JSON.stringify(page.api.calls.filter((c) => c.channel !== 'security.makeRecoveryKey')),
    ).not.toContain('old words here');

    const shown = within(sheet()).getByRole('group', { name: 'Recovery key for “Personal”' });
    for (const group of GROUPS) expect(within(shown).getByText(group)).toBeTruthy();
    expect(sheet().textContent).toContain('Coffer shows it once and keeps no copy.');
    const saved = within(sheet()).getByRole('button', { name: 'I have saved it' });
    expect(saved.hasAttribute('disabled')).toBe(true);
    await confirmSaved();

    expect(screen.queryByRole('alertdialog')).toBeNull();
    // Gone from the window with the sheet (and from the print page): Coffer keeps no copy.
    expect(document.body.textContent).not.toContain(GROUPS[3]);
    expectToldAndFocused('Recovery key made. Keep it apart from this computer.');
  });

  it('says that making a new key revokes the one the vault has, before and after', async () => {
    await openSecurity(WITH_KEY, {
      'security.makeRecoveryKey': () => ({ recoveryKey: KEY, logProblems: [] }),
    });
    await openTab('Recovery key');
    expect(screen.getByText('This vault has a recovery key.')).toBeTruthy();
    await userEvent.click(button('Make a recovery key…'));
    expect(screen.getByRole('form', { name: 'Make a recovery key' }).textContent).toContain(
      'Making a new recovery key revokes the previous one: it will no longer open the vault.',
    );
    await userEvent.type(screen.getByLabelText('Current passphrase'), 'old words here');
    await userEvent.click(button('Make a new key and revoke the old'));
    await settle();
    await confirmSaved();
    expectToldAndFocused('Recovery key made. The previous one no longer opens the vault.');
  });

  it('does not let Esc or a click outside take the key off the screen before it is saved', async () => {
    const page = await openSecurity(WITH_KEY, {
      'security.makeRecoveryKey': () => ({ recoveryKey: KEY, logProblems: [] }),
    });
    await makeKey('old words here', 'Make a new key and revoke the old');
    // Seen to fail with the sheet closing on its overlay's dismissal and either guard (Esc, outside) removed.
    await userEvent.keyboard('{Escape}');
    expect(sheet()).toBeTruthy();
    // Nor the Security page around it, which would take the key with it.
    expect(page.onClose).not.toHaveBeenCalled();
    const backdrop = sheet().closest('.modal-backdrop');
    if (!(backdrop instanceof HTMLElement)) throw new Error('no backdrop');
    await userEvent.click(backdrop);
    expect(sheet()).toBeTruthy();
    expect(page.onClose).not.toHaveBeenCalled();
  });

  it('copies the key, and says to clear the clipboard after', async () => {
    const writeText = vi.fn(() => Promise.resolve());
    await openSecurity(WITH_KEY, {
      'security.makeRecoveryKey': () => ({ recoveryKey: KEY, logProblems: [] }),
    });
    await makeKey('old words here', 'Make a new key and revoke the old');
    useClipboard(writeText);
    fireEvent.click(within(sheet()).getByRole('button', { name: 'Copy' }));
    await settle();
    expect(writeText).toHaveBeenCalledWith(KEY);
    expect(within(sheet()).getByRole('status').textContent).toBe(
      'Copied. Paste it where you keep it, then copy something else so it leaves the clipboard.',
    );
  });

  it('says so when the key cannot be copied, and to write it down or print it', async () => {
    await openSecurity(WITH_KEY, {
      'security.makeRecoveryKey': () => ({ recoveryKey: KEY, logProblems: [] }),
    });
    await makeKey('old words here', 'Make a new key and revoke the old');
    const refuse = () => Promise.reject(new DOMException('denied', 'NotAllowedError'));
    useClipboard(refuse);
    fireEvent.click(within(sheet()).getByRole('button', { name: 'Copy' }));
    await settle();
    expect(within(sheet()).getByRole('status').textContent).toBe(
      'Coffer could not copy it here. Write the key down, or print it.',
    );
  });

  it('prints a page with the vault’s name, the key in groups and what it is for', async () => {
    const print = vi.spyOn(window, 'print').mockReturnValue(undefined);
    await openSecurity(WITH_KEY, {
      'security.makeRecoveryKey': () => ({ recoveryKey: KEY, logProblems: [] }),
    });
    await makeKey('old words here', 'Make a new key and revoke the old');
    await userEvent.click(within(sheet()).getByRole('button', { name: 'Print' }));
    expect(print).toHaveBeenCalledTimes(1);
    // What gets printed is the page made for it (security.css shows only it on paper); jsdom lays out nothing, so
    // this checks what that page says, not how it looks.
    // Hidden from screen readers (it repeats the sheet), so found by its title's text rather than by role.
    const printed = screen.getByText('Coffer recovery key').parentElement;
    if (printed === null) throw new Error('no print page');
    expect(printed.textContent).toContain('Vault: Personal');
    for (const group of GROUPS) expect(within(printed).getByText(group)).toBeTruthy();
    expect(printed.textContent).toContain('choose “Use the recovery key instead” and type the key');
  });
});

describe('the current secret before making a key', () => {
  it('asks for it before sending anything, and Cancel forgets what was typed', async () => {
    const page = await openSecurity(WITH_KEY);
    await openTab('Recovery key');
    await userEvent.click(button('Make a recovery key…'));
    await userEvent.click(button('Make a new key and revoke the old'));
    expect(screen.getByRole('alert').textContent).toBe('Type the current passphrase.');
    await userEvent.type(screen.getByLabelText('Current passphrase'), 'old words here');
    await userEvent.click(button('Cancel'));
    await userEvent.click(button('Make a recovery key…'));
    expect(screen.getByLabelText<HTMLInputElement>('Current passphrase').value).toBe('');
    expect(requests(page.api, 'security.makeRecoveryKey')).toEqual([]);
  });

  it('says a wrong current passphrase made nothing, and empties the field', async () => {
    await openSecurity(WITH_KEY, { 'security.makeRecoveryKey': () => new Refusal('WRONG_PASSPHRASE') });
    await makeKey('wrong words', 'Make a new key and revoke the old');
    expect(screen.getByRole('alert').textContent).toBe(
      securityErrorSentence('recovery-key', 'WRONG_PASSPHRASE'),
    );
    const field = screen.getByLabelText<HTMLInputElement>('Current passphrase');
    expect(field.value).toBe('');
    expect(screen.queryByRole('alertdialog')).toBeNull();
    // The field takes the keyboard back from the button pressed, to be typed in again.
    await waitFor(() => {
      expect(document.activeElement).toBe(field);
    });
  });

  it('says there is no room for a recovery key when every slot holds a passphrase', async () => {
    await openSecurity(WITHOUT_KEY, { 'security.makeRecoveryKey': () => new Refusal('INVALID_ARGUMENT') });
    await makeKey('old words here', 'Make recovery key');
    expect(screen.getByRole('alert').textContent).toBe(
      'All 8 key slots hold passphrases, so there is no room for a recovery key. Remove a passphrase you no ' +
        'longer use, then make the recovery key. The old key still works.',
    );
  });

  it('after an unlock with the recovery key, asks for that key and tells a typo in the engine’s words', async () => {
    const typo = 'This recovery key has a typo: its checksum does not match (group 2).';
    const page = await openSecurity(vaultInfo([passphraseSlot(0), recoveryKeySlot(1, true)]), {
      'security.makeRecoveryKey': () => new Refusal('INVALID_ARGUMENT', typo),
    });
    await openTab('Recovery key');
    await userEvent.click(button('Make a recovery key…'));
    await userEvent.click(button('Make a new key and revoke the old'));
    expect(screen.getByRole('alert').textContent).toBe('Type the recovery key you unlocked with.');
    await userEvent.type(screen.getByLabelText('Recovery key you unlocked with'), 'ABCDE-FGHIX');
    await userEvent.click(button('Make a new key and revoke the old'));
    await settle();
    expect(screen.getByRole('alert').textContent).toBe(typo);
    expect(requests(page.api, 'security.makeRecoveryKey')).toEqual([
      { vaultId: 'v1', current: 'ABCDE-FGHIX' },
    ]);
  });
});
