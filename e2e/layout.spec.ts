/**
 * A small window and long names: every dialog, row and path keeps what it says inside its box and its controls in
 * reach of the mouse and the keyboard.
 */
import type { Locator, Page } from '@playwright/test';

import { dropFiles } from './drop.js';
import { expect, test } from './fixtures.js';
import { createVault, dropZeroFiles, newFolder, PASSPHRASE, row, wholeText } from './steps.js';

const SMALL = { width: 800, height: 560 };
const LONG_NAME =
  'Quarterly_financial_statement_consolidated_final_version_reviewed_by_accounting_department_2026_Q3.pdf';

/** Whether `inner`'s box lies within `outer`'s (to the pixel). */
async function within(inner: Locator, outer: Locator): Promise<boolean> {
  const [a, b] = await Promise.all([inner.boundingBox(), outer.boundingBox()]);
  if (a === null || b === null) return false;
  return (
    a.x >= b.x - 0.5 &&
    a.y >= b.y - 0.5 &&
    a.x + a.width <= b.x + b.width + 0.5 &&
    a.y + a.height <= b.y + b.height + 0.5
  );
}

async function fitsWindow(page: Page, element: Locator): Promise<boolean> {
  const box = await element.boundingBox();
  const size = page.viewportSize();
  return box !== null && size !== null && box.y >= 0 && box.y + box.height <= size.height;
}

test('in a small window the Security page fits and scrolls, so a passphrase change can be sent', async ({
  coffer,
}) => {
  const { page } = coffer;
  await page.setViewportSize(SMALL);
  await createVault(coffer);
  await page.getByRole('button', { name: 'Security' }).click();
  await page.getByRole('button', { name: 'Change passphrase…' }).click();
  // The modal around the page, which scrolls it.
  const modal = page.getByRole('dialog', { name: 'Security' }).locator('..');
  expect(await fitsWindow(page, modal)).toBe(true);

  await page.getByLabel('Current passphrase', { exact: true }).fill(PASSPHRASE);
  await page.getByLabel('New passphrase', { exact: true }).fill('a new passphrase for a small window');
  await page.getByLabel('Repeat new passphrase', { exact: true }).fill('a new passphrase for a small window');
  await page.getByLabel('Key strength').selectOption('interactive');
  // Below the window's edge until the page is scrolled: the click scrolls it into view, as a person would.
  await page.getByRole('button', { name: 'Change passphrase', exact: true }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Passphrase changed.' })).toBeVisible();
});

test('a long file name wraps inside the delete dialog, and a long vault name inside its recent-vault row', async ({
  coffer,
}) => {
  const { page } = coffer;
  await page.setViewportSize(SMALL);
  const vaultName = 'Old archive that was moved to an external drive and renamed twice';
  await createVault(coffer, vaultName);
  await dropFiles(page, [{ name: LONG_NAME, size: 10 }]);
  await row(page, LONG_NAME).click();
  await page.keyboard.press('Delete');
  const confirm = page.getByRole('alertdialog');
  expect(await wholeText(confirm.getByRole('heading'))).toBe(true);
  await confirm.getByRole('button', { name: 'Cancel' }).click();

  await page.getByRole('button', { name: 'Lock vault' }).click();
  await page.getByRole('button', { name: 'Choose another vault' }).click();
  const recent = page.getByRole('listitem').filter({ hasText: vaultName });
  const open = recent.getByRole('button', { name: new RegExp(`^${vaultName}`) });
  expect(await within(recent.getByText(vaultName, { exact: true }), open)).toBe(true);
  // The folder is cut with an ellipsis inside the row, not drawn on under the Forget button beside it.
  expect(await within(recent.getByText(coffer.vaultParent, { exact: false }), open)).toBe(true);
});

test('deep in long-named folders, the path shows the folder open whole, and the folders between give way', async ({
  coffer,
}) => {
  const { page } = coffer;
  await page.setViewportSize({ width: 1280, height: 800 });
  await createVault(coffer);
  const folders = [
    'Household administration and paperwork',
    'Insurance policies and correspondence 2019-2026',
    'Car insurance claims after the accident',
    'Photographs of the damage',
  ];
  for (const folder of folders) {
    await newFolder(page, folder);
    await row(page, folder).dblclick();
    await expect(page.getByText('This folder is empty.')).toBeVisible();
  }
  const path = page.getByRole('navigation', { name: 'Folder path' });
  const shown = path.getByRole('button', { name: 'Photographs of the damage' });
  await expect(shown).toHaveAttribute('aria-current', 'page');
  expect(await wholeText(shown)).toBe(true);
  expect(await wholeText(path.getByRole('button', { name: 'Personal' }))).toBe(true);
  // Tabbing to a folder of the path shows its whole ring: the path, which clips what overflows it, cuts none of it.
  await page.keyboard.press('Shift+Tab');
  await shown.focus();
  const ringInsidePath = await shown.evaluate((button) => {
    const style = getComputedStyle(button);
    const reach = Math.max(0, parseFloat(style.outlineWidth) + parseFloat(style.outlineOffset));
    const ring = button.getBoundingClientRect();
    const clip = (button.closest('nav') as HTMLElement).getBoundingClientRect();
    return (
      style.outlineStyle !== 'none' &&
      ring.top - reach >= clip.top &&
      ring.bottom + reach <= clip.bottom &&
      ring.left - reach >= clip.left &&
      ring.right + reach <= clip.right
    );
  });
  expect(ringInsidePath).toBe(true);
});

test('Tab goes from the last column header past the rows’ scroller: the table is one stop, which scrolls it', async ({
  coffer,
}) => {
  const { page } = coffer;
  await page.setViewportSize(SMALL);
  await createVault(coffer);
  await dropZeroFiles(page, 40, 1);
  await expect(page.getByText('Added 40 files.')).toBeVisible();
  const body = page.getByTestId('grid-body');
  // Only a scroller that scrolls is made a Tab stop by Chromium.
  expect(await body.evaluate((node) => node.scrollHeight > node.clientHeight)).toBe(true);

  await page.getByRole('columnheader', { name: 'Modified' }).getByRole('button').focus();
  await page.keyboard.press('Tab');
  await expect(body).not.toBeFocused();
  await expect(page.getByRole('button', { name: 'Dismiss add job' })).toBeFocused();
});

test('a click below the rows gives the keyboard to the table, whose keys then move the selection', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  await dropFiles(page, [
    { name: 'first.txt', size: 1 },
    { name: 'second.txt', size: 1 },
  ]);
  await expect(page.getByText('Added 2 files.')).toBeVisible();
  const body = page.getByTestId('grid-body');
  const box = await body.boundingBox();
  expect(box).not.toBeNull();
  await body.click({ position: { x: 40, y: (box?.height ?? 0) - 20 } });
  const table = page.getByRole('grid', { name: 'Files' });
  await expect(table).toBeFocused();
  await page.keyboard.press('Home');
  await expect(table.getByRole('row', { selected: true })).toHaveCount(1);
  await expect(row(page, 'first.txt')).toHaveAttribute('aria-selected', 'true');
});
