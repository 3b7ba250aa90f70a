/**
 * `npm run screenshots`: takes a screenshot of each screen of the app, in the light and the dark theme, into
 * docs/screenshots/. Drives the built renderer in Chromium against the preview server (test mode, throwaway data),
 * the same way the web tests do.
 */
import { once } from 'node:events';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium, type Locator } from '@playwright/test';

import { dropFiles, type DroppedFile } from '../e2e/drop.js';
import { inkPixels, pdfBytes, textLine } from '../e2e/pdf.js';
import { startPreview } from '../e2e/preview-process.js';
import { chromiumExecutable } from './find-chromium.js';

const OUT_DIR = join(import.meta.dirname, '..', 'docs', 'screenshots');
const PASSPHRASE = 'correct horse battery staple';
const NOTES = new TextEncoder().encode(
  '# Notes\n\n- Renew the passport before March.\n- Scan the house deeds into the vault.\n- Call the bank about the savings account.\n',
);

/** The ink of a scanned passport's data page (ICAO's specimen country, Utopia), on US Letter. */
function passportPage(): string {
  const grey = '0.40 0.45 0.52 rg';
  const dark = '0.10 0.12 0.15 rg';
  const field = (x: number, y: number, label: string, value: string) => [
    grey,
    textLine(x, y, label, { size: 7.5 }),
    dark,
    textLine(x, y - 13, value, { font: 'F2', size: 11 }),
  ];
  // A circle of radius r around (x, y) from four Bézier quarters (0.5523 r: their handles' length).
  const circle = (x: number, y: number, r: number) => {
    const k = 0.5523 * r;
    return (
      `${x + r} ${y} m ${x + r} ${y + k} ${x + k} ${y + r} ${x} ${y + r} c ` +
      `${x - k} ${y + r} ${x - r} ${y + k} ${x - r} ${y} c ${x - r} ${y - k} ${x - k} ${y - r} ${x} ${y - r} c ` +
      `${x + k} ${y - r} ${x + r} ${y - k} ${x + r} ${y} c f`
    );
  };
  return [
    '0.95 0.96 0.98 rg 96 492 420 248 re f',
    '0.70 0.75 0.80 RG 0.8 w 96 492 420 248 re S',
    '0.17 0.29 0.44 rg 96 708 420 32 re f',
    '1 1 1 rg',
    textLine(112, 719, 'PASSPORT', { font: 'F2', size: 13 }),
    textLine(428, 720, 'SPECIMEN', { size: 9 }),
    '0.83 0.87 0.91 rg 112 548 104 144 re f',
    '0.62 0.68 0.75 rg',
    circle(164, 640, 24),
    '126 548 m 126 584 142 604 164 604 c 186 604 202 584 202 548 c f',
    ...field(236, 680, 'Surname', 'SAMPLE'),
    ...field(396, 680, 'Passport no.', 'X0000000'),
    ...field(236, 644, 'Given names', 'ALEX JORDAN'),
    ...field(396, 644, 'Nationality', 'UTOPIAN'),
    ...field(236, 608, 'Date of birth', '01 JAN 1990'),
    ...field(396, 608, 'Date of expiry', '01 JAN 2035'),
    ...field(236, 572, 'Place of birth', 'NORTH BAY'),
    ...field(396, 572, 'Authority', 'HARBOUR TOWN'),
    dark,
    textLine(112, 522, 'P<UTOSAMPLE<<ALEX<JORDAN<<<<<<<<<<<<<<<<<<<<', { font: 'F3', size: 12 }),
    textLine(112, 505, 'X000000006UTO9001014F3501017<<<<<<<<<<<<<<06', { font: 'F3', size: 12 }),
    grey,
    textLine(96, 470, 'Scanned 12 March 2026 for the renewal.', { size: 9 }),
  ].join('\n');
}

const RENEWAL_CHECKLIST = [
  textLine(96, 700, 'Renewal checklist', { font: 'F2', size: 20 }),
  ...[
    'Two new photos, 35 x 45 mm',
    'Application form, filled in and signed',
    'The old passport (page 1 is its scan)',
    'Fee paid: the receipt is in Taxes',
  ].map((item, index) => textLine(96, 664 - index * 22, `-  ${item}`)),
].join('\n');

const FILES: readonly DroppedFile[] = [
  { name: 'Budget 2026.xlsx', size: 48_213 },
  { name: 'IMG_0412.jpg', size: 3_145_728 },
  { name: 'IMG_0413.jpg', size: 2_936_012 },
  // A real PDF for its preview, padded to the size the other screens have always shown.
  { name: 'Passport scan.pdf', bytes: pdfBytes([passportPage(), RENEWAL_CHECKLIST], { padTo: 812_544 }) },
];

/** Waits until pdf.js has drawn something into `canvas`. */
async function drawn(canvas: Locator): Promise<void> {
  for (const started = Date.now(); (await inkPixels(canvas)) === 0;) {
    if (Date.now() - started > 15_000) throw new Error('The PDF page was not drawn within 15 s.');
    await new Promise((wait) => setTimeout(wait, 100));
  }
}

async function shoot(scheme: 'light' | 'dark', executablePath: string | undefined): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'coffer-shots-'));
  const vaults = join(work, 'Documents');
  await mkdir(join(work, 'data'));
  await mkdir(vaults);
  const preview = await startPreview(join(work, 'data'));
  const browser = await chromium.launch(executablePath === undefined ? {} : { executablePath });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, colorScheme: scheme });
    // The create form is taller than the window: its picture is of the whole page.
    const save = (name: string, fullPage = false) =>
      page.screenshot({ path: join(OUT_DIR, `${name}-${scheme}.png`), fullPage });
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
    await page.getByText('Very strong').waitFor();
    await page.getByText(/^Unlocking will take about/).waitFor();
    await save('create', true);
    await page.getByRole('button', { name: 'Create vault' }).click();
    await page.getByText('This folder is empty.').waitFor();
    await save('browser-empty');

    await dropFiles(page, [...FILES, { name: 'notes.md', bytes: NOTES }]);
    await page.getByText(`Added ${FILES.length + 1} files.`).waitFor();
    await page.getByRole('button', { name: 'Dismiss add job' }).click();
    for (const folder of ['Photos', 'Taxes']) {
      await page.getByRole('button', { name: 'New folder' }).click();
      await page.getByLabel('New name for New folder').fill(folder);
      await page.keyboard.press('Enter');
      await page
        .getByRole('grid')
        .getByRole('row', { name: new RegExp(folder) })
        .waitFor();
    }
    await page.getByRole('row', { name: /IMG_0412/ }).click();
    await page.getByRole('row', { name: /IMG_0413/ }).click({ modifiers: ['Shift'] });
    await save('browser');
    // The window's smallest size (electron/main/window-options.ts): the toolbar's buttons show only their icons.
    await page.setViewportSize({ width: 720, height: 480 });
    await save('browser-narrow');
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.getByRole('row', { name: /IMG_0413/ }).click({ button: 'right' });
    await page.getByRole('menu').waitFor();
    await save('browser-menu');
    await page.getByRole('menuitem', { name: 'Delete…' }).click();
    await page.getByRole('alertdialog').waitFor();
    await save('browser-delete');
    await page.keyboard.press('Escape');

    // Dropping names the folder already holds: the one question asked before the add starts.
    await dropFiles(page, [
      { name: 'IMG_0412.jpg', size: 10 },
      { name: 'notes.md', bytes: NOTES },
    ]);
    await page.getByRole('alertdialog', { name: '2 names already exist' }).waitFor();
    await save('browser-existing');
    await page.keyboard.press('Escape');

    await page.getByRole('searchbox').fill('img');
    await page.getByRole('grid', { name: 'Search results' }).waitFor();
    await save('browser-search');
    await page.getByRole('searchbox').fill('');

    // Restoring the same file twice: the second job says it kept the file there, and what to do to replace it.
    const restored = join(work, 'Restored');
    await mkdir(restored);
    for (const done of ['Restored 1 file.', 'Restored 0 files; kept 1 file already there.']) {
      await page.getByRole('row', { name: /IMG_0412/ }).click();
      await preview.answerFolderDialogs([restored]);
      await page.getByRole('button', { name: 'Restore to…' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Restore', exact: true }).click();
      await page.getByText(done).waitFor();
    }
    await save('jobs');

    await page.getByRole('row', { name: /notes\.md/ }).click();
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByText('Renew the passport').waitFor();
    await save('preview');
    // The first "Open with default app" says what it leaves on disk; cancelled here, so nothing is written.
    await page.getByRole('button', { name: 'Open with default app' }).click();
    await page.getByRole('dialog', { name: 'Open a decrypted copy?' }).waitFor();
    await save('open-copy-notice');
    await page.keyboard.press('Escape');
    await page.getByRole('dialog', { name: 'Open a decrypted copy?' }).waitFor({ state: 'detached' });
    // Its Close button rather than Escape: the focus may still be on its way back into the preview.
    await page
      .getByRole('dialog', { name: 'Preview of notes.md' })
      .getByRole('button', { name: 'Close' })
      .click();

    await page.getByRole('row', { name: /Passport scan/ }).click();
    await page.getByRole('button', { name: 'Preview' }).click();
    await drawn(page.getByRole('img', { name: 'Page 1 of 2' }));
    await save('preview-pdf');
    await page.keyboard.press('Escape');
    await page.getByRole('dialog', { name: 'Preview of Passport scan.pdf' }).waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Vault details' }).click();
    await page.getByRole('button', { name: 'Check all data' }).click();
    await page.getByText('No damage found.').waitFor();
    await save('details');
    await page.keyboard.press('Escape');

    // The Security page: each tab, the change form, the recovery key as shown and as printed.
    await page.getByRole('button', { name: 'Security' }).click();
    await page.getByRole('row', { name: /Passphrase 1/ }).waitFor();
    await save('security-passphrases');
    await page.getByRole('button', { name: 'Change passphrase…' }).click();
    await page.getByLabel('Current passphrase').fill(PASSPHRASE);
    await page.getByLabel('New passphrase', { exact: true }).fill('lantern orchard');
    await page.getByText(/^(Weak|Fair|Strong|Very strong)$/).waitFor();
    await save('security-change', true);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('tab', { name: 'Recovery key' }).click();
    await page.getByRole('button', { name: 'Make a recovery key…' }).click();
    await page.getByLabel('Current passphrase').fill(PASSPHRASE);
    await page.getByRole('button', { name: 'Make recovery key' }).click();
    await page.getByRole('alertdialog', { name: 'Your new recovery key' }).waitFor();
    await save('security-recovery-key');
    await page.emulateMedia({ media: 'print' });
    await save('security-recovery-key-print');
    await page.emulateMedia({ media: 'screen' });
    await page.getByLabel('I have printed or written down this key').check();
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await page.getByText('This vault has a recovery key.').waitFor();
    await page.getByRole('tab', { name: 'Data key' }).click();
    await page.getByRole('button', { name: 'Rotate data key' }).click();
    await page.getByText(/^Data key rotated/).waitFor();
    await save('security-data-key');
    await page.getByRole('tab', { name: 'Activity log' }).click();
    await page.getByRole('region', { name: 'Activity log entries' }).getByRole('listitem').first().waitFor();
    await save('security-activity');
    await page.getByRole('button', { name: 'Close', exact: true }).click();

    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByLabel('Theme').waitFor();
    await save('settings');
    await page.keyboard.press('Escape');

    await page.getByRole('button', { name: 'Lock vault' }).click();
    await page.getByLabel('Passphrase').fill('wrong passphrase');
    await page.getByRole('button', { name: 'Unlock' }).click();
    await page.getByRole('alert').waitFor();
    await save('unlock');

    // Restoring a header backup from the Unlock screen (the vault's own header stands in for a saved backup).
    await preview.answerFileDialogs([[join(vaults, 'Personal', 'coffer.header')]]);
    await page.getByRole('button', { name: 'Restore a header backup…' }).click();
    const restore = page.getByRole('dialog', { name: 'Restore a header backup' });
    await restore.getByLabel('A passphrase of the backup').fill(PASSPHRASE);
    await save('unlock-header-import');
    await restore.getByRole('button', { name: 'Restore header' }).click();
    await page.getByRole('status').filter({ hasText: 'is restored' }).waitFor();
    await save('unlock-header-restored');

    await page.getByRole('button', { name: 'Choose another vault' }).click();
    await page.getByText('Recent vaults').waitFor();
    await save('start');
  } finally {
    await browser.close();
    // Stopping the server locks the vault, which writes into the work folder: removed once the server has exited.
    const exited = preview.child.exitCode === null ? once(preview.child, 'exit') : Promise.resolve();
    preview.stop();
    await exited;
    await rm(work, { recursive: true, force: true });
  }
}

await mkdir(OUT_DIR, { recursive: true });
const executablePath = chromiumExecutable();
for (const scheme of ['light', 'dark'] as const) await shoot(scheme, executablePath);
console.log(`screenshots written to ${OUT_DIR}`);
