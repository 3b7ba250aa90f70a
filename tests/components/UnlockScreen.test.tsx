// @vitest-environment jsdom
import './dom.js';

import { act, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { installApi } from '../../src/renderer/api.js';
import { UnlockScreen } from '../../src/renderer/components/UnlockScreen.js';
import { errorSentence } from '../../src/renderer/error-messages.js';
import { showVault, useCoffer, vaultClosed, vaultLocked } from '../../src/renderer/store.js';
import type { UnlockResult, VaultEntry } from '../../src/shared/contract.js';
import { fakeApi, Refusal, type FakeApi, type Handlers } from './fake-api.js';
import { LOCKED_VAULT, requests, settle, VAULT } from './fixtures.js';

const letters: VaultEntry = { path: '/letters', name: 'letters', type: 'folder', size: 0, mtime: 0 };
const unlocked: UnlockResult = {
  problems: [],
  openWarnings: [],
  rollbackWarning: null,
  headerOlderThanData: false,
  root: [letters],
};

const WRONG = 'Wrong passphrase. Check Caps Lock and the keyboard layout.';

/** The unlock screen of `LOCKED_VAULT`, as App shows it for a locked vault in the store. */
function showUnlock(handlers: Handlers): FakeApi {
  const api = fakeApi(handlers);
  installApi(api);
  useCoffer.setState({ vault: LOCKED_VAULT });
  render(<UnlockScreen vault={LOCKED_VAULT} />);
  return api;
}

/** The text of the elements that describe `element` (its accessible description, without a library for it). */
const description = (element: HTMLElement) =>
  (element.getAttribute('aria-describedby') ?? '')
    .split(' ')
    .map((id) => document.getElementById(id)?.textContent ?? '')
    .join(' ');

const passphraseField = () => screen.getByLabelText<HTMLInputElement>('Passphrase');
const unlockButton = () => screen.getByRole('button', { name: /^Unlock/ });

beforeEach(() => {
  useCoffer.setState({ vault: null, stoppedByLock: [] });
});

describe('jobs a lock stopped', () => {
  const notice = () => screen.queryByRole('status');

  it('says which, from the back end’s lock event, with the field, until the vault is unlocked', async () => {
    useCoffer.setState({ vault: VAULT });
    vaultLocked(VAULT.vaultId, [{ kind: 'add', begun: true }]);
    // The window's own lock call comes after the event here: it must not forget what the event said.
    vaultLocked(VAULT.vaultId);
    const api = fakeApi({ 'vault.unlock': () => unlocked });
    installApi(api);
    render(<UnlockScreen vault={LOCKED_VAULT} />);
    expect(notice()?.textContent).toMatch(/^Locking stopped an add before it finished\./);
    // Focused from the start, the field carries the notice: a screen reader says it with the field.
    expect(description(passphraseField())).toMatch(/^Locking stopped an add/);
    await userEvent.type(passphraseField(), 'velvet tundra quarry{Enter}');
    await settle();
    expect(useCoffer.getState().vault?.locked).toBe(false);
    expect(useCoffer.getState().stoppedByLock).toEqual([]);
  });

  it('says what the event said also when the window’s own lock call came first', () => {
    useCoffer.setState({ vault: VAULT });
    vaultLocked(VAULT.vaultId);
    vaultLocked(VAULT.vaultId, [{ kind: 'verify', begun: true }]);
    showUnlock({});
    expect(notice()?.textContent).toMatch(/^Locking stopped a check before it finished\./);
  });

  it('says nothing after a later lock that stopped none', () => {
    useCoffer.setState({ vault: VAULT, stoppedByLock: [{ kind: 'add', begun: true }] });
    vaultLocked(VAULT.vaultId, []);
    showUnlock({});
    expect(notice()).toBeNull();
    expect(description(passphraseField())).toBe('');
  });

  it('forgets them when the vault is closed or another vault is shown', () => {
    useCoffer.setState({ vault: VAULT });
    vaultLocked(VAULT.vaultId, [{ kind: 'add', begun: true }]);
    vaultClosed(VAULT.vaultId);
    expect(useCoffer.getState().stoppedByLock).toEqual([]);
    useCoffer.setState({ vault: VAULT });
    vaultLocked(VAULT.vaultId, [{ kind: 'add', begun: true }]);
    showVault({ ...LOCKED_VAULT, vaultId: 'v2' });
    expect(useCoffer.getState().stoppedByLock).toEqual([]);
  });
});

describe('unlocking with the passphrase', () => {
  it('names the vault, focuses the field and offers Unlock only once something is typed', async () => {
    showUnlock({});
    expect(screen.getByRole('heading', { name: 'Personal' })).toBeTruthy();
    expect(screen.getByText('/home/u/Personal')).toBeTruthy();
    expect(document.activeElement).toBe(passphraseField());
    expect(unlockButton().hasAttribute('disabled')).toBe(true);
    await userEvent.keyboard('a');
    expect(unlockButton().hasAttribute('disabled')).toBe(false);
  });

  it('sends the passphrase with Enter and shows the unlocked vault', async () => {
    const api = showUnlock({ 'vault.unlock': () => unlocked });
    await userEvent.type(passphraseField(), 'velvet tundra quarry{Enter}');
    await settle();
    expect(requests(api, 'vault.unlock')).toEqual([{ vaultId: 'v1', passphrase: 'velvet tundra quarry' }]);
    // App shows the store's vault: unlocked, its root folder already listed from the unlock's answer.
    const { vault, entries } = useCoffer.getState();
    expect(vault).toEqual({ ...LOCKED_VAULT, locked: false });
    expect(entries).toEqual([letters]);
  });

  it('keeps what the unlock found of a header older than the data, for the browser to say', async () => {
    showUnlock({ 'vault.unlock': () => ({ ...unlocked, headerOlderThanData: true }) });
    await userEvent.type(passphraseField(), 'velvet tundra quarry{Enter}');
    await settle();
    expect(useCoffer.getState().vault).toEqual({ ...LOCKED_VAULT, locked: false, headerOlderThanData: true });
  });

  it('shows the passphrase on request and hides it again', async () => {
    showUnlock({});
    await userEvent.type(passphraseField(), 'secret');
    const reveal = screen.getByRole('button', { name: 'Show text', pressed: false });
    expect(passphraseField().type).toBe('password');
    await userEvent.click(reveal);
    expect(passphraseField().type).toBe('text');
    await userEvent.click(screen.getByRole('button', { name: 'Hide text', pressed: true }));
    expect(passphraseField().type).toBe('password');
    expect(passphraseField().value).toBe('secret');
  });

  it('warns while Caps Lock is on, as part of the field’s description', async () => {
    // One user: the keyboard's lock state lasts from one call to the next, as on a real keyboard.
    const user = userEvent.setup();
    showUnlock({});
    await user.keyboard('{CapsLock}a');
    expect(screen.getByRole('status').textContent).toBe('Caps Lock is on.');
    expect(description(passphraseField())).toContain('Caps Lock is on.');
    await user.keyboard('{CapsLock}b');
    expect(screen.queryByText('Caps Lock is on.')).toBeNull();
    expect(description(passphraseField())).not.toContain('Caps Lock');
    // Leaving the field drops the warning: the state is unknown until the next key in it.
    await user.keyboard('{CapsLock}c');
    expect(screen.getByText('Caps Lock is on.')).toBeTruthy();
    await user.tab();
    expect(screen.queryByText('Caps Lock is on.')).toBeNull();
  });

  it('says the passphrase was wrong and keeps it focused and selected, to be typed again', async () => {
    showUnlock({ 'vault.unlock': () => new Refusal('WRONG_PASSPHRASE') });
    await userEvent.type(passphraseField(), 'velvet tundra quary{Enter}');
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toBe(WRONG);
    const field = passphraseField();
    expect(document.activeElement).toBe(field);
    expect([field.selectionStart, field.selectionEnd]).toEqual([0, field.value.length]);
    expect(field.getAttribute('aria-invalid')).toBe('true');
    expect(description(field)).toContain(WRONG);
    // Typing over the selection replaces the wrong passphrase.
    await userEvent.keyboard('new');
    expect(field.value).toBe('new');
  });

  it('shows that it is working, and lets nothing else be done, while the key is derived', async () => {
    let finish: (result: UnlockResult) => void = () => undefined;
    showUnlock({ 'vault.unlock': () => new Promise<UnlockResult>((resolve) => (finish = resolve)) });
    await userEvent.type(passphraseField(), 'velvet tundra quarry{Enter}');
    expect(screen.getByRole('status').textContent).toBe(
      'Deriving the key from the passphrase. This takes a moment by design.',
    );
    expect(unlockButton().textContent).toBe('Unlocking…');
    for (const control of [
      unlockButton(),
      passphraseField(),
      screen.getByRole('button', { name: 'Show text' }),
      screen.getByRole('button', { name: 'Use the recovery key instead' }),
      screen.getByRole('button', { name: 'Restore a header backup…' }),
      screen.getByRole('button', { name: 'Choose another vault' }),
    ])
      expect(control.hasAttribute('disabled'), control.outerHTML).toBe(true);
    await act(async () => {
      finish(unlocked);
      await Promise.resolve();
    });
    expect(useCoffer.getState().vault?.locked).toBe(false);
  });

  it('says other failures in the window’s words', async () => {
    showUnlock({ 'vault.unlock': () => new Refusal('KDF_LIMIT', 'opslimit 99 above 10') });
    await userEvent.type(passphraseField(), 'velvet tundra quarry{Enter}');
    expect((await screen.findByRole('alert')).textContent).toBe(errorSentence('KDF_LIMIT'));
  });

  it('goes back to the start screen with "Choose another vault", closing the vault', async () => {
    const api = showUnlock({ 'vault.close': () => null });
    await userEvent.click(screen.getByRole('button', { name: 'Choose another vault' }));
    await settle();
    expect(requests(api, 'vault.close')).toEqual([{ vaultId: 'v1' }]);
    expect(useCoffer.getState().vault).toBeNull();
  });
});

describe('the wait after repeated wrong passphrases', () => {
  beforeEach(() => {
    // The wait is counted from Date.now() and ticks by setInterval: those are faked. setTimeout is left real:
    // Testing Library ends each user action by waiting for a real setTimeout(0), which a fake one would never run.
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lets three tries go free, then makes the person wait 5 s, then 10 s, saying so', async () => {
    const user = userEvent.setup();
    const api = showUnlock({ 'vault.unlock': () => new Refusal('WRONG_PASSPHRASE') });
    const tryOnce = async () => {
      await user.click(unlockButton());
      await act(() => vi.advanceTimersByTimeAsync(0));
    };
    await user.type(passphraseField(), 'guess');
    await tryOnce();
    await tryOnce();
    expect(screen.getByRole('alert').textContent).toBe(WRONG);
    expect(unlockButton().hasAttribute('disabled')).toBe(false);

    await tryOnce();
    expect(screen.getByRole('alert').textContent).toBe(
      `${WRONG} After 3 wrong tries, wait 5 s before the next.`,
    );
    expect(unlockButton().textContent).toBe('Unlock (wait 5 s)');
    expect(unlockButton().hasAttribute('disabled')).toBe(true);
    // Enter in the field does not get round the wait.
    await user.type(passphraseField(), '{Enter}');
    await act(() => vi.advanceTimersByTimeAsync(0));
    expect(requests(api, 'vault.unlock')).toHaveLength(3);

    await act(() => vi.advanceTimersByTimeAsync(1000));
    expect(unlockButton().textContent).toBe('Unlock (wait 4 s)');
    await act(() => vi.advanceTimersByTimeAsync(4000));
    expect(unlockButton().textContent).toBe('Unlock');
    expect(unlockButton().hasAttribute('disabled')).toBe(false);

    await tryOnce();
    expect(screen.getByRole('alert').textContent).toBe(
      `${WRONG} After 4 wrong tries, wait 10 s before the next.`,
    );
    expect(unlockButton().textContent).toBe('Unlock (wait 10 s)');
    expect(requests(api, 'vault.unlock')).toHaveLength(4);
  });
});

describe('unlocking with the recovery key', () => {
  async function useRecoveryKey(key: string) {
    await userEvent.click(screen.getByRole('button', { name: 'Use the recovery key instead' }));
    await userEvent.type(screen.getByLabelText('Recovery key'), `${key}{Enter}`);
  }

  it('asks for the recovery key instead of the passphrase, and unlocks with it', async () => {
    const api = showUnlock({ 'vault.unlockWithRecoveryKey': () => unlocked });
    await userEvent.type(passphraseField(), 'half a passphrase');
    await userEvent.click(screen.getByRole('button', { name: 'Use the recovery key instead' }));
    expect(screen.queryByLabelText('Passphrase')).toBeNull();
    expect(screen.getByLabelText<HTMLInputElement>('Recovery key').value).toBe('');
    await userEvent.type(screen.getByLabelText('Recovery key'), 'ABCD-EFGH{Enter}');
    await settle();
    expect(requests(api, 'vault.unlockWithRecoveryKey')).toEqual([
      { vaultId: 'v1', recoveryKey: 'ABCD-EFGH' },
    ]);
    expect(requests(api, 'vault.unlock')).toEqual([]);
    expect(useCoffer.getState().vault?.locked).toBe(false);
  });

  it('says a working recovery key is being used while it opens the vault', async () => {
    showUnlock({ 'vault.unlockWithRecoveryKey': () => new Promise<UnlockResult>(() => undefined) });
    await useRecoveryKey('ABCD-EFGH');
    expect(screen.getByRole('status').textContent).toBe('Opening the vault with the recovery key.');
  });

  it('says a wrong recovery key may be an older one or another vault’s', async () => {
    showUnlock({ 'vault.unlockWithRecoveryKey': () => new Refusal('WRONG_PASSPHRASE') });
    await useRecoveryKey('ABCD-EFGH');
    expect((await screen.findByRole('alert')).textContent).toBe(
      'This recovery key does not open this vault: it may be an older one (making a new key revokes the old) or ' +
        'another vault’s.',
    );
    expect(document.activeElement).toBe(screen.getByLabelText('Recovery key'));
  });

  it('says a mistyped recovery key has a typo, in the engine’s words, apart from a wrong one', async () => {
    const typo =
      'This recovery key has a typo: its checksum does not match. Compare it character by character with the ' +
      'printed key and try again.';
    showUnlock({ 'vault.unlockWithRecoveryKey': () => new Refusal('INVALID_ARGUMENT', typo) });
    await useRecoveryKey('ABCD-EFGX');
    expect((await screen.findByRole('alert')).textContent).toBe(typo);
  });

  it('goes back to the passphrase, empty', async () => {
    showUnlock({});
    await userEvent.click(screen.getByRole('button', { name: 'Use the recovery key instead' }));
    await userEvent.type(screen.getByLabelText('Recovery key'), 'ABCD');
    await userEvent.click(screen.getByRole('button', { name: 'Use the passphrase instead' }));
    expect(passphraseField().value).toBe('');
  });
});
