import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { SETTINGS_FILE, SettingsStore } from '../../src/app/settings.js';
import { DEFAULT_SETTINGS } from '../../src/shared/contract.js';
import { tempDir } from '../helpers/vault.js';
import { newApp } from './helpers.js';

describe('settings store', () => {
  it('starts with defaults, saves changes as JSON and reads them back', async () => {
    const dataDir = tempDir();
    const store = await SettingsStore.load(dataDir);
    expect(store.settings).toEqual(DEFAULT_SETTINGS);
    expect(store.updateSettings({ theme: 'dark' })).toEqual({ ...DEFAULT_SETTINGS, theme: 'dark' });
    store.remember('/home/u/Vaults/one', 1000);
    const stored = JSON.parse(readFileSync(join(dataDir, SETTINGS_FILE), 'utf8')) as unknown;
    expect(stored).toMatchObject({
      version: 1,
      settings: { theme: 'dark' },
      recent: [{ dir: '/home/u/Vaults/one' }],
    });
    const again = await SettingsStore.load(dataDir);
    expect(again.settings.theme).toBe('dark');
    expect(again.recent.map((entry) => entry.dir)).toEqual(['/home/u/Vaults/one']);
    expect(again.problem).toBeUndefined();
    // Written through a temp file and a rename: nothing else is left in the folder.
    expect(readdirSync(dataDir)).toEqual([SETTINGS_FILE]);
  });

  it('creates a missing data folder, private to the user', async () => {
    const dataDir = join(tempDir(), 'not', 'yet');
    const store = await SettingsStore.load(dataDir);
    store.updateSettings({ theme: 'light' });
    expect(readdirSync(dataDir)).toEqual([SETTINGS_FILE]);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
  });

  it('keeps one entry per folder, most recent first, and forgets the oldest past the limit', async () => {
    const store = await SettingsStore.load(tempDir());
    const first = store.remember('/a', 1);
    store.remember('/b', 2);
    expect(store.remember('/a', 3).id).toBe(first.id);
    expect(store.recent.map((entry) => entry.dir)).toEqual(['/a', '/b']);
    for (let i = 0; i < 60; i++) store.remember(`/many/${i}`, 10 + i);
    expect(store.recent).toHaveLength(50);
    expect(store.recent.at(-1)?.dir).toBe('/many/10');
  });

  for (const [what, text] of [
    ['not JSON', '{"version": 1, "sett'],
    [
      'a wrong shape',
      JSON.stringify({ version: 1, settings: { theme: 'neon', autoLockMinutes: 5 }, recent: [] }),
    ],
    ['a future version', JSON.stringify({ version: 2, settings: DEFAULT_SETTINGS, recent: [] })],
  ]) {
    it(`replaces a damaged file (${what}) by defaults, keeps it aside and reports it`, async () => {
      const dataDir = tempDir();
      writeFileSync(join(dataDir, SETTINGS_FILE), text ?? '');
      const app = await newApp({ dataDir });
      expect(await app.call('settings.get', {})).toEqual(DEFAULT_SETTINGS);
      const [problem] = await app.call('app.problems', {});
      expect(problem?.message).toContain('damaged');
      const aside = readdirSync(dataDir).filter((name) => name.startsWith(`${SETTINGS_FILE}.damaged-`));
      expect(aside).toHaveLength(1);
      expect(readFileSync(join(dataDir, aside[0] ?? ''), 'utf8')).toBe(text);
      expect(await app.call('settings.set', { autoLockMinutes: 3 })).toEqual({
        ...DEFAULT_SETTINGS,
        autoLockMinutes: 3,
      });
    });
  }

  it('changes settings through the contract and refuses values out of range', async () => {
    const app = await newApp();
    expect(await app.call('settings.set', { autoLockMinutes: 0, theme: 'light' })).toEqual({
      ...DEFAULT_SETTINGS,
      autoLockMinutes: 0,
      theme: 'light',
      reduceMotion: false,
    });
    expect(await app.call('settings.set', { reduceMotion: true })).toEqual({
      ...DEFAULT_SETTINGS,
      autoLockMinutes: 0,
      theme: 'light',
      reduceMotion: true,
    });
    expect((await app.raw('settings.set', { autoLockMinutes: -1 })).ok).toBe(false);
    expect((await app.raw('settings.set', { autoLockMinutes: 100_000 })).ok).toBe(false);
    expect((await app.raw('settings.set', { reduceMotion: 'yes' })).ok).toBe(false);
    expect(await app.call('settings.get', {})).toEqual({
      ...DEFAULT_SETTINGS,
      autoLockMinutes: 0,
      theme: 'light',
      reduceMotion: true,
    });
    expect(await app.call('app.problems', {})).toEqual([]);
  });

  it('leaves a setting given as undefined (IPC can carry that) as it was', async () => {
    const app = await newApp();
    await app.call('settings.set', { theme: 'dark' });
    expect((await app.raw('settings.set', { theme: undefined, reduceMotion: true })).ok).toBe(true);
    expect(await app.call('settings.get', {})).toMatchObject({ theme: 'dark', reduceMotion: true });
  });

  it('takes fractions of a minute for auto-lock (a test locks after seconds) and keeps them', async () => {
    const dataDir = tempDir();
    const app = await newApp({ dataDir });
    expect((await app.call('settings.set', { autoLockMinutes: 0.05 })).autoLockMinutes).toBe(0.05);
    expect((await SettingsStore.load(dataDir)).settings.autoLockMinutes).toBe(0.05);
  });

  it('reads a settings file written before reduced motion existed, with motion on, as not damaged', async () => {
    const dataDir = tempDir();
    writeFileSync(
      join(dataDir, SETTINGS_FILE),
      JSON.stringify({ version: 1, settings: { autoLockMinutes: 7, theme: 'dark' }, recent: [] }),
    );
    const store = await SettingsStore.load(dataDir);
    expect(store.problem).toBeUndefined();
    expect(store.settings).toEqual({ ...DEFAULT_SETTINGS, autoLockMinutes: 7, theme: 'dark' });
  });

  it('locks on suspend and on screen lock by default, and keeps either turned off', async () => {
    const dataDir = tempDir();
    writeFileSync(
      join(dataDir, SETTINGS_FILE),
      JSON.stringify({ version: 1, settings: { autoLockMinutes: 7, theme: 'dark' }, recent: [] }),
    );
    const app = await newApp({ dataDir });
    expect(await app.call('settings.get', {})).toMatchObject({ lockOnSuspend: true, lockOnScreenLock: true });
    await app.call('settings.set', { lockOnSuspend: false });
    expect(await app.call('settings.set', { lockOnScreenLock: false })).toMatchObject({
      lockOnSuspend: false,
      lockOnScreenLock: false,
    });
    expect((await app.raw('settings.set', { lockOnSuspend: 'no' })).ok).toBe(false);
    expect((await SettingsStore.load(dataDir)).settings).toMatchObject({
      autoLockMinutes: 7,
      lockOnSuspend: false,
      lockOnScreenLock: false,
    });
  });
});
