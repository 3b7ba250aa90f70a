/** Steps several specs take, as a person would take them. */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';

import { expect, type Locator, type Page } from '@playwright/test';

import { dropFiles, type DroppedFile } from './drop.js';
import { plural } from '../src/shared/plural.js';
import type { CofferApp } from './fixtures.js';

export const PASSPHRASE = 'correct horse battery staple';

export const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
export const sha256OfFile = async (path: string): Promise<string> => sha256(await readFile(path));

export type KdfPreset = 'interactive' | 'moderate' | 'sensitive';

export interface CreateOptions {
  /** Whether stored sizes are padded (the form's default: yes). */
  readonly padSizes?: boolean;
  /** The key strength; the fastest by default, which keeps the test quick (the form's default is 'moderate'). */
  readonly kdf?: KdfPreset;
  /** What is typed in "Repeat passphrase" (by default {@link PASSPHRASE} again). */
  readonly repeat?: string;
}

/** Fills the create form from the start screen (in `coffer.vaultParent`, passphrase {@link PASSPHRASE}), unsent. */
export async function fillCreateForm(
  coffer: CofferApp,
  name = 'Personal',
  { padSizes = true, kdf = 'interactive', repeat = PASSPHRASE }: CreateOptions = {},
): Promise<void> {
  const { page } = coffer;
  await page.getByRole('button', { name: 'Create vault…' }).click();
  await coffer.answerFolderDialogs([coffer.vaultParent]);
  await page.getByRole('button', { name: 'Choose…' }).click();
  await expect(page.getByText(coffer.vaultParent)).toBeVisible();
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Passphrase', { exact: true }).fill(PASSPHRASE);
  await page.getByLabel('Repeat passphrase').fill(repeat);
  await page.getByLabel('Key strength').selectOption(kdf);
  await page.getByLabel('Hide each file’s exact size').setChecked(padSizes);
}

/**
 * Creates a vault (default "Personal") in `coffer.vaultParent` through the start screen, its sizes padded unless
 * `padSizes` is false; ends in the browser.
 */
export async function createVault(
  coffer: CofferApp,
  name = 'Personal',
  options: Omit<CreateOptions, 'repeat'> = {},
): Promise<void> {
  const { page } = coffer;
  await fillCreateForm(coffer, name, options);
  await page.getByRole('button', { name: 'Create vault' }).click();
  await expect(page.getByText('This folder is empty.')).toBeVisible();
}

/** Creates a vault as {@link createVault} does, and adds `files` to it by a drop; ends once they are in. */
export async function createVaultWith(coffer: CofferApp, files: readonly DroppedFile[]): Promise<void> {
  await createVault(coffer);
  await dropFiles(coffer.page, files);
  await expect(coffer.page.getByText(`Added ${plural(files.length, 'file')}.`)).toBeVisible();
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

/** The names in the file table, from the top (the header's "Name" first). */
export const shownNames = (page: Page): Promise<string[]> =>
  page.getByRole('grid').getByRole('row').locator('.col-name').allInnerTexts();

/** The file table's column header named `name`. */
/**
 * Whether `element` has room for its text on each line (no ellipsis, nothing running out). Measured in fractions of
 * a pixel: a cut of less than one still draws an ellipsis, and scrollWidth rounds it away.
 */
export const wholeText = (element: Locator): Promise<boolean> =>
  element.evaluate((node) => {
    const style = getComputedStyle(node);
    const room =
      node.getBoundingClientRect().width - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const text = document.createRange();
    text.selectNodeContents(node);
    return [...text.getClientRects()].every((line) => line.width <= room + 0.01);
  });

export const columnHeader = (page: Page, name: string) => page.getByRole('columnheader', { name });

/** Makes a folder `name` in the folder shown, with "New folder" and its name edited in place. */
export async function newFolder(page: Page, name: string): Promise<void> {
  await page.getByRole('button', { name: 'New folder' }).click();
  await page.getByLabel('New name for New folder').fill(name);
  await page.keyboard.press('Enter');
  await expect(row(page, name)).toBeVisible();
}

/** Moves the row `name` into `folder` with "Move to…" from its context menu; it leaves the folder shown. */
export async function moveWithDialog(page: Page, name: string, folder: string): Promise<void> {
  await row(page, name).click({ button: 'right' });
  await page.getByRole('menuitem', { name: 'Move to…' }).click();
  const dialog = page.getByRole('dialog', { name: `Move “${name}” to…` });
  await dialog.getByRole('option', { name: folder }).click();
  await dialog.getByRole('button', { name: 'Move here' }).click();
  await expect(row(page, name)).toHaveCount(0);
}

/** Restores the selection into `coffer.restoreDir` ("Restore to…", the folder dialog, then Restore). */
export async function restoreSelection(coffer: CofferApp, page: Page = coffer.page): Promise<void> {
  await coffer.answerFolderDialogs([coffer.restoreDir]);
  await page.getByRole('button', { name: 'Restore to…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Restore' }).click();
}

/** Drops `count` files of `size` zero bytes each ("part-00.bin"…): for an add that takes a while. */
export async function dropZeroFiles(page: Page, count: number, size: number): Promise<void> {
  await dropFiles(
    page,
    Array.from({ length: count }, (_, index) => ({
      name: `part-${String(index).padStart(2, '0')}.bin`,
      size,
    })),
  );
}
