/**
 * Flows 7–10 of issue 12: cancelling an add, preview and lock, auto-lock, a damaged file; plus the settings that
 * change the window's appearance.
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { Page } from '@playwright/test';

import { formatSize } from '../src/renderer/format.js';
import { createVault, dropZeroFiles, moveWithDialog, newFolder, PASSPHRASE, row, sha256 } from './steps.js';
import { dropFiles, holdDroppedBytes } from './drop.js';
import { expect, test, type CofferApp } from './fixtures.js';

/** A valid 1×1 PNG. */
const PIXEL_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

/**
 * Sets how fast the page's uploads (a drop's bytes, in the preview) go, through DevTools' network emulation; -1
 * lifts the limit. Skips the test in Electron, where the bytes cross by IPC, which DevTools cannot hold back.
 */
async function uploadThrottle(coffer: CofferApp): Promise<(bytesPerSecond: number) => Promise<unknown>> {
  test.skip(
    coffer.preview === undefined,
    'The test holds the dropped bytes back with DevTools network emulation; in Electron they cross by IPC',
  );
  const { page } = coffer;
  const devtools = await page.context().newCDPSession(page);
  await devtools.send('Network.enable');
  return (bytesPerSecond) =>
    devtools.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: bytesPerSecond,
    });
}

/** Runs "Check all data" from Vault details and returns the report's region. */
async function checkAllData(page: Page) {
  await page.getByRole('button', { name: 'Vault details' }).click();
  const details = page.getByRole('dialog', { name: 'Vault details' });
  await details.getByRole('button', { name: 'Check all data' }).click();
  const report = details.getByRole('region', { name: 'Check report' });
  await expect(report).toBeVisible();
  return report;
}

/**
 * Whether `url` still resolves to an image, asked from the page. An <img> rather than fetch(): the window's CSP
 * (connect-src) refuses fetch() of any blob: URL, revoked or not, so only img-src tells the two apart.
 */
function loadsAsImage(page: Page, url: string): Promise<boolean> {
  return page.evaluate(
    (href) =>
      new Promise<boolean>((resolve) => {
        const probe = new Image();
        probe.onload = () => {
          resolve(true);
        };
        probe.onerror = () => {
          resolve(false);
        };
        probe.src = href;
      }),
    url,
  );
}

test('flow 7: cancelling a large add midway leaves only whole files, and "Check all data" finds no damage', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  const size = 8_000_000;
  const count = 48;
  await dropZeroFiles(page, count, size);

  const job = page.getByRole('listitem', { name: 'Add job' });
  // Midway: some bytes are in, so the job has really started writing, and its figures show.
  await expect(job.getByRole('status')).toContainText(/Adding · \d+ of 48 files · [1-9][\d.]* (kB|MB)/);
  await expect(job.getByRole('progressbar', { name: 'Adding progress' })).toBeVisible();
  // Files show in the folder as they go in, before the add ends.
  const rows = page
    .getByRole('grid', { name: 'Files' })
    .getByRole('row')
    .filter({ has: page.getByRole('gridcell') });
  await expect(rows.first()).toBeVisible();
  await expect(job.getByRole('status')).toContainText('Adding');
  await job.getByRole('button', { name: 'Cancel' }).click();
  const stopped = job.getByRole('status');
  await expect(stopped).toHaveText(
    /^Stopped after adding \d+ files?: (it is|those are) in the vault, and nothing half-added is\. Add the rest again\.$/,
  );
  // As many files as it says got in are listed (the status bar counts them: the table draws only those in view),
  // each whole; nothing else is.
  const said = Number(/after adding (\d+)/.exec((await stopped.textContent()) ?? '')?.[1]);
  expect(said).toBeLessThan(count);
  await expect(page.getByRole('status', { name: 'Status' })).toHaveText(
    new RegExp(`^${String(said)} items? · vault`),
  );
  const listed = await rows.count();
  for (let index = 0; index < listed; index++) {
    await expect(rows.nth(index).getByRole('gridcell').nth(1)).toHaveText(formatSize(size));
  }

  const report = await checkAllData(page);
  await expect(report.getByRole('status')).toContainText('No damage found.');
  await expect(report.getByRole('list')).toHaveCount(0);
});

test('while an add runs, a new folder, a rename and a move are made at once, and the add still ends whole', async ({
  coffer,
}) => {
  const upload = await uploadThrottle(coffer);
  const { page } = coffer;
  await createVault(coffer);
  // Small files first: the add holds them for one pack while the large ones go in one by one, each listed once it
  // is in the vault; the small ones are not listed (nor found, nor restorable) before their pack is.
  const notes = Array.from({ length: 200 }, (_, index) => ({
    name: `note-${String(index).padStart(3, '0')}.txt`,
    bytes: Buffer.from(`note ${String(index)}`),
  }));
  const parts = Array.from({ length: 32 }, (_, index) => ({
    name: `part-${String(index).padStart(2, '0')}.bin`,
    size: 4_000_000,
  }));
  // The dropped bytes reach the back end at 8 MB/s until the changes are made: the add lasts the while.
  await upload(8_000_000);
  await dropFiles(page, [...notes, ...parts]);
  const job = page.getByRole('listitem', { name: 'Add job' });
  await expect(row(page, 'part-00.bin')).toBeVisible();
  await expect(row(page, 'note-000.txt')).toHaveCount(0);

  await newFolder(page, 'Sorted');
  await row(page, 'part-00.bin').click({ button: 'right' });
  await page.getByRole('menuitem', { name: 'Rename' }).click();
  // The field takes the keyboard a frame after the menu goes; keys typed before would be lost.
  await expect(page.getByLabel('New name for part-00.bin')).toBeFocused();
  await page.keyboard.type('first');
  await page.keyboard.press('Enter');
  await expect(row(page, 'first.bin')).toBeVisible();
  await moveWithDialog(page, 'first.bin', 'Sorted');
  // All of that while the add still ran: none of it waited for the add, nor was refused.
  await expect(job.getByRole('status')).toContainText('Adding');
  await expect(page.getByRole('alert')).toHaveCount(0);
  await upload(-1);

  const count = notes.length + parts.length;
  await expect(page.getByText(`Added ${String(count)} files.`)).toBeVisible({ timeout: 60_000 });
  // The moved file out, the new folder in: as many items as were dropped.
  await expect(page.getByRole('status', { name: 'Status' })).toHaveText(
    new RegExp(`^${String(count)} items · vault`),
  );
  await expect(row(page, 'note-000.txt')).toBeVisible();
  await row(page, 'Sorted').dblclick();
  await expect(row(page, 'first.bin')).toBeVisible();
  const report = await checkAllData(page);
  await expect(report.getByRole('status')).toContainText('No damage found.');
});

test('a lock during an add stops it, and the unlock screen says so without naming a file', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  await dropZeroFiles(page, 48, 8_000_000);
  const job = page.getByRole('listitem', { name: 'Add job' });
  await expect(job.getByRole('status')).toContainText(/Adding · \d+ of 48 files · [1-9][\d.]* (kB|MB)/);

  await page.getByRole('button', { name: 'Lock' }).click();
  const notice = page.getByRole('status').filter({ hasText: 'Locking stopped' });
  await expect(notice).toHaveText(
    'Locking stopped an add before it finished. Files the add had finished are in the vault and nothing ' +
      'half-added is: add the rest again.',
  );
  expect(await page.content()).not.toContain('.bin');

  await page.getByLabel('Passphrase', { exact: true }).fill(PASSPHRASE);
  await page.getByRole('button', { name: 'Unlock' }).click();
  // The browser, empty or not: the lock may have come before the add's first file was in.
  await expect(page.getByRole('region', { name: 'Vault contents' })).toBeVisible();
  await page.keyboard.press('Control+L');
  await expect(page.getByRole('button', { name: 'Unlock' })).toBeVisible();
  // A lock that stopped nothing says nothing of jobs.
  await expect(page.getByText('Locking stopped')).toHaveCount(0);
});

test('a lock stops a delete still waiting for an add, and the unlock screen says nothing was deleted', async ({
  coffer,
}) => {
  const upload = await uploadThrottle(coffer);
  const { page } = coffer;
  await createVault(coffer);
  await newFolder(page, 'Old stuff');
  await upload(2_000_000);
  await dropZeroFiles(page, 8, 4_000_000);
  const job = page.getByRole('listitem', { name: 'Add job' });
  await expect(job.getByRole('status')).toContainText('Adding');

  await row(page, 'Old stuff').click();
  await page.keyboard.press('Delete');
  await page.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click();
  await expect(page.getByText('Deleting “Old stuff” · waiting for another job')).toBeVisible();
  await page.keyboard.press('Control+L');
  await expect(page.getByRole('status').filter({ hasText: 'Locking stopped' })).toHaveText(
    'Locking stopped an add and a delete before they finished. Files the add had finished are in the vault and ' +
      'nothing half-added is: add the rest again. Nothing was deleted: the delete had not begun. Delete again ' +
      'what you still want gone.',
  );
  expect(await page.content()).not.toContain('Old stuff');
  await upload(-1);

  await page.getByLabel('Passphrase', { exact: true }).fill(PASSPHRASE);
  await page.getByRole('button', { name: 'Unlock' }).click();
  await expect(row(page, 'Old stuff')).toBeVisible();
});

test('Vault details say a check waits while an add runs, then report it', async ({ coffer }) => {
  test.skip(
    coffer.preview === undefined,
    'The test holds the dropped bytes back; in Electron they cross by IPC',
  );
  const { page } = coffer;
  const release = await holdDroppedBytes(page);
  await createVault(coffer);
  await dropZeroFiles(page, 4, 2_000_000);
  await expect(page.getByRole('listitem', { name: 'Add job' }).getByRole('status')).toContainText('Adding');

  await page.getByRole('button', { name: 'Vault details' }).click();
  const details = page.getByRole('dialog', { name: 'Vault details' });
  await details.getByRole('button', { name: 'Check all data' }).click();
  await expect(
    details.getByText(
      'The check waits until other work on this vault ends: a job in the jobs panel, a preview, or a file being opened in another app.',
    ),
  ).toBeVisible();
  release();
  await expect(details.getByRole('region', { name: 'Check report' }).getByRole('status')).toHaveText(
    `No damage found. Checked 4 files (${formatSize(8_000_000)}).`,
  );
});

test('flow 8: previews an image and a text file; locking leaves no name, preview or object URL behind', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  await dropFiles(page, [
    { name: 'pixel.png', bytes: PIXEL_PNG },
    { name: 'notes.txt', bytes: Buffer.from('Meeting notes: the garden plan.\nSecond line.\n') },
  ]);
  await expect(page.getByText('Added 2 files.')).toBeVisible();

  await page.getByRole('row', { name: /notes\.txt/ }).click();
  await page.getByRole('button', { name: 'Preview' }).click();
  const textPreview = page.getByRole('dialog', { name: 'Preview of notes.txt' });
  await expect(textPreview.getByText('Meeting notes: the garden plan.')).toBeVisible();
  await textPreview.getByRole('button', { name: 'Close' }).click();
  await expect(textPreview).toHaveCount(0);

  await page.getByRole('row', { name: /pixel\.png/ }).click();
  await page.getByRole('button', { name: 'Preview' }).click();
  const image = page.getByRole('img', { name: 'pixel.png' });
  await expect(image).toBeVisible();
  await expect.poll(() => image.evaluate((element: HTMLImageElement) => element.naturalWidth)).toBe(1);
  const url = (await image.getAttribute('src')) ?? '';
  expect(url).toMatch(/^blob:/);
  expect(await loadsAsImage(page, url)).toBe(true);

  // Ctrl+L from inside the open preview.
  await page.keyboard.press('Control+L');
  await expect(page.getByRole('button', { name: 'Unlock' })).toBeVisible();
  const html = await page.content();
  for (const decrypted of ['pixel.png', 'notes.txt', 'Meeting notes', 'blob:'])
    expect(html).not.toContain(decrypted);
  expect(await loadsAsImage(page, url)).toBe(false);
});

test('flow 9: locks by itself after the idle time set in Settings', async ({ coffer }) => {
  test.setTimeout(120_000);
  const { page } = coffer;
  await createVault(coffer);
  await dropFiles(page, [{ name: 'diary.txt', bytes: Buffer.from('dear diary') }]);
  await expect(page.getByRole('row', { name: /diary\.txt/ })).toBeVisible();

  await page.getByRole('button', { name: 'Settings' }).click();
  const settings = page.getByRole('dialog', { name: 'Settings' });
  // Three seconds; the window offers any number of minutes, fractions too.
  await settings.getByLabel('Lock after this many idle minutes').fill('0.05');
  await settings.getByLabel('Lock after this many idle minutes').press('Enter');
  await settings.getByRole('button', { name: 'Close' }).click();

  // The back end locks on its own (it checks every 15 s) and says so; the window follows.
  await expect(page.getByRole('button', { name: 'Unlock' })).toBeVisible({ timeout: 60_000 });
  expect(await page.content()).not.toContain('diary.txt');
});

test('flow 10: a damaged file is reported by restore, which restores the rest, and listed by the check', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  const big = randomBytes(2_500_000);
  const small = randomBytes(5_000);
  await dropFiles(page, [
    { name: 'big.bin', bytes: big },
    { name: 'small.bin', bytes: small },
  ]);
  await expect(page.getByText('Added 2 files.')).toBeVisible();

  // Files over 1 MiB get a blob file of their own (FORMAT.md): flip bytes in the middle of the only one.
  const blobs = join(coffer.vaultParent, 'Personal', 'blobs');
  const blobFiles = (await readdir(blobs, { recursive: true, withFileTypes: true })).filter((entry) =>
    entry.isFile(),
  );
  expect(blobFiles).toHaveLength(1);
  const blobPath = join(blobFiles[0]?.parentPath ?? '', blobFiles[0]?.name ?? '');
  const stored = await readFile(blobPath);
  const middle = Math.floor(stored.length / 2);
  for (let index = middle; index < middle + 16; index++) stored[index] = (stored[index] ?? 0) ^ 0xff;
  await writeFile(blobPath, stored);

  await page.getByRole('row', { name: /big\.bin/ }).click();
  await page.getByRole('row', { name: /small\.bin/ }).click({ modifiers: ['ControlOrMeta'] });
  await coffer.answerFolderDialogs([coffer.restoreDir]);
  await page.getByRole('button', { name: 'Restore to…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Restore' }).click();
  const job = page.getByRole('listitem', { name: 'Restore job' });
  await expect(job.getByRole('status')).toHaveText('Restored 1 file. 1 problem:');
  await expect(job.getByRole('list', { name: 'Restore job problems' })).toContainText('/big.bin');
  expect(sha256(await readFile(join(coffer.restoreDir, 'small.bin')))).toBe(sha256(small));
  expect(await readdir(coffer.restoreDir)).toEqual(['small.bin']);

  const report = await checkAllData(page);
  await expect(report.getByRole('status')).toContainText('Damage found: 1 problem.');
  await expect(report.getByRole('list', { name: 'Damaged' })).toContainText('/big.bin');
});

test('settings: the theme and reduced motion apply to the window at once and after a reload', async ({
  coffer,
}) => {
  const { page } = coffer;
  await page.emulateMedia({ colorScheme: 'light' });
  await createVault(coffer);
  const html = page.locator('html');
  const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const lightBackground = await background();

  await page.getByRole('button', { name: 'Settings' }).click();
  const settings = page.getByRole('dialog', { name: 'Settings' });
  await settings.getByLabel('Theme').selectOption('dark');
  await expect(html).toHaveAttribute('data-theme', 'dark');
  await expect.poll(background).not.toBe(lightBackground);
  await settings.getByLabel('Reduce motion').check();
  await expect(html).toHaveAttribute('data-reduce-motion', 'true');

  await page.reload();
  await expect(html).toHaveAttribute('data-theme', 'dark');
  await expect(html).toHaveAttribute('data-reduce-motion', 'true');
  await expect.poll(background).not.toBe(lightBackground);
});
