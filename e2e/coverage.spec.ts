/**
 * Features that worked with no test to catch them breaking (an audit's list): drops onto a folder row, sorting by
 * date, range selection, "Add files…", the unlock's busy state, a job's speed, the text preview's cut, video,
 * Vault details and "Check vault", the create form's check of the repeated passphrase, the keyboard's context
 * menu and table keys, and the theme that follows the system (and a bug found on the way: a theme chosen in
 * Settings left some colours to the system's).
 */
import { randomBytes } from 'node:crypto';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { TEXT_PREVIEW_BYTES } from '../src/shared/preview-kind.js';
import { formatSize } from '../src/renderer/format.js';
import { dragFilesOver, dropFiles, filesTransfer } from './drop.js';
import { fileNames, makeVault } from './engine-vault.js';
import { expect, test } from './fixtures.js';
import {
  columnHeader,
  createVault,
  createVaultWith,
  dropZeroFiles,
  fillCreateForm,
  newFolder,
  openAndUnlock,
  PASSPHRASE,
  restoreSelection,
  row,
  sha256,
  sha256OfFile,
  shownNames,
} from './steps.js';

test('files dragged onto a folder row light it up and the drop zone, and are added into that folder', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  await newFolder(page, 'Inbox');
  const inbox = row(page, 'Inbox');
  const zone = page.getByTestId('drop-zone');
  const files = [
    { name: 'scan-1.pdf', bytes: Buffer.from('first page') },
    { name: 'scan-2.pdf', bytes: Buffer.from('second page') },
  ];

  const dataTransfer = await filesTransfer(page, files);
  await dragFilesOver(zone, dataTransfer);
  await expect(zone).toHaveClass(/\bdragging\b/);
  await expect(zone.getByText('Add to Personal')).toBeVisible();
  // Over the folder row, the row is the target; the folder shown does not claim the files.
  await dragFilesOver(inbox, dataTransfer);
  await expect(inbox).toHaveClass(/\bdrop-target\b/);
  await expect(zone.getByText('Add to Personal')).toBeHidden();
  // Dragged off again: no highlight stays.
  await inbox.dispatchEvent('dragleave', { dataTransfer });
  await zone.dispatchEvent('dragleave', { dataTransfer });
  await expect(inbox).not.toHaveClass(/\bdrop-target\b/);
  await expect(zone).not.toHaveClass(/\bdragging\b/);
  await expect(zone.getByText('Add to Personal')).toHaveCount(0);

  await dragFilesOver(inbox, dataTransfer);
  await expect(inbox).toHaveClass(/\bdrop-target\b/);
  await dropFiles(page, files, inbox);
  await expect(page.getByText('Added 2 files.')).toBeVisible();
  await expect(inbox).not.toHaveClass(/\bdrop-target\b/);
  // Into the folder dropped on, not the one shown.
  await expect(row(page, 'scan-1.pdf')).toHaveCount(0);
  expect(await shownNames(page)).toEqual(['Name', 'Inbox']);
  await inbox.dblclick();
  await expect(page.getByRole('navigation', { name: 'Folder path' })).toContainText('Inbox');
  await expect(row(page, 'scan-1.pdf')).toBeVisible();
  await expect(row(page, 'scan-2.pdf')).toBeVisible();
  // Listed anew from the vault, the folder shown at the drop still holds only the folder.
  await page
    .getByRole('navigation', { name: 'Folder path' })
    .getByRole('button', { name: 'Personal' })
    .click();
  await expect(row(page, 'Inbox')).toBeVisible();
  expect(await shownNames(page)).toEqual(['Name', 'Inbox']);
});

test('after files are dropped on a folder row, the drop zone is no longer highlighted', async ({
  coffer,
}) => {
  // A browser sends no dragleave after a drop, and the row's drop stops the event before the window's onDrop.
  const { page } = coffer;
  await createVault(coffer);
  await newFolder(page, 'Inbox');
  const files = [{ name: 'scan.pdf', size: 10 }];
  await dragFilesOver(row(page, 'Inbox'), await filesTransfer(page, files));
  await dropFiles(page, files, row(page, 'Inbox'));
  await expect(page.getByText('Added 1 file.')).toBeVisible();
  await expect(page.getByTestId('drop-zone')).not.toHaveClass(/\bdragging\b/, { timeout: 3_000 });
});

test('sorts by Modified: oldest first, then newest first', async ({ coffer }) => {
  const { page } = coffer;
  // Neither the names' nor the sizes' order is the dates' order.
  await createVaultWith(coffer, [
    { name: 'a-2025.txt', size: 300, lastModified: Date.UTC(2025, 5, 1, 12) },
    { name: 'b-2023.txt', size: 100, lastModified: Date.UTC(2023, 0, 15, 8) },
    { name: 'c-2026.txt', size: 200, lastModified: Date.UTC(2026, 2, 3, 18) },
    { name: 'd-2024.txt', size: 400, lastModified: Date.UTC(2024, 10, 20, 9) },
  ]);
  const modified = columnHeader(page, 'Modified');
  await expect(modified).toHaveAttribute('aria-sort', 'none');

  await modified.getByRole('button').click();
  await expect(modified).toHaveAttribute('aria-sort', 'ascending');
  await expect(columnHeader(page, 'Name')).toHaveAttribute('aria-sort', 'none');
  expect(await shownNames(page)).toEqual(['Name', 'b-2023.txt', 'd-2024.txt', 'a-2025.txt', 'c-2026.txt']);
  await modified.getByRole('button').click();
  await expect(modified).toHaveAttribute('aria-sort', 'descending');
  expect(await shownNames(page)).toEqual(['Name', 'c-2026.txt', 'a-2025.txt', 'd-2024.txt', 'b-2023.txt']);
});

test('Shift+click selects every row between the two clicked, and the status bar gives their size', async ({
  coffer,
}) => {
  const { page } = coffer;
  const sizes = [1000, 2000, 3000, 4000, 5000];
  await createVaultWith(
    coffer,
    sizes.map((size, index) => ({ name: `file-${index + 1}.bin`, size })),
  );

  await row(page, 'file-1.bin').click();
  await row(page, 'file-4.bin').click({ modifiers: ['Shift'] });
  for (const name of ['file-1.bin', 'file-2.bin', 'file-3.bin', 'file-4.bin'])
    await expect(row(page, name)).toHaveAttribute('aria-selected', 'true');
  await expect(row(page, 'file-5.bin')).toHaveAttribute('aria-selected', 'false');
  const status = page.getByRole('status', { name: 'Status' });
  await expect(status).toContainText(`5 items · 4 selected (${formatSize(1000 + 2000 + 3000 + 4000)})`);

  // From the same anchor, upwards too: the range is redrawn, not added to.
  await row(page, 'file-3.bin').click();
  await row(page, 'file-2.bin').click({ modifiers: ['Shift'] });
  await expect(status).toContainText(`2 selected (${formatSize(2000 + 3000)})`);
  await expect(row(page, 'file-1.bin')).toHaveAttribute('aria-selected', 'false');
  await expect(row(page, 'file-4.bin')).toHaveAttribute('aria-selected', 'false');
});

test('"Add files…" adds the files chosen in the dialog with their sizes; one restores with the same bytes', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  const photo = randomBytes(2_300_000);
  const picked = [
    { name: 'invoice.pdf', bytes: randomBytes(150_000) },
    { name: 'photo.jpg', bytes: photo },
    { name: 'readme.txt', bytes: Buffer.from('read me\n') },
  ];
  const paths = await Promise.all(
    picked.map(async ({ name, bytes }) => {
      const path = test.info().outputPath(name);
      await writeFile(path, bytes);
      return path;
    }),
  );

  await coffer.answerFileDialogs([paths]);
  await page.getByRole('button', { name: 'Add files…' }).click();
  await expect(page.getByText('Added 3 files.')).toBeVisible();
  for (const { name, bytes } of picked)
    await expect(row(page, name).getByRole('gridcell').nth(1)).toHaveText(formatSize(bytes.length));

  await row(page, 'photo.jpg').click();
  await restoreSelection(coffer);
  await expect(page.getByText('Restored 1 file.')).toBeVisible();
  expect(await sha256OfFile(join(coffer.restoreDir, 'photo.jpg'))).toBe(sha256(photo));
});

test('unlocking says it is busy while the key is derived, and the window keeps drawing meanwhile', async ({
  coffer,
}) => {
  // The slowest preset (1 GiB of Argon2id), so the derivation lasts long enough to be seen.
  test.setTimeout(120_000);
  const { page } = coffer;
  await createVault(coffer, 'Slow', { kdf: 'sensitive' });
  await page.getByRole('button', { name: 'Lock vault' }).click();
  const form = page.getByRole('form', { name: 'Slow' });
  await page.getByLabel('Passphrase').fill(PASSPHRASE);
  await expect(form).toHaveAttribute('aria-busy', 'false');

  await page.getByRole('button', { name: 'Unlock' }).click();
  await expect(form).toHaveAttribute('aria-busy', 'true');
  await expect(page.getByRole('button', { name: 'Unlocking…' })).toBeDisabled();
  await expect(form.getByRole('status')).toHaveText(
    'Deriving the key from the passphrase. This takes a moment by design.',
  );
  await expect(page.getByLabel('Passphrase')).toBeDisabled();
  // The derivation runs outside the page: frames are still drawn while it runs.
  expect(
    await page.evaluate(
      () =>
        new Promise<string | null>((drawn) => {
          requestAnimationFrame(() => {
            requestAnimationFrame(() => {
              drawn(document.querySelector('form')?.getAttribute('aria-busy') ?? null);
            });
          });
        }),
    ),
  ).toBe('true');

  await expect(page.getByText('This folder is empty.')).toBeVisible({ timeout: 60_000 });
});

test('a long add shows its speed and the time left while it runs', async ({ coffer }) => {
  const { page } = coffer;
  await createVault(coffer);
  // Hundreds of MB crossing from the page: seconds of work even on a fast machine.
  await dropZeroFiles(page, 48, 8_000_000);
  const job = page.getByRole('listitem', { name: 'Add job' });
  await expect(job.getByRole('status')).toContainText(
    /^Adding · \d+ of 48 files · [\d.]+ [kMG]?B of 384\.0 MB · [\d.]+ [kMG]?B\/s · (about )?\d+ (s|min|h)\b.* left$/,
  );
  await job.getByRole('button', { name: 'Cancel' }).click();
  await expect(job.getByRole('status')).toHaveText(/^Stopped (after adding|before any file was added)/);
});

test('a text file over 1 MiB previews its first MiB only, and says so', async ({ coffer }) => {
  const { page } = coffer;
  const line = 'The quick brown fox jumps over the lazy dog.\n';
  const head = Buffer.from(line.repeat(Math.ceil(TEXT_PREVIEW_BYTES / line.length))).subarray(
    0,
    TEXT_PREVIEW_BYTES,
  );
  await createVaultWith(coffer, [
    { name: 'long.log', bytes: Buffer.concat([head, Buffer.from('\nTAIL MARKER\n')]) },
    // Exactly 1 MiB: shown whole, with no note.
    { name: 'exact.log', bytes: head },
  ]);

  await row(page, 'long.log').click();
  await page.getByRole('button', { name: 'Preview' }).click();
  const preview = page.getByRole('dialog', { name: 'Preview of long.log' });
  await expect(preview.getByText('Only the first MiB is shown.')).toBeVisible();
  const text = preview.locator('pre');
  await expect(text).toContainText('The quick brown fox');
  const shown = (await text.textContent()) ?? '';
  expect(shown).not.toContain('TAIL MARKER');
  expect(sha256(Buffer.from(shown))).toBe(sha256(head));
  await preview.getByRole('button', { name: 'Close' }).click();

  await row(page, 'exact.log').click();
  await page.getByRole('button', { name: 'Preview' }).click();
  const exact = page.getByRole('dialog', { name: 'Preview of exact.log' });
  await expect(exact.locator('pre')).toContainText('The quick brown fox');
  expect((await exact.locator('pre').textContent())?.length).toBe(TEXT_PREVIEW_BYTES);
  await expect(exact.getByText('Only the first MiB is shown.')).toHaveCount(0);
});

test('previews a video: its decrypted frames reach the player', async ({ coffer }) => {
  const { page } = coffer;
  // A WebM of a few coloured 64×48 frames, recorded by the browser itself from a canvas.
  const webm = await page.evaluate(async () => {
    const canvas = document.createElement('canvas');
    canvas.width = 64;
    canvas.height = 48;
    const context = canvas.getContext('2d');
    if (context === null) throw new Error('no 2D canvas');
    const recorder = new MediaRecorder(canvas.captureStream(), { mimeType: 'video/webm' });
    const chunks: Blob[] = [];
    recorder.ondataavailable = (event) => {
      chunks.push(event.data);
    };
    const stopped = new Promise((resolve) => {
      recorder.onstop = resolve;
    });
    recorder.start();
    for (let frame = 0; frame < 15; frame++) {
      context.fillStyle = `hsl(${frame * 24} 80% 50%)`;
      context.fillRect(0, 0, canvas.width, canvas.height);
      await new Promise((drawn) => requestAnimationFrame(drawn));
    }
    recorder.stop();
    await stopped;
    return [...new Uint8Array(await new Blob(chunks).arrayBuffer())];
  });
  await createVaultWith(coffer, [{ name: 'clip.webm', bytes: Uint8Array.from(webm) }]);

  await row(page, 'clip.webm').click();
  await page.getByRole('button', { name: 'Preview' }).click();
  const preview = page.getByRole('dialog', { name: 'Preview of clip.webm' });
  const player = preview.locator('video');
  await expect(player).toHaveAttribute('src', /\/media\//);
  // HAVE_CURRENT_DATA: a frame is decoded, at the size it was recorded.
  await expect
    .poll(() => player.evaluate((video: HTMLVideoElement) => video.readyState))
    .toBeGreaterThanOrEqual(2);
  expect(await player.evaluate((video: HTMLVideoElement) => [video.videoWidth, video.videoHeight])).toEqual([
    64, 48,
  ]);
  await expect(preview.getByRole('alert')).toHaveCount(0);
});

test('Vault details give the counts, sizes, format version and key derivation; "Check vault" reports', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVaultWith(coffer, [
    { name: 'one.bin', size: 1_000 },
    { name: 'two.bin', size: 20_000 },
    { name: 'three.bin', size: 300_000 },
  ]);
  await newFolder(page, 'Letters');

  await page.getByRole('button', { name: 'Vault details' }).click();
  const details = page.getByRole('dialog', { name: 'Vault details' });
  const fact = (term: string) =>
    details
      .locator('dt')
      .filter({ hasText: new RegExp(`^${term}$`) })
      .locator('+ dd');
  await expect(fact('Name')).toHaveText('Personal');
  await expect(fact('Folder')).toHaveText(join(coffer.vaultParent, 'Personal'));
  await expect(fact('Files')).toHaveText('3');
  await expect(fact('Folders')).toHaveText('1');
  await expect(fact('Size of the files')).toHaveText(formatSize(321_000));
  // docs/FORMAT.md: "Coffer vault format, version 1.1", which a new vault is.
  await expect(fact('Format version')).toHaveText('1.1');
  // The preset chosen at creation (createVault's "Fast"): src/core/crypto/kdf.ts's interactive.
  await expect(fact('Key derivation')).toHaveText('Argon2id, 2 passes, 64 MiB memory');

  await details.getByRole('button', { name: 'Check vault' }).click();
  const report = details.getByRole('region', { name: 'Check report' });
  await expect(report.getByRole('status')).toHaveText(
    'No damage found. Checked the structure of 3 files (each one’s size and last chunk); “Check all data” reads every byte.',
  );
  await expect(report.getByRole('list')).toHaveCount(0);
});

test('create: passphrases that differ are pointed out, and no vault is made', async ({ coffer }) => {
  const { page } = coffer;
  await fillCreateForm(coffer, 'Personal', { repeat: `${PASSPHRASE}!` });
  await page.getByRole('button', { name: 'Create vault' }).click();
  await expect(page.getByRole('alert')).toHaveText('The two passphrases differ. Type them again.');
  await expect(page.getByRole('heading', { name: 'Create a vault' })).toBeVisible();
  expect(await readdir(coffer.vaultParent)).toEqual([]);

  // Typed again alike, the same form creates it.
  await page.getByLabel('Repeat passphrase').fill(PASSPHRASE);
  await page.getByRole('button', { name: 'Create vault' }).click();
  await expect(page.getByText('This folder is empty.')).toBeVisible();
  expect(await readdir(coffer.vaultParent)).toEqual(['Personal']);
});

test('Shift+F10 and the context-menu key open the menu of the focused row; Escape gives the focus back', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVaultWith(coffer, [
    { name: 'a.txt', size: 1 },
    { name: 'b.txt', size: 2 },
  ]);
  const grid = page.getByRole('grid', { name: 'Files' });
  const menu = page.getByRole('menu', { name: 'Actions' });

  await row(page, 'a.txt').click();
  await page.keyboard.press('ArrowDown');
  await expect(row(page, 'b.txt')).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('Shift+F10');
  await expect(menu).toBeVisible();
  // The menu of the row, not the folder's background's (which has no Rename).
  await expect(menu.getByRole('menuitem', { name: 'Rename' })).toBeEnabled();
  await expect(menu.getByRole('menuitem').and(page.locator(':focus'))).toHaveCount(1);
  await page.keyboard.press('Escape');
  await expect(menu).toHaveCount(0);
  await expect(grid).toBeFocused();

  await page.keyboard.press('ContextMenu');
  await expect(menu).toBeVisible();
  // The menu acts on the focused row.
  await menu.getByRole('menuitem', { name: 'Rename' }).click();
  await expect(page.getByLabel('New name for b.txt')).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(grid).toBeFocused();
});

test('table keys: Home, End, PageDown and PageUp move the selection; Ctrl moves the focus alone, Ctrl+Space toggles', async ({
  coffer,
}) => {
  const dir = join(coffer.vaultParent, 'Many');
  const names = fileNames(0, 60);
  await makeVault(dir, new Map([['/many', names]]));
  const { page } = coffer;
  await openAndUnlock(coffer, page, dir);
  await row(page, 'many').dblclick();
  await expect(row(page, 'file-000000.txt')).toBeVisible();
  const grid = page.getByRole('grid', { name: 'Files' });
  const status = page.getByRole('status', { name: 'Status' });
  await grid.focus();
  const selectedOnly = async (name: string): Promise<void> => {
    await expect(row(page, name)).toHaveAttribute('aria-selected', 'true');
    await expect(row(page, name)).toBeInViewport({ ratio: 1 });
    await expect(status).toContainText('60 items · 1 selected');
  };
  /** The name of the last row wholly inside the table's scrolled area. */
  const lastWhollyShown = () =>
    page.getByTestId('grid-body').evaluate((body) => {
      const area = body.getBoundingClientRect();
      const shown = [...body.querySelectorAll('[role=row]')]
        .map((shownRow) => ({ box: shownRow.getBoundingClientRect(), name: shownRow.textContent }))
        .filter(({ box }) => box.top >= area.top && box.bottom <= area.bottom)
        .sort((a, b) => a.box.top - b.box.top);
      return shown.at(-1)?.name ?? '';
    });

  await page.keyboard.press('End');
  await selectedOnly('file-000059.txt');
  await page.keyboard.press('Home');
  await selectedOnly('file-000000.txt');

  // A page down: to the last row in view, then a page further (scrolling); a page up and back.
  const pageEnd = await lastWhollyShown();
  const pageRows = names.findIndex((name) => pageEnd.startsWith(name));
  expect(pageRows).toBeGreaterThan(3);
  await page.keyboard.press('PageDown');
  await selectedOnly(names[pageRows] ?? '');
  await page.keyboard.press('PageDown');
  await selectedOnly(names[2 * pageRows] ?? '');
  await page.keyboard.press('PageUp');
  await selectedOnly(names[pageRows] ?? '');
  await page.keyboard.press('PageUp');
  await selectedOnly('file-000000.txt');

  // Ctrl+arrows move the focus and leave the selection; Ctrl+Space adds or takes away the focused row.
  await page.keyboard.press('Control+ArrowDown');
  await page.keyboard.press('Control+ArrowDown');
  await expect(grid).toHaveAttribute(
    'aria-activedescendant',
    (await row(page, 'file-000002.txt').getAttribute('id')) ?? '',
  );
  await expect(status).toContainText('1 selected');
  await page.keyboard.press('Control+Space');
  await expect(status).toContainText('2 selected');
  await expect(row(page, 'file-000000.txt')).toHaveAttribute('aria-selected', 'true');
  await expect(row(page, 'file-000002.txt')).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('Control+Space');
  await expect(status).toContainText('1 selected');
  await expect(row(page, 'file-000002.txt')).toHaveAttribute('aria-selected', 'false');
  // Space alone selects the focused row only.
  await page.keyboard.press('Space');
  await expect(row(page, 'file-000002.txt')).toHaveAttribute('aria-selected', 'true');
  await expect(row(page, 'file-000000.txt')).toHaveAttribute('aria-selected', 'false');
  await expect(status).toContainText('1 selected');
});

test('with the theme "Same as the system", the window follows the system between light and dark', async ({
  coffer,
}) => {
  const { page } = coffer;
  const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.emulateMedia({ colorScheme: 'light' });
  await expect(page.getByRole('button', { name: 'Create vault…' })).toBeVisible();
  const light = await background();
  await page.emulateMedia({ colorScheme: 'dark' });
  await expect.poll(background).not.toBe(light);
  const dark = await background();

  await createVault(coffer);
  await page.getByRole('button', { name: 'Settings' }).click();
  const settings = page.getByRole('dialog', { name: 'Settings' });
  await expect(settings.getByLabel('Theme')).toHaveValue('system');
  await page.emulateMedia({ colorScheme: 'light' });
  await expect.poll(background).toBe(light);

  // Forced dark, then back to the system's (light) again.
  await settings.getByLabel('Theme').selectOption('dark');
  await expect.poll(background).toBe(dark);
  await settings.getByLabel('Theme').selectOption('system');
  await expect.poll(background).toBe(light);
  await page.emulateMedia({ colorScheme: 'dark' });
  await expect.poll(background).toBe(dark);
});

test('a theme chosen in Settings also colours the strength meter and the warnings, whatever the system’s', async ({
  coffer,
}) => {
  const { page } = coffer;
  await page.emulateMedia({ colorScheme: 'dark' });
  await createVault(coffer);
  await page.getByRole('button', { name: 'Settings' }).click();
  const settings = page.getByRole('dialog', { name: 'Settings' });
  await settings.getByLabel('Theme').selectOption('light');
  await settings.getByRole('button', { name: 'Close' }).click();
  await page.getByRole('button', { name: 'Lock vault' }).click();
  await page.getByRole('button', { name: 'Choose another vault' }).click();
  await page.getByRole('button', { name: 'Create vault…' }).click();
  await page.getByLabel('Passphrase', { exact: true }).fill('grape tundra lantern copper whistle');
  await expect(page.getByText('Very strong')).toBeVisible();
  const colours = () =>
    Promise.all(
      [page.getByText('Very strong'), page.getByText('A lost passphrase cannot be recovered.')].map((shown) =>
        shown.evaluate((element) => {
          const box = element.closest('p') ?? element;
          return [getComputedStyle(element).color, getComputedStyle(box).backgroundColor];
        }),
      ),
    );
  const onDarkSystem = await colours();
  await page.emulateMedia({ colorScheme: 'light' });
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  expect(await colours()).toEqual(onDarkSystem);
});
