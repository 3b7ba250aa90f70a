/** Steps the specs share, done through the window as a person would. */
import { createHash } from 'node:crypto';

import { expect, type CofferApp } from './fixtures.js';

export const PASSPHRASE = 'correct horse battery staple';

export const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Creates a vault (default "Personal") in `coffer.vaultParent` through the start screen; ends in the browser. */
export async function createVault(coffer: CofferApp, name = 'Personal'): Promise<void> {
  const { page } = coffer;
  await page.getByRole('button', { name: 'Create vault…' }).click();
  await coffer.answerFolderDialogs([coffer.vaultParent]);
  await page.getByRole('button', { name: 'Choose…' }).click();
  await expect(page.getByText(coffer.vaultParent)).toBeVisible();
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Passphrase', { exact: true }).fill(PASSPHRASE);
  await page.getByLabel('Repeat passphrase').fill(PASSPHRASE);
  // The fastest preset keeps the test quick; the default is 'moderate'.
  await page.getByLabel('Key strength').selectOption('interactive');
  await page.getByRole('button', { name: 'Create vault' }).click();
  await expect(page.getByText('This folder is empty.')).toBeVisible();
}
