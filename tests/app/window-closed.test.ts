import { describe, expect, it } from 'vitest';

import type { Settings } from '../../src/shared/contract.js';
import { newApp, newVaultIn } from './helpers.js';

describe('the window closing, and the settings the host applies', () => {
  it('locks every vault when the window closes, by default', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    await app.backend.windowClosed();
    expect(await app.call('vault.listOpen', {})).toMatchObject([{ vaultId, locked: true }]);
    expect(app.events).toContainEqual({
      event: 'locked',
      payload: { vaultId, reason: 'window-closed', stoppedJobs: [] },
    });
  });

  it('leaves the vaults unlocked when "lock when the window closes" is off', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    await app.call('settings.set', { lockOnClose: false });
    await app.backend.windowClosed();
    expect(await app.call('vault.listOpen', {})).toMatchObject([{ vaultId, locked: false }]);
  });

  it('tells the host each change of the settings, and says whether content protection is available', async () => {
    const changes: Settings[] = [];
    const app = await newApp({
      contentProtection: true,
      onSettingsChanged: (settings) => {
        changes.push(settings);
      },
    });
    expect(await app.call('app.capabilities', {})).toMatchObject({ contentProtection: true });
    expect(app.backend.settings.contentProtection).toBe(false);
    await app.call('settings.set', { contentProtection: true });
    expect(changes).toMatchObject([{ contentProtection: true }]);
    expect(app.backend.settings.contentProtection).toBe(true);

    const elsewhere = await newApp();
    expect(await elsewhere.call('app.capabilities', {})).toMatchObject({ contentProtection: false });
  });
});
