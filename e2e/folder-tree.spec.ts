/** The sidebar's folder tree: an ARIA tree(grid) with levels and positions, driven by the keyboard alone. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { AxeBuilder } from '@axe-core/playwright';

import { expect, test } from './fixtures.js';
import { createVault, newFolder, row } from './steps.js';

test('the folder tree has levels and positions, and the keyboard moves, opens, closes and shows folders', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  const source = await mkdtemp(join(tmpdir(), 'coffer-e2e-tree-'));
  await mkdir(join(source, 'Docs', 'Letters', 'Old'), { recursive: true });
  await mkdir(join(source, 'Docs', 'Taxes'), { recursive: true });
  await writeFile(join(source, 'Docs', 'Letters', 'Old', 'x.txt'), 'x');
  await coffer.answerFolderDialogs([join(source, 'Docs')]);
  await page.getByRole('button', { name: 'Add folder…' }).click();
  await expect(row(page, 'Docs')).toBeVisible();

  const tree = page.getByRole('treegrid', { name: 'Folders' });
  const item = (name: string) => tree.getByRole('row', { name, exact: true });
  await expect(item('Personal')).toHaveAttribute('aria-selected', 'true');
  await expect(item('Personal')).toHaveAttribute('aria-expanded', 'true');
  await expect(item('Docs')).toHaveAttribute('aria-level', '2');
  await expect(item('Docs')).toHaveAttribute('aria-expanded', 'false');
  await expect(item('Docs')).toHaveAttribute('aria-posinset', '1');
  await expect(item('Docs')).toHaveAttribute('aria-setsize', '1');
  await expect(item('Letters')).toHaveCount(0); // closed folders do not render their children

  await item('Personal').focus();
  await page.keyboard.press('ArrowDown');
  await expect(item('Docs')).toBeFocused();
  await page.keyboard.press('ArrowRight'); // opens
  await expect(item('Docs')).toHaveAttribute('aria-expanded', 'true');
  await expect(item('Letters')).toHaveAttribute('aria-level', '3');
  await expect(item('Taxes')).toHaveAttribute('aria-posinset', '2');
  await expect(item('Taxes')).toHaveAttribute('aria-setsize', '2');
  await page.keyboard.press('ArrowRight'); // to the first child
  await expect(item('Letters')).toBeFocused();
  await page.keyboard.press('ArrowDown');
  await expect(item('Taxes')).toBeFocused();
  // Moving does not open folders; Enter does.
  await expect(page.getByRole('navigation', { name: 'Folder path' })).not.toContainText('Taxes');
  await page.keyboard.press('Enter');
  await expect(page.getByRole('navigation', { name: 'Folder path' })).toContainText('Taxes');
  await expect(item('Taxes')).toHaveAttribute('aria-selected', 'true');
  await expect(item('Personal')).toHaveAttribute('aria-selected', 'false');

  await page.keyboard.press('ArrowUp');
  await page.keyboard.press(' ');
  await expect(row(page, 'Old')).toBeVisible();
  await expect(item('Letters')).toHaveAttribute('aria-selected', 'true');
  // The folder shown opens in the tree too.
  await expect(item('Letters')).toHaveAttribute('aria-expanded', 'true');
  await expect(item('Letters')).toBeFocused();
  await page.keyboard.press('ArrowLeft'); // an open folder: closes
  await expect(item('Letters')).toHaveAttribute('aria-expanded', 'false');
  await page.keyboard.press('ArrowLeft'); // a closed one: to its parent
  await expect(item('Docs')).toBeFocused();
  await page.keyboard.press('ArrowLeft'); // an open one: closes
  await expect(item('Docs')).toHaveAttribute('aria-expanded', 'false');
  await expect(item('Letters')).toHaveCount(0);
  await page.keyboard.press('Home');
  await expect(item('Personal')).toBeFocused();
  await page.keyboard.press('End');
  await expect(item('Docs')).toBeFocused();

  // Opening a folder elsewhere (the table) opens the tree down to it.
  await row(page, 'Old').dblclick();
  await expect(item('Old')).toHaveAttribute('aria-selected', 'true');
  await expect(item('Old')).toHaveAttribute('aria-level', '4');

  // A folder in the tree takes rows dragged onto it.
  await row(page, 'x.txt').dragTo(item('Taxes'));
  await expect(row(page, 'x.txt')).toHaveCount(0);
  await item('Taxes').click();
  await expect(row(page, 'x.txt')).toBeVisible();

  // Going to a folder does not ask for the tree again; a change does, and the tree shows it.
  await newFolder(page, 'Receipts');
  await expect(item('Receipts')).toHaveAttribute('aria-level', '4');
  await item('Personal').click();
  await row(page, 'Docs').dblclick();
  await row(page, 'Taxes').click();
  await page.keyboard.press('F2');
  await page.getByLabel('New name for Taxes').fill('Tax');
  await page.keyboard.press('Enter');
  await expect(item('Tax')).toHaveAttribute('aria-level', '3');
  await expect(item('Taxes')).toHaveCount(0);

  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    const { violations } = await new AxeBuilder({ page })
      .include('.sidebar')
      .withTags(['wcag2a', 'wcag2aa'])
      .analyze();
    expect(
      violations.filter(({ impact }) => impact === 'serious' || impact === 'critical').map(({ id }) => id),
      colorScheme,
    ).toEqual([]);
  }
  await rm(source, { recursive: true, force: true });
});
