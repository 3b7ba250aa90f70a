import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

import { formatSize } from '../src/renderer/format.js';
import { dropFiles } from './drop.js';
import { expect, test } from './fixtures.js';
import { createVault, PASSPHRASE, sha256, sha256OfFile } from './steps.js';

test('creates a vault, locks it, refuses a wrong passphrase and unlocks with the right one', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);

  await page.getByRole('button', { name: 'Lock vault' }).click();
  await expect(page.getByRole('heading', { name: 'Personal' })).toBeVisible();
  const field = page.getByLabel('Passphrase');

  await field.fill('not the passphrase');
  await page.getByRole('button', { name: 'Unlock' }).click();
  await expect(page.getByRole('alert')).toHaveText(
    'Wrong passphrase. Check Caps Lock and the keyboard layout.',
  );
  await expect(field).toBeFocused();

  await field.fill(PASSPHRASE);
  await page.getByRole('button', { name: 'Unlock' }).click();
  await expect(page.getByText('This folder is empty.')).toBeVisible();
});

test('adds a dropped file, lists it with its size, and restores the same bytes', async ({ coffer }) => {
  const { page } = coffer;
  await createVault(coffer);
  const bytes = randomBytes(200_000);

  await dropFiles(page, [{ name: 'report.pdf', bytes }]);
  const row = page.getByRole('row', { name: /report\.pdf/ });
  await expect(row).toBeVisible();
  await expect(row.getByRole('gridcell').nth(1)).toHaveText(formatSize(bytes.length));

  await row.click();
  await coffer.answerFolderDialogs([coffer.restoreDir]);
  await page.getByRole('button', { name: 'Restore to…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Restore' }).click();
  await expect(page.getByText('Restored 1 file.')).toBeVisible();
  expect(await sha256OfFile(join(coffer.restoreDir, 'report.pdf'))).toBe(sha256(bytes));
});
