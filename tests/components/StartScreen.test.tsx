// @vitest-environment jsdom
import './dom.js';

import { render, screen, within, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';

import { App } from '../../src/renderer/App.js';
import { installApi } from '../../src/renderer/api.js';
import { errorSentence } from '../../src/renderer/error-messages.js';
import { formatDate } from '../../src/renderer/format.js';
import { useCoffer } from '../../src/renderer/store.js';
import type { RecentVault, VaultSummary } from '../../src/shared/contract.js';
import { fakeApi, Refusal, type FakeApi, type Handlers } from './fake-api.js';
import { requests, settle } from './fixtures.js';

const personal: RecentVault = {
  recentId: 'r-personal',
  name: 'Personal',
  location: '/home/ana/Vaults/Personal',
  lastOpenedAt: Date.UTC(2024, 2, 5, 14, 30),
  missing: false,
};
const usbStick: RecentVault = {
  recentId: 'r-usb',
  name: 'Taxes',
  location: '/media/ana/USB/Taxes',
  lastOpenedAt: Date.UTC(2023, 10, 1, 9, 0),
  missing: true,
};

const openedPersonal: VaultSummary = {
  vaultId: 'v-personal',
  recentId: 'r-personal',
  name: 'Personal',
  location: '/home/ana/Vaults/Personal',
  locked: true,
  readOnly: false,
  headerOlderThanData: false,
};

/**
 * The whole window on its start screen: App chooses the screen from the store, so opening a vault is seen as the
 * unlock screen that follows. Appearance and host capabilities have no handlers; the window ignores their failure.
 */
function showWindow(handlers: Handlers): FakeApi {
  const api = fakeApi({ 'recent.list': () => [personal, usbStick], ...handlers });
  installApi(api);
  render(<App />);
  return api;
}

beforeEach(() => {
  useCoffer.setState({ vault: null });
});

describe('the start screen', () => {
  it('lists recent vaults with their name, folder and when they were last opened', async () => {
    showWindow({});
    const list = await screen.findByRole('list', { name: 'Recent vaults' });
    const personalRow = within(list).getByRole('button', { name: /^Personal/ });
    expect(personalRow.textContent).toContain('/home/ana/Vaults/Personal');
    expect(personalRow.textContent).toContain(`Last opened ${formatDate(personal.lastOpenedAt)}`);
  });

  it('marks a vault whose folder is gone as "Folder not found", and does not offer to open it', async () => {
    const api = showWindow({});
    const missing = await screen.findByRole('button', { name: /^Taxes/, description: 'Folder not found' });
    expect(missing.hasAttribute('disabled')).toBe(true);
    await userEvent.click(missing);
    await settle();
    expect(requests(api, 'vault.open')).toEqual([]);
  });

  it('forgets a recent vault from the list, leaving the others', async () => {
    const api = showWindow({ 'recent.forget': () => null });
    await userEvent.click(await screen.findByRole('button', { name: 'Forget Taxes' }));
    await settle();
    expect(requests(api, 'recent.forget')).toEqual([{ recentId: 'r-usb' }]);
    expect(screen.queryByRole('button', { name: /^Taxes/ })).toBeNull();
    expect(screen.getByRole('button', { name: /^Personal/ })).toBeTruthy();
  });

  it('says so when there is no recent vault', async () => {
    installApi(fakeApi({ 'recent.list': () => [] }));
    render(<App />);
    expect(
      await screen.findByText('No vault opened yet. Create one, or open a vault folder you already have.'),
    ).toBeTruthy();
    expect(screen.queryByRole('list')).toBeNull();
  });

  it('opens a recent vault with a click and shows its unlock screen', async () => {
    const api = showWindow({ 'vault.open': () => openedPersonal });
    await userEvent.click(await screen.findByRole('button', { name: /^Personal/ }));
    expect(await screen.findByRole('heading', { name: 'Personal' })).toBeTruthy();
    expect(screen.getByLabelText('Passphrase')).toBeTruthy();
    expect(requests(api, 'vault.open')).toEqual([{ recentId: 'r-personal' }]);
  });

  it('opens the vault folder chosen with "Open vault…"', async () => {
    const api = showWindow({
      'dialog.pickFolder': () => ({ handle: 'picked-1', label: '/home/ana/Vaults/Personal', count: 1 }),
      'vault.open': () => openedPersonal,
    });
    await userEvent.click(screen.getByRole('button', { name: 'Open vault…' }));
    expect(await screen.findByRole('heading', { name: 'Personal' })).toBeTruthy();
    expect(requests(api, 'dialog.pickFolder')).toEqual([{ purpose: 'open-vault' }]);
    expect(requests(api, 'vault.open')).toEqual([{ folder: 'picked-1' }]);
  });

  it('opens nothing when the folder dialog is cancelled', async () => {
    const api = showWindow({ 'dialog.pickFolder': () => null });
    await userEvent.click(screen.getByRole('button', { name: 'Open vault…' }));
    await settle();
    expect(requests(api, 'dialog.pickFolder')).toHaveLength(1);
    expect(requests(api, 'vault.open')).toEqual([]);
    expect(screen.queryByRole('alert')).toBeNull();
    expect(screen.getByRole('heading', { name: 'Coffer' })).toBeTruthy();
  });

  it.each(['NOT_A_VAULT', 'UNSUPPORTED_FORMAT', 'VAULT_IN_USE'] as const)(
    'says in words why a folder did not open (%s)',
    async (code) => {
      showWindow({
        'dialog.pickFolder': () => ({ handle: 'picked-1', label: '/tmp/x', count: 1 }),
        'vault.open': () => new Refusal(code, 'engine detail that must not show'),
      });
      await userEvent.click(screen.getByRole('button', { name: 'Open vault…' }));
      expect((await screen.findByRole('alert')).textContent).toBe(errorSentence(code));
      expect(screen.getByRole('heading', { name: 'Coffer' })).toBeTruthy();
    },
  );

  it('takes the last error away when the person tries again', async () => {
    const picks = [{ handle: 'picked-1', label: '/tmp/x', count: 1 }, null];
    showWindow({
      'dialog.pickFolder': () => picks.shift() ?? null,
      'vault.open': () => new Refusal('NOT_A_VAULT'),
    });
    await userEvent.click(screen.getByRole('button', { name: 'Open vault…' }));
    await screen.findByRole('alert');
    await userEvent.click(screen.getByRole('button', { name: 'Open vault…' }));
    await settle();
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('marks a recent vault "Folder not found" when opening finds its folder gone', async () => {
    let folderGone = false;
    showWindow({
      'recent.list': () => [folderGone ? { ...personal, missing: true } : personal],
      'vault.open': () => {
        folderGone = true;
        return new Refusal('NOT_FOUND');
      },
    });
    await userEvent.click(await screen.findByRole('button', { name: /^Personal/ }));
    expect((await screen.findByRole('alert')).textContent).toBe(errorSentence('NOT_FOUND'));
    expect(
      await screen.findByRole('button', { name: /^Personal/, description: 'Folder not found' }),
    ).toBeTruthy();
  });

  it('goes to the create form with "Create vault…" and back with Cancel', async () => {
    showWindow({ 'app.kdfEstimate': () => ({ interactive: 300, moderate: 1000, sensitive: 4000 }) });
    await screen.findByRole('list', { name: 'Recent vaults' });
    await userEvent.click(screen.getByRole('button', { name: 'Create vault…' }));
    expect(screen.getByRole('heading', { name: 'Create a vault' })).toBeTruthy();
    // The form takes the keyboard at its first control (the button pressed went with the screen).
    await waitFor(() => {
      expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Choose…' }));
    });
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(await screen.findByRole('list', { name: 'Recent vaults' })).toBeTruthy();
    // Back on the start screen the keyboard is at its top, not nowhere: Tab goes to the first recent vault.
    await waitFor(() => {
      expect(document.activeElement).toBe(screen.getByRole('region', { name: 'Coffer' }));
    });
    await userEvent.tab();
    expect(document.activeElement).toBe(screen.getByRole('button', { name: /^Personal/ }));
  });
});
