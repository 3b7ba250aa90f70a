/** Flow 5: search across 2,000 entries, then navigate, open, go up, rename and delete with the keyboard only. */
import { join } from 'node:path';

import { makeVault, spreadLayout } from './engine-vault.js';
import { expect, test } from './fixtures.js';
import { openAndUnlock, row } from './steps.js';

test('flow 5: searches 2,000 entries; keyboard only: navigate, open, go up, rename, delete', async ({
  coffer,
}) => {
  const dir = join(coffer.vaultParent, 'Projects vault');
  // 20 folders of 100 files: /projects/folder-012 holds file-001200.txt … file-001299.txt.
  await makeVault(dir, new Map(spreadLayout('/projects', 20, 100)));
  const { page } = coffer;
  await openAndUnlock(coffer, page, dir);
  const grid = page.getByRole('grid', { name: 'Files' });
  const path = page.getByRole('navigation', { name: 'Folder path' });
  const status = page.getByRole('status', { name: 'Status' });
  await expect(grid).toBeFocused();

  // Search the whole vault: each result with its folder.
  await page.keyboard.press('Control+f');
  await expect(page.getByRole('searchbox', { name: 'Search this vault' })).toBeFocused();
  await page.keyboard.type('file-0019');
  await expect(status).toContainText('100 results');
  await page.keyboard.type('99');
  const results = page.getByRole('grid', { name: 'Search results' });
  await expect(results.getByRole('row')).toHaveCount(2);
  await expect(row(page, 'file-001999.txt')).toContainText('/projects/folder-019');
  await page.keyboard.type('x');
  await expect(page.getByText('No names match “file-001999x”.')).toBeVisible();
  await page.keyboard.press('Escape');

  // Navigate and open folders.
  await page.keyboard.press('Control+f');
  await page.keyboard.press('Escape');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Shift+Tab');
  await expect(page.getByRole('searchbox')).toBeFocused();
  await page.keyboard.press('ArrowDown');
  await expect(grid).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(path).toContainText('projects');
  await expect(status).toContainText('20 items');
  for (let i = 0; i < 12; i++) await page.keyboard.press('ArrowDown');
  await expect(row(page, 'folder-012')).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('Shift+ArrowDown');
  await expect(status).toContainText('2 selected');
  await page.keyboard.press('ArrowUp');
  await expect(status).toContainText('1 selected');
  await page.keyboard.press('Enter');
  await expect(path).toContainText('folder-012');
  await expect(status).toContainText('100 items');
  await page.keyboard.press('Control+a');
  await expect(status).toContainText('100 selected');

  // Go up (Alt+Up, Backspace): the folder just left is selected.
  await page.keyboard.press('Alt+ArrowUp');
  await expect(row(page, 'folder-012')).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('Enter');
  await expect(path).toContainText('folder-011');
  await page.keyboard.press('Backspace');
  await expect(row(page, 'folder-011')).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await expect(path).toContainText('folder-012');

  // Rename in place (F2): the name is selected without its extension.
  await page.keyboard.press('ArrowDown');
  await expect(row(page, 'file-001201.txt')).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('F2');
  await expect(page.getByLabel('New name for file-001201.txt')).toBeFocused();
  await page.keyboard.type('renamed');
  await page.keyboard.press('Enter');
  await expect(row(page, 'renamed.txt')).toHaveAttribute('aria-selected', 'true');
  await expect(row(page, 'file-001201.txt')).toHaveCount(0);

  // Delete, confirmed from the keyboard.
  await page.keyboard.press('Delete');
  const dialog = page.getByRole('alertdialog', { name: 'Delete “renamed.txt”?' });
  await expect(dialog).toBeVisible();
  // Cancel has the focus first (Enter out of habit deletes nothing); Tab goes to Delete.
  await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await expect(dialog).toHaveCount(0);
  await expect(row(page, 'renamed.txt')).toHaveCount(0);
  await expect(status).toContainText('99 items');
  await expect(grid).toBeFocused();
});
