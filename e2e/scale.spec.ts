/** Flow 12: a vault of 100,000 entries made by the engine: the window stays a window. */
import { join } from 'node:path';

import { fileNames, makeVault, spreadLayout } from './engine-vault.js';
import { expect, test } from './fixtures.js';
import { openAndUnlock, row } from './steps.js';

/** More rows than this in the DOM would mean the table is not virtualised (the screen shows about 20). */
const MOST_ROWS_IN_DOM = 60;

test('flow 12: 100,000 entries: unlock shows the root, the table keeps a few dozen rows while scrolling, search finds a name', async ({
  coffer,
}) => {
  // Making 100,000 entries takes the engine most of a minute on a small machine; the window's part is quick.
  test.setTimeout(10 * 60_000);
  const dir = join(coffer.vaultParent, 'Big vault');
  // /big holds 10,000 files (file-000000…009999); /data/folder-000…089 hold 1,000 each, numbered on.
  await makeVault(dir, new Map([['/big', fileNames(0, 10_000)], ...spreadLayout('/data', 90, 1000, 10_000)]));
  const { page } = coffer;
  await openAndUnlock(coffer, page, dir);
  const grid = page.getByRole('grid', { name: 'Files' });
  const status = page.getByRole('status', { name: 'Status' });
  await expect(row(page, 'big')).toBeVisible();
  await expect(row(page, 'data')).toBeVisible();
  await expect(status).toContainText('2 items');

  await row(page, 'big').dblclick();
  await expect(status).toContainText('10,000 items');
  await expect(grid).toHaveAttribute('aria-rowcount', '10001');
  await expect(row(page, 'file-000000.txt')).toBeVisible();
  const rowsInDom = () => grid.getByRole('row').count();
  expect(await rowsInDom()).toBeLessThan(MOST_ROWS_IN_DOM);

  // Scroll with the wheel to the middle, and with the keyboard to the end.
  await grid.getByTestId('grid-body').hover();
  await page.mouse.wheel(0, 34 * 5000);
  // The rows scrolled past leave the DOM, but for the one the keyboard is on (the grid's active descendant).
  await expect(row(page, 'file-000001.txt')).toHaveCount(0);
  await expect(
    grid
      .getByRole('row')
      .filter({ hasText: /file-00[45]\d{3}\.txt/ })
      .first(),
  ).toBeVisible();
  expect(await rowsInDom()).toBeLessThan(MOST_ROWS_IN_DOM);
  await grid.getByRole('row').nth(5).click();
  await page.keyboard.press('End');
  await expect(row(page, 'file-009999.txt')).toBeVisible();
  await expect(row(page, 'file-009999.txt')).toHaveAttribute('aria-selected', 'true');
  expect(await rowsInDom()).toBeLessThan(MOST_ROWS_IN_DOM);

  // Search over every name in the vault.
  await page.keyboard.press('Control+f');
  await page.keyboard.type('file-054321');
  const result = row(page, 'file-054321.txt');
  await expect(result).toBeVisible();
  await expect(result).toContainText('/data/folder-044');
  await expect(status).toContainText('1 result');
});
