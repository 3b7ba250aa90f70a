import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { Vault } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { passphrase } from '../helpers/vault.js';
import { codeOf, newApp, newVaultIn } from './helpers.js';

/** Makes a recovery key for a closed vault with the engine, as `coffer recovery-key` does. */
async function recoveryKeyOf(dir: string): Promise<string> {
  const vault = await Vault.open(dir, { sodium: nativeSodium });
  try {
    await vault.unlock(passphrase());
    return await vault.createRecoveryKey();
  } finally {
    vault.close();
  }
}

describe('unlocking with the recovery key in the app', () => {
  it('opens with the key as printed, refuses a typo as such and a revoked key as wrong', async () => {
    const app = await newApp();
    const { vaultId: created, parent } = await newVaultIn(app);
    await app.call('vault.close', { vaultId: created });
    const dir = join(parent, 'vault');
    const revoked = await recoveryKeyOf(dir);
    const key = await recoveryKeyOf(dir);
    const [recent] = await app.call('recent.list', {});
    if (!recent) throw new Error('no recent vault');
    const { vaultId } = await app.call('vault.open', { recentId: recent.recentId });

    const typo = (key.startsWith('A') ? 'B' : 'A') + key.slice(1);
    const unlockWith = (recoveryKey: string) =>
      app.raw('vault.unlockWithRecoveryKey', { vaultId, recoveryKey });
    expect(codeOf(await unlockWith(typo))).toBe('INVALID_ARGUMENT');
    expect(codeOf(await unlockWith(revoked))).toBe('WRONG_PASSPHRASE');
    expect(codeOf(await unlockWith(key.toLowerCase()))).toBe('ok');
    expect((await app.call('vault.info', { vaultId })).locked).toBe(false);
  });
});
