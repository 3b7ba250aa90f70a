/**
 * PDF previews: pdf.js draws the pages from the decrypted bytes in memory, in a worker of the app's own under the
 * window's CSP, fetching nothing; a PDF it cannot open says why in words; closing or locking leaves no page,
 * document or worker behind.
 */
import type { Page } from '@playwright/test';

import { dropFiles } from './drop.js';
import { expect, test } from './fixtures.js';
import { inkPixels, pdfBytes, textLine } from './pdf.js';
import { createVault, row } from './steps.js';

const GARDEN_PLAN = pdfBytes([
  [
    textLine(72, 700, 'Garden plan', { font: 'F2', size: 28 }),
    textLine(72, 660, 'Beds along the south fence; herbs by the kitchen door.'),
    '0.2 0.4 0.3 rg 72 420 468 200 re f',
  ].join('\n'),
  textLine(72, 700, 'Page two: what to plant in spring.'),
]);

async function openPreview(page: Page, name: string) {
  await row(page, name).click();
  await page.getByRole('button', { name: 'Preview' }).click();
  return page.getByRole('dialog', { name: `Preview of ${name}` });
}

test('draws each page of a PDF from memory under the CSP, and locking leaves no page, document or worker', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  await dropFiles(page, [{ name: 'Garden plan.pdf', bytes: GARDEN_PLAN }]);
  await expect(page.getByText('Added 1 file.')).toBeVisible();
  expect(page.workers()).toHaveLength(0);

  const outsideRequests: string[] = [];
  const violations: string[] = [];
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (
      url.origin !== new URL(page.url()).origin ||
      /cmaps|standard_fonts|wasm|\.bcmap|\.pfb/.test(url.pathname)
    )
      outsideRequests.push(request.url());
  });
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
  const preview = await openPreview(page, 'Garden plan.pdf');
  await expect(preview.getByText('2 pages', { exact: true })).toBeVisible();
  const pages = preview.getByRole('img', { name: /^Page \d of 2$/ });
  await expect(pages).toHaveCount(2);
  // A page is drawn once it comes near the visible part of the scroll area.
  for (const canvas of [pages.nth(0), pages.nth(1)]) {
    await canvas.scrollIntoViewIfNeeded();
    await expect.poll(() => inkPixels(canvas)).toBeGreaterThan(100);
  }
  // pdf.js parses in its own worker (a file of the app's), fetching neither fonts, CMaps nor decoders.
  expect(page.workers().map((worker) => new URL(worker.url()).pathname)).toEqual([
    expect.stringMatching(/^\/assets\/pdf\.worker\.min-[\w-]+\.mjs$/),
  ]);
  expect(outsideRequests).toEqual([]);
  expect(violations).toEqual([]);

  // Closing ends the document and its worker.
  await preview.getByRole('button', { name: 'Close' }).click();
  await expect(preview).toHaveCount(0);
  await expect.poll(() => page.workers().length).toBe(0);

  // Ctrl+L from inside an open preview.
  await openPreview(page, 'Garden plan.pdf');
  await expect(pages).toHaveCount(2);
  await expect.poll(() => page.workers().length).toBe(1);
  await page.keyboard.press('Control+L');
  await expect(page.getByRole('button', { name: 'Unlock' })).toBeVisible();
  await expect(page.locator('canvas')).toHaveCount(0);
  await expect.poll(() => page.workers().length).toBe(0);
  expect(await page.content()).not.toContain('Garden plan');
});

test('a damaged or password-protected PDF says so in words, with what to do instead', async ({ coffer }) => {
  const { page } = coffer;
  await createVault(coffer);
  const truncated = GARDEN_PLAN.subarray(0, 200);
  await dropFiles(page, [
    { name: 'damaged.pdf', bytes: truncated },
    { name: 'locked.pdf', bytes: pdfBytes([textLine(72, 700, 'Secret')], { passwordProtected: true }) },
  ]);
  await expect(page.getByText('Added 2 files.')).toBeVisible();

  const damaged = await openPreview(page, 'damaged.pdf');
  await expect(damaged.getByRole('alert')).toHaveText(
    /^This PDF could not be read: it may be damaged, or not a PDF, .*(Open with default app|Restore it)/,
  );
  await expect(damaged.locator('canvas')).toHaveCount(0);
  await damaged.getByRole('button', { name: 'Close' }).click();
  await expect.poll(() => page.workers().length).toBe(0);

  const locked = await openPreview(page, 'locked.pdf');
  await expect(locked.getByRole('alert')).toHaveText(
    /^This PDF is protected by a password, which the preview cannot ask for\. .*(Open with default app|Restore it)/,
  );
  await expect(locked.locator('canvas')).toHaveCount(0);
});

test('a long PDF shows its first 50 pages, and says how many there are', async ({ coffer }) => {
  const { page } = coffer;
  await createVault(coffer);
  const pages = Array.from({ length: 51 }, (_, index) => textLine(72, 700, `Page ${index + 1}`));
  await dropFiles(page, [{ name: 'Minutes 2025.pdf', bytes: pdfBytes(pages) }]);
  await expect(page.getByText('Added 1 file.')).toBeVisible();

  const preview = await openPreview(page, 'Minutes 2025.pdf');
  await expect(preview.getByText(/^51 pages: the first 50 are shown here\. /)).toBeVisible();
  await expect(preview.getByRole('img', { name: /^Page \d+ of 51$/ })).toHaveCount(50);
  // Drawn only near the visible part: the last of them, scrolled to, is drawn then.
  const last = preview.getByRole('img', { name: 'Page 50 of 51' });
  expect(await inkPixels(last)).toBe(0);
  await last.scrollIntoViewIfNeeded();
  await expect.poll(() => inkPixels(last)).toBeGreaterThan(100);
});
