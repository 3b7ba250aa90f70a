/** Steps several specs take, as a person would take them. */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';

import { expect, type Page } from '@playwright/test';

import type { CofferApp } from './fixtures.js';

export const PASSPHRASE = 'correct horse battery staple';

export const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
export const sha256OfFile = async (path: string): Promise<string> => sha256(await readFile(path));

/**
 * Creates a vault (default "Personal") in `coffer.vaultParent` through the start screen, its sizes padded unless
 * `padSizes` is false; ends in the browser.
 */
export async function createVault(
  coffer: CofferApp,
  name = 'Personal',
  { padSizes = true }: { padSizes?: boolean } = {},
): Promise<void> {
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
  await page.getByLabel("Hide each file's exact size").setChecked(padSizes);
  await page.getByRole('button', { name: 'Create vault' }).click();
  await expect(page.getByText('This folder is empty.')).toBeVisible();
}

/** Opens the vault folder `dir` with "Open vault…" and unlocks it with {@link PASSPHRASE}. */
export async function openAndUnlock(coffer: CofferApp, page: Page, dir: string): Promise<void> {
  await coffer.answerFolderDialogs([dir]);
  await page.getByRole('button', { name: 'Open vault…' }).click();
  await page.getByLabel('Passphrase', { exact: true }).fill(PASSPHRASE);
  await page.getByRole('button', { name: 'Unlock' }).click();
  await expect(
    page.getByRole('grid', { name: 'Files' }).or(page.getByText('This folder is empty.')),
  ).toBeVisible();
}

/** The table row whose name is exactly `name`. */
export function row(page: Page, name: string) {
  return page
    .getByRole('grid')
    .getByRole('row')
    .filter({ has: page.getByRole('gridcell').first().getByText(name, { exact: true }) });
}
