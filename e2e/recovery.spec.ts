/** Unlocking with the recovery key (issue 12's Unlock screen, issue 14's recovery key): typo, wrong key, right key. */
import { join } from 'node:path';

import { encodePassphrase, loadSodium, Vault } from '../src/core/index.js';
import { makeVault } from './engine-vault.js';
import { expect, test } from './fixtures.js';
import { PASSPHRASE, row } from './steps.js';

/** Makes a recovery key for a closed vault with the engine, as `coffer recovery-key` does. */
async function recoveryKeyOf(dir: string): Promise<string> {
  const sodium = await loadSodium();
  const vault = await Vault.open(dir, { sodium });
  try {
    await vault.unlock(encodePassphrase(sodium, PASSPHRASE));
    return await vault.createRecoveryKey();
  } finally {
    vault.close();
  }
}

test('the recovery key unlocks; a typo and a revoked key are told apart, focus kept', async ({ coffer }) => {
  const dir = join(coffer.vaultParent, 'Recoverable');
  await makeVault(dir, new Map([['/docs', ['a.txt']]]));
  const revoked = await recoveryKeyOf(dir);
  const key = await recoveryKeyOf(dir);
  const { page } = coffer;
  await coffer.answerFolderDialogs([dir]);
  await page.getByRole('button', { name: 'Open vault…' }).click();
  await page.getByRole('button', { name: 'Use the recovery key instead' }).click();
  const field = page.getByLabel('Recovery key', { exact: true });
  const unlock = page.getByRole('button', { name: 'Unlock' });

  // One character changed: the checksum says it is a typo, not a wrong key.
  const typo = (key[0] === 'A' ? 'B' : 'A') + key.slice(1);
  await field.fill(typo);
  await unlock.click();
  await expect(page.getByText(/typo|mistyped|check/iu).first()).toBeVisible();
  await expect(field).toBeFocused();

  await field.fill(revoked);
  await unlock.click();
  await expect(page.getByText('This recovery key does not open this vault')).toBeVisible();
  await expect(field).toBeFocused();

  await field.fill(key.toLowerCase());
  await unlock.click();
  await expect(row(page, 'docs')).toBeVisible();
});
