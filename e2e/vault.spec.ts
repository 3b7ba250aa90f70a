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
  if (coffer.preview) {
    // The preview's bridge sends requests on its socket: record which.
    await page.evaluate(() => {
      const sent: string[] = [];
      const send = Object.getOwnPropertyDescriptor(WebSocket.prototype, 'send')?.value as WebSocket['send'];
      WebSocket.prototype.send = function (this: WebSocket, data) {
        if (typeof data === 'string') sent.push(String((JSON.parse(data) as { channel?: unknown }).channel));
        send.call(this, data);
      };
      (window as unknown as { sentChannels: string[] }).sentChannels = sent;
    });
  }
  await page.getByRole('button', { name: 'Unlock' }).click();
  await expect(page.getByText('This folder is empty.')).toBeVisible();
  if (coffer.preview) {
    const sent = (): Promise<string[]> =>
      page.evaluate(() => (window as unknown as { sentChannels: string[] }).sentChannels);
    // The browser's first load asks for the vault's size with the rows, when it asks for them at all.
    await expect.poll(sent).toContain('vault.totals');
    // The root's rows came with the unlock's answer.
    expect(await sent()).not.toContain('entries.list');
  }
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

test('Ctrl+L with a dialog open locks, and the unlock screen takes the keyboard in the passphrase field', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  await page.getByRole('button', { name: 'Settings' }).click();
  await expect(page.getByRole('dialog', { name: 'Settings' })).toBeVisible();
  await page.keyboard.press('Control+l');
  await expect(page.getByLabel('Passphrase', { exact: true })).toBeFocused();
});
