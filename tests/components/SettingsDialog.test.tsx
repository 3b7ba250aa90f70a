// @vitest-environment jsdom
import './dom.js';

import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';

import { errorSentence } from '../../src/renderer/error-messages.js';
import type { HostCapabilities, Settings } from '../../src/shared/contract.js';
import { fakeApi, Refusal, type FakeApi, type Handlers } from './fake-api.js';

const SAVED: Settings = {
  autoLockMinutes: 10,
  theme: 'system',
  reduceMotion: false,
  lockOnClose: true,
  lockOnSuspend: true,
  lockOnScreenLock: false,
  contentProtection: true,
  openCopyNoticeShown: false,
};

const CAPABILITIES: HostCapabilities = {
  openWithApp: true,
  showInFolder: true,
  contentProtection: true,
  notifications: 'host',
  folderDrops: true,
};

/** A back end that keeps the settings it is sent, as the settings store does. */
function settingsStore(handlers: Handlers = {}, capabilities: Partial<HostCapabilities> = {}): FakeApi {
  let settings = SAVED;
  return fakeApi({
    'settings.get': () => settings,
    'settings.set': (change) => (settings = { ...settings, ...change }),
    'app.capabilities': () => ({ ...CAPABILITIES, ...capabilities }),
    ...handlers,
  });
}

/**
 * Opens the dialog against `api`. The window asks the host's capabilities once and keeps them (host.ts), so each
 * test loads the renderer's modules afresh: one host's answer must not decide another test's.
 */
async function openSettings(api: FakeApi) {
  vi.resetModules();
  const { installApi } = await import('../../src/renderer/api.js');
  const { SettingsDialog } = await import('../../src/renderer/components/SettingsDialog.js');
  installApi(api);
  render(<SettingsDialog onClose={() => undefined} />);
  await screen.findByRole('spinbutton', { name: 'Lock after this many idle minutes' });
}

const sets = (api: FakeApi) => api.calls.filter((c) => c.channel === 'settings.set').map((c) => c.request);

const checkbox = (name: string) => screen.getByRole<HTMLInputElement>('checkbox', { name });

beforeEach(() => {
  delete document.documentElement.dataset.theme;
  delete document.documentElement.dataset.reduceMotion;
});

describe('the settings', () => {
  it('shows the saved settings', async () => {
    await openSettings(settingsStore());
    // Named by its label alone, its hint read once, as its description.
    const minutes = screen.getByRole<HTMLInputElement>('spinbutton', {
      name: 'Lock after this many idle minutes',
      description: '0 never locks on its own.',
    });
    expect(minutes.value).toBe('10');
    expect(screen.getByRole<HTMLSelectElement>('combobox', { name: 'Theme' }).value).toBe('system');
    expect(checkbox('Lock when the window closes').checked).toBe(true);
    expect(checkbox('Lock when the computer goes to sleep').checked).toBe(true);
    expect(checkbox('Lock when the screen locks').checked).toBe(false);
    expect(checkbox('Reduce motion').checked).toBe(false);
  });

  it('saves the idle minutes typed when the field is left, and only when they changed', async () => {
    const api = settingsStore();
    await openSettings(api);
    const minutes = screen.getByRole('spinbutton', { name: 'Lock after this many idle minutes' });
    await userEvent.click(minutes);
    await userEvent.tab();
    expect(sets(api)).toEqual([]);
    await userEvent.clear(minutes);
    await userEvent.type(minutes, '0');
    await userEvent.tab();
    expect(sets(api)).toEqual([{ autoLockMinutes: 0 }]);
  });

  it('refuses minutes outside 0 to a day, saying what it takes, and saves nothing', async () => {
    const api = settingsStore();
    await openSettings(api);
    const minutes = screen.getByRole('spinbutton', { name: 'Lock after this many idle minutes' });
    for (const typed of ['1441', '-1', '']) {
      await userEvent.clear(minutes);
      if (typed !== '') await userEvent.type(minutes, typed);
      await userEvent.tab();
      expect(screen.getByRole('alert').textContent).toBe(
        `Auto-lock takes a number of minutes from 0 (never) to ${(1440).toLocaleString()}.`,
      );
    }
    expect(sets(api)).toEqual([]);
  });

  it('saves each lock trigger as it is ticked or cleared', async () => {
    const api = settingsStore();
    await openSettings(api);
    await userEvent.click(checkbox('Lock when the screen locks'));
    await userEvent.click(checkbox('Lock when the computer goes to sleep'));
    await userEvent.click(checkbox('Lock when the window closes'));
    expect(sets(api)).toEqual([{ lockOnScreenLock: true }, { lockOnSuspend: false }, { lockOnClose: false }]);
    expect(checkbox('Lock when the screen locks').checked).toBe(true);
    expect(checkbox('Lock when the computer goes to sleep').checked).toBe(false);
  });

  it('saves the theme and reduced motion, and applies them to the window at once', async () => {
    const api = settingsStore();
    await openSettings(api);
    await userEvent.selectOptions(screen.getByRole('combobox', { name: 'Theme' }), 'Dark');
    await userEvent.click(checkbox('Reduce motion'));
    expect(sets(api)).toEqual([{ theme: 'dark' }, { reduceMotion: true }]);
    expect(document.documentElement.dataset.theme).toBe('dark');
    expect(document.documentElement.dataset.reduceMotion).toBe('true');
    await userEvent.selectOptions(screen.getByRole('combobox', { name: 'Theme' }), 'Same as the system');
    expect(document.documentElement.dataset.theme).toBeUndefined();
  });

  it('puts a refused change back and says why', async () => {
    const api = settingsStore({ 'settings.set': () => new Refusal('IO') });
    await openSettings(api);
    await userEvent.click(checkbox('Lock when the screen locks'));
    expect((await screen.findByRole('alert')).textContent).toBe(errorSentence('IO'));
    expect(checkbox('Lock when the screen locks').checked).toBe(false);
  });

  it('offers hiding the window from screen capture where the host can, and saves the choice', async () => {
    const api = settingsStore();
    await openSettings(api);
    const protection = await screen.findByRole<HTMLInputElement>('checkbox', {
      name: 'Hide the window from screen capture and screen sharing',
      description: /^Screenshots and shared screens show the window blank\./,
    });
    expect(protection.disabled).toBe(false);
    expect(protection.checked).toBe(true);
    await userEvent.click(protection);
    expect(sets(api)).toEqual([{ contentProtection: false }]);
    expect(protection.checked).toBe(false);
  });

  it('where the host cannot hide the window, shows the setting off and unavailable, and says why', async () => {
    await openSettings(settingsStore({}, { contentProtection: false }));
    const protection = checkbox('Hide the window from screen capture and screen sharing');
    expect(protection.disabled).toBe(true);
    // Saved as on (from a host that could), but not shown as on where it has no effect.
    expect(protection.checked).toBe(false);
    expect(screen.getByText(/^Not available here:/)).toBeTruthy();
  });

  it('says in words when the settings cannot be read', async () => {
    vi.resetModules();
    const { installApi } = await import('../../src/renderer/api.js');
    const { SettingsDialog } = await import('../../src/renderer/components/SettingsDialog.js');
    installApi(settingsStore({ 'settings.get': () => new Refusal('IO') }));
    render(<SettingsDialog onClose={() => undefined} />);
    expect((await screen.findByRole('alert')).textContent).toBe(errorSentence('IO'));
    expect(screen.queryByRole('checkbox')).toBeNull();
  });
});
