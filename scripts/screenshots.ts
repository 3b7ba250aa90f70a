/**
 * `npm run screenshots`: takes a screenshot of each screen of the app, in the light and the dark theme, into
 * docs/screenshots/. Drives the built renderer in Chromium against the preview server (test mode, throwaway data),
 * the same way the web tests do.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium } from '@playwright/test';

import { dropFiles } from '../e2e/drop.js';
import { startPreview } from '../e2e/preview-process.js';
import { chromiumExecutable } from './find-chromium.js';

const OUT_DIR = join(import.meta.dirname, '..', 'docs', 'screenshots');
const PASSPHRASE = 'correct horse battery staple';
const FILES: readonly [string, number][] = [
  ['Budget 2026.xlsx', 48_213],
  ['IMG_0412.jpg', 3_145_728],
  ['IMG_0413.jpg', 2_936_012],
  ['notes.md', 1_204],
  ['Passport scan.pdf', 812_544],
];

async function shoot(scheme: 'light' | 'dark', executablePath: string | undefined): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'coffer-shots-'));
  const vaults = join(work, 'Documents');
  await mkdir(join(work, 'data'));
  await mkdir(vaults);
  const preview = await startPreview(join(work, 'data'));
  const browser = await chromium.launch(executablePath === undefined ? {} : { executablePath });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 700 }, colorScheme: scheme });
    const save = (name: string) => page.screenshot({ path: join(OUT_DIR, `${name}-${scheme}.png`) });
    await page.goto(preview.url);
    await page.getByRole('button', { name: 'Create vault…' }).waitFor();
    await save('start-empty');

    await page.getByRole('button', { name: 'Create vault…' }).click();
    await preview.answerFolderDialogs([vaults]);
    await page.getByRole('button', { name: 'Choose…' }).click();
    await page.getByLabel('Name').fill('Personal');
    await page.getByLabel('Passphrase', { exact: true }).fill(PASSPHRASE);
    await page.getByLabel('Repeat passphrase').fill(PASSPHRASE);
    await page.getByLabel('Key strength').selectOption('interactive');
    await save('create');
    await page.getByRole('button', { name: 'Create vault' }).click();
    await page.getByText('This folder is empty.').waitFor();
    await save('browser-empty');

    await dropFiles(
      page,
      FILES.map(([name, size]) => ({ name, size })),
    );
    await page.getByText(`Added ${FILES.length} files.`).waitFor();
    for (const folder of ['Photos', 'Taxes']) {
      await page.getByRole('button', { name: 'New folder' }).click();
      await page.getByLabel('New name for New folder').fill(folder);
      await page.keyboard.press('Enter');
      await page.getByRole('row', { name: new RegExp(folder) }).waitFor();
    }
    await page.getByRole('row', { name: /IMG_0412/ }).click();
    await page.getByRole('row', { name: /IMG_0413/ }).click({ modifiers: ['Shift'] });
    await save('browser');

    await page.getByRole('row', { name: /IMG_0413/ }).click({ button: 'right' });
    await page.getByRole('menu').waitFor();
    await save('browser-menu');
    await page.getByRole('menuitem', { name: 'Delete…' }).click();
    await page.getByRole('alertdialog').waitFor();
    await save('browser-delete');
    await page.keyboard.press('Escape');

    await page.getByRole('searchbox').fill('img');
    await page.getByRole('grid', { name: 'Search results' }).waitFor();
    await save('browser-search');
    await page.getByRole('searchbox').fill('');

    await page.getByRole('button', { name: 'Lock vault' }).click();
    await page.getByLabel('Passphrase').fill('wrong passphrase');
    await page.getByRole('button', { name: 'Unlock' }).click();
    await page.getByRole('alert').waitFor();
    await save('unlock');

    await page.getByRole('button', { name: 'Choose another vault' }).click();
    await page.getByText('Recent vaults').waitFor();
    await save('start');
  } finally {
    await browser.close();
    preview.stop();
    await rm(work, { recursive: true, force: true });
  }
}

await mkdir(OUT_DIR, { recursive: true });
const executablePath = chromiumExecutable();
for (const scheme of ['light', 'dark'] as const) await shoot(scheme, executablePath);
console.log(`screenshots written to ${OUT_DIR}`);
