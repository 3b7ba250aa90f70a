/** The browser screen with the mouse: add a folder tree and restore it, organise, and restore onto a file. */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

import type { Page } from '@playwright/test';

import { dragFilesOver, dropFiles, filesTransfer } from './drop.js';
import { expect, test } from './fixtures.js';
import {
  columnHeader,
  createVault,
  moveWithDialog,
  newFolder,
  openAndUnlock,
  row,
  sha256,
  sha256OfFile,
  shownNames,
  wholeText,
} from './steps.js';

/**
 * Waits two of the page's frames, so what an event changed is drawn before a check that it did not: React renders
 * a drag event's state in a task of its own, which may run after the next frame.
 */
async function framesDrawn(page: Page): Promise<void> {
  await page.evaluate(
    () => new Promise((drawn) => requestAnimationFrame(() => requestAnimationFrame(drawn))),
  );
}

/** Every file below `root` → the SHA-256 of its bytes, by path relative to `root`. */
async function hashTree(root: string): Promise<Record<string, string>> {
  const hashes: Record<string, string> = {};
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    hashes[relative(root, path)] = await sha256OfFile(path);
  }
  return hashes;
}

test('flow 2: adds a folder tree through "Add folder…", browses it, and restores the same bytes', async ({
  coffer,
}) => {
  const { page } = coffer;
  const source = test.info().outputPath('Album');
  await mkdir(join(source, '2026', 'Summer'), { recursive: true });
  await writeFile(join(source, 'notes.md'), '# Trip\n');
  await writeFile(join(source, '2026', 'budget.csv'), 'a,b\n1,2\n');
  await writeFile(join(source, '2026', 'Summer', 'beach.raw'), Buffer.alloc(300_000, 7));
  const expected = await hashTree(source);
  await createVault(coffer);

  await coffer.answerFolderDialogs([source]);
  await page.getByRole('button', { name: 'Add folder…' }).click();
  await row(page, 'Album').dblclick();
  await expect(page.getByRole('navigation', { name: 'Folder path' })).toContainText('Album');
  await expect(row(page, 'notes.md')).toBeVisible();
  await row(page, '2026').dblclick();
  await expect(row(page, 'budget.csv')).toBeVisible();
  // The sidebar shows the tree down to the folder open here.
  const sidebar = page.getByRole('navigation', { name: 'Folders' });
  await sidebar.getByRole('row', { name: 'Summer' }).click();
  await expect(row(page, 'beach.raw')).toBeVisible();

  await page
    .getByRole('navigation', { name: 'Folder path' })
    .getByRole('button', { name: 'Personal' })
    .click();
  await row(page, 'Album').click();
  await coffer.answerFolderDialogs([coffer.restoreDir]);
  await page.getByRole('button', { name: 'Restore to…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Restore' }).click();
  // Polled until the job has written the tree (nothing there yet reads as empty).
  await expect.poll(() => hashTree(join(coffer.restoreDir, 'Album')).catch(() => ({}))).toEqual(expected);
});

test('flow 4: renames, moves by dragging onto a folder, deletes after a confirmation; all kept after a restart', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  const files = ['a.txt', 'b.txt', 'c.txt'].map((name) => ({ name, bytes: Buffer.from(`bytes of ${name}`) }));
  await dropFiles(page, files);
  await expect(row(page, 'c.txt')).toBeVisible();

  // New folder: created with a fresh name, edited in place.
  await newFolder(page, 'Archive');

  // Rename from the context menu.
  await row(page, 'b.txt').click({ button: 'right' });
  await page.getByRole('menuitem', { name: 'Rename' }).click();
  // The name is selected without its extension, as file managers do.
  await expect(page.getByLabel('New name for b.txt')).toBeFocused();
  await page.keyboard.type('renamed');
  await page.keyboard.press('Enter');
  await expect(row(page, 'renamed.txt')).toBeVisible();
  await expect(row(page, 'b.txt')).toHaveCount(0);

  // Move by dragging a row onto a folder row.
  await row(page, 'a.txt').dragTo(row(page, 'Archive'));
  await expect(row(page, 'a.txt')).toHaveCount(0);

  // Delete: the dialog names what goes; nothing goes until confirmed.
  await row(page, 'c.txt').click();
  await page.keyboard.press('Delete');
  const dialog = page.getByRole('alertdialog', { name: 'Delete “c.txt”?' });
  await expect(dialog).toContainText('/c.txt');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(row(page, 'c.txt')).toBeVisible();
  // The table takes the keyboard back a frame after the dialog goes.
  await expect(page.getByRole('grid', { name: 'Files' })).toBeFocused();
  await page.keyboard.press('Delete');
  await dialog.getByRole('button', { name: 'Delete' }).click();
  await expect(row(page, 'c.txt')).toHaveCount(0);

  const again = await coffer.restart();
  await openAndUnlock(coffer, again, join(coffer.vaultParent, 'Personal'));
  await expect(row(again, 'Archive')).toBeVisible();
  await expect(row(again, 'renamed.txt')).toBeVisible();
  for (const gone of ['a.txt', 'b.txt', 'c.txt']) await expect(row(again, gone)).toHaveCount(0);
  await row(again, 'Archive').dblclick();
  await expect(row(again, 'a.txt')).toBeVisible();

  // The moved file still holds its bytes.
  await row(again, 'a.txt').click();
  await coffer.answerFolderDialogs([coffer.restoreDir]);
  await again.getByRole('button', { name: 'Restore to…' }).click();
  await again.getByRole('dialog').getByRole('button', { name: 'Restore' }).click();
  await expect
    .poll(() => readFile(join(coffer.restoreDir, 'a.txt'), 'utf8').catch(() => null))
    .toBe('bytes of a.txt');
});

test('flow 6: restoring onto an existing file skips it or replaces it, as chosen', async ({ coffer }) => {
  const { page } = coffer;
  await createVault(coffer);
  const inVault = Buffer.from('the copy in the vault');
  const onDisk = Buffer.from('the file already on disk');
  const target = join(coffer.restoreDir, 'report.txt');
  await writeFile(target, onDisk);
  await dropFiles(page, [{ name: 'report.txt', bytes: inVault }]);

  const restore = async (choice: RegExp) => {
    await row(page, 'report.txt').click();
    await coffer.answerFolderDialogs([coffer.restoreDir]);
    await page.getByRole('button', { name: 'Restore to…' }).click();
    const dialog = page.getByRole('dialog', { name: /Restore/ });
    await expect(dialog).toContainText(coffer.restoreDir);
    await dialog.getByText(choice).click();
    await expect(dialog.getByRole('radio', { name: choice })).toBeChecked();
    await dialog.getByRole('button', { name: 'Restore' }).click();
  };

  await restore(/Skip it/);
  await expect(page.getByText('Restored 0 files; kept 1 file already there.')).toBeVisible();
  expect(sha256(await readFile(target))).toBe(sha256(onDisk));

  await restore(/Replace it/);
  await expect(page.getByText('Restored 1 file.')).toBeVisible();
  expect(sha256(await readFile(target))).toBe(sha256(inVault));
});

test('moves with the "Move to…" dialog and by dropping rows onto a breadcrumb', async ({ coffer }) => {
  const { page } = coffer;
  await createVault(coffer);
  await dropFiles(page, [{ name: 'letter.txt', bytes: Buffer.from('dear') }]);
  await expect(row(page, 'letter.txt')).toBeVisible();
  for (const name of ['Inbox', 'Kept']) await newFolder(page, name);

  await moveWithDialog(page, 'letter.txt', 'Inbox');

  // A folder is not offered as a destination inside itself.
  await row(page, 'Kept').click({ button: 'right' });
  await page.getByRole('menuitem', { name: 'Move to…' }).click();
  await expect(page.getByRole('dialog').getByRole('option', { name: 'Inbox' })).toBeVisible();
  await expect(page.getByRole('dialog').getByRole('option', { name: 'Kept' })).toHaveCount(0);
  await page.keyboard.press('Escape');

  await row(page, 'Inbox').dblclick();
  await expect(row(page, 'letter.txt')).toBeVisible();
  const breadcrumb = page.getByRole('navigation', { name: 'Folder path' });
  await row(page, 'letter.txt').dragTo(breadcrumb.getByRole('button', { name: 'Personal' }));
  await expect(row(page, 'letter.txt')).toHaveCount(0);
  await expect(page.getByText('This folder is empty.')).toBeVisible();
  await breadcrumb.getByRole('button', { name: 'Personal' }).click();
  await expect(row(page, 'letter.txt')).toBeVisible();
});

test('a dialog opened from the context menu gives the focus back to the table when it closes', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  await dropFiles(page, [
    { name: 'a.txt', size: 1 },
    { name: 'b.txt', size: 2 },
  ]);
  await expect(row(page, 'b.txt')).toBeVisible();
  await newFolder(page, 'Kept');
  const grid = page.getByRole('grid', { name: 'Files' });
  const fromMenu = async (name: string, item: string) => {
    await row(page, name).click({ button: 'right' });
    await page.getByRole('menu', { name: 'Actions' }).getByRole('menuitem', { name: item }).click();
  };

  await fromMenu('b.txt', 'Delete…');
  await page.keyboard.press('Escape');
  await expect(page.getByRole('alertdialog')).toHaveCount(0);
  await expect(grid).toBeFocused();

  await fromMenu('b.txt', 'Move to…');
  const move = page.getByRole('dialog', { name: 'Move “b.txt” to…' });
  await move.getByRole('option', { name: 'Kept' }).click();
  await move.getByRole('button', { name: 'Move here' }).click();
  await expect(row(page, 'b.txt')).toHaveCount(0);
  await expect(grid).toBeFocused();

  // The keyboard goes on in the table.
  await fromMenu('a.txt', 'Delete…');
  await page.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click();
  await expect(row(page, 'a.txt')).toHaveCount(0);
  await expect(grid).toBeFocused();
  await page.keyboard.press('Home');
  await expect(row(page, 'Kept')).toHaveAttribute('aria-selected', 'true');
});

test('sorts by each column, folders first, and shows the sizes of the selection and the vault', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  await dropFiles(page, [
    { name: 'b-middle.txt', size: 2000 },
    { name: 'a-large.txt', size: 5000 },
    { name: 'c-small.txt', size: 1000 },
  ]);
  await expect(row(page, 'c-small.txt')).toBeVisible();
  await newFolder(page, 'Zed');

  const names = () => shownNames(page);
  const header = (name: string) => columnHeader(page, name);
  await expect(header('Name')).toHaveAttribute('aria-sort', 'ascending');
  expect(await names()).toEqual(['Name', 'Zed', 'a-large.txt', 'b-middle.txt', 'c-small.txt']);
  await header('Size').getByRole('button').click();
  await expect(header('Size')).toHaveAttribute('aria-sort', 'ascending');
  expect(await names()).toEqual(['Name', 'Zed', 'c-small.txt', 'b-middle.txt', 'a-large.txt']);
  // Anywhere in the header sorts, not only its word (right-aligned in Size): here its far left.
  await header('Size').click({ position: { x: 12, y: 16 } });
  await expect(header('Size')).toHaveAttribute('aria-sort', 'descending');
  expect(await names()).toEqual(['Name', 'Zed', 'a-large.txt', 'b-middle.txt', 'c-small.txt']);
  await header('Name').getByRole('button').click();
  await header('Name').getByRole('button').click();
  await expect(header('Name')).toHaveAttribute('aria-sort', 'descending');
  expect(await names()).toEqual(['Name', 'Zed', 'c-small.txt', 'b-middle.txt', 'a-large.txt']);

  await row(page, 'c-small.txt').click();
  await row(page, 'a-large.txt').click({ modifiers: ['Control'] });
  const status = page.getByRole('status', { name: 'Status' });
  await expect(status).toContainText('4 items · 2 selected (6.0 kB) · vault 8.0 kB');
});

test('the toolbar fits the smallest window: every button shown with its name, the vault name and the search field whole', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer, 'Household papers');
  // electron/main/window-options.ts: minWidth 720, minHeight 480.
  for (const width of [1100, 720]) {
    await page.setViewportSize({ width, height: 480 });
    const toolbar = page.getByRole('banner');
    const buttons = toolbar.locator('.toolbar-actions button');
    expect(await buttons.count()).toBeGreaterThanOrEqual(9);
    for (const button of await buttons.all()) {
      await expect(button).toBeInViewport({ ratio: 1 });
      expect(await button.evaluate((element) => element.scrollWidth <= element.clientWidth)).toBe(true);
      // Icon-only or not, each button keeps a name a screen reader reads and a tooltip.
      await expect(button).toHaveAttribute('title', /\S/);
    }
    for (const name of ['Add files…', 'Add folder…', 'New folder', 'Preview', 'Restore to…', 'Lock vault']) {
      await expect(toolbar.getByRole('button', { name, exact: true })).toBeVisible();
    }
    const vaultCrumb = page
      .getByRole('navigation', { name: 'Folder path' })
      .getByRole('button', { name: 'Household papers' });
    // Never cut by the toolbar's edge: wholly inside it, whole where there is room, else ending in an ellipsis.
    await expect(vaultCrumb).toBeInViewport({ ratio: 1 });
    await expect(vaultCrumb).toHaveCSS('text-overflow', 'ellipsis');
    await expect(vaultCrumb).toHaveAttribute('title', 'Household papers');
    if (width >= 1100)
      expect(await vaultCrumb.evaluate((element) => element.scrollWidth <= element.clientWidth)).toBe(true);
    const search = page.getByRole('searchbox', { name: 'Search this vault' });
    await expect(search).toBeInViewport({ ratio: 1 });
    // The placeholder is not cut: the field is at least as wide as its text.
    expect(
      await search.evaluate((element) => {
        const input = element as HTMLInputElement;
        const canvas = document.createElement('canvas').getContext('2d');
        if (!canvas) return false;
        canvas.font = getComputedStyle(input).font;
        return canvas.measureText(input.placeholder).width <= input.clientWidth;
      }),
    ).toBe(true);
  }
});

test('in a very wide window, a file’s size and date stay beside its name', async ({ coffer }) => {
  const { page } = coffer;
  await createVault(coffer);
  await dropFiles(page, [{ name: 'notes.txt', bytes: Buffer.from('Buy bread and tulips.') }]);
  const cells = row(page, 'notes.txt').getByRole('gridcell');
  const left = async (index: number) => (await cells.nth(index).boundingBox())?.x ?? Infinity;
  // At the window's opening size the name takes the room the size and date leave.
  await page.setViewportSize({ width: 1280, height: 600 });
  expect((await left(1)) - (await left(0))).toBeGreaterThan(700);
  // Twice as wide, the size is no further from the name than the name's column is wide at most.
  await page.setViewportSize({ width: 2560, height: 600 });
  expect((await left(1)) - (await left(0))).toBeLessThanOrEqual(1100);
});

test("in the smallest window, a folder's path has a row of its own, keeps its separators and cuts a long name with an ellipsis; the search field its words", async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  // Narrowed from the window's opening size, as a person narrows it.
  await page.setViewportSize({ width: 720, height: 480 });
  const path = page.getByRole('navigation', { name: 'Folder path' });
  // At the vault's top folder the search field gives way first: the vault's short name is whole, not "Person…".
  const crumbs = await path.getByRole('button').all();
  expect(await Promise.all(crumbs.map(wholeText))).toEqual([true]);
  for (const name of ['Taxes', '2024']) {
    await newFolder(page, name);
    await row(page, name).dblclick();
    // Opened once its (empty) rows are shown: a new folder goes into the folder shown.
    await expect(page.getByText('This folder is empty.')).toBeVisible();
  }
  // The path has a row of its own above the search field, so three short names are whole.
  const search = page.getByRole('searchbox', { name: 'Search this vault' });
  expect((await path.boundingBox())?.y ?? Infinity).toBeLessThan((await search.boundingBox())?.y ?? 0);
  const cut = () =>
    path
      .getByRole('button')
      .evaluateAll((crumbs) =>
        crumbs.map((crumb) => [crumb.scrollWidth > crumb.clientWidth, getComputedStyle(crumb).display]),
      );
  expect(await cut()).toEqual([
    [false, 'block'],
    [false, 'block'],
    [false, 'block'],
  ]);
  // A name too long for the row is cut with the ellipsis, which only a block container draws (a flex one clips).
  const long = 'Receipts, invoices and statements of the whole year for the tax return';
  await newFolder(page, long);
  await row(page, long).dblclick();
  await expect(page.getByText('This folder is empty.')).toBeVisible();
  expect((await cut()).at(-1)).toEqual([true, 'block']);
  // The chevrons between the names keep their size however little room the names have.
  expect(await path.locator('svg').count()).toBe(3);
  for (const chevron of await path.locator('svg').all())
    expect((await chevron.boundingBox())?.width).toBeCloseTo(14, 0);
  // The search field keeps its placeholder whole inside its padding, beside the room Chromium keeps for its clear
  // button (an × of about 16 px that shows once something is typed).
  expect(
    await search.evaluate((input: HTMLInputElement) => {
      const style = getComputedStyle(input);
      const canvas = document.createElement('canvas').getContext('2d');
      if (!canvas) return false;
      canvas.font = style.font;
      const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      return canvas.measureText(input.placeholder).width + 16 <= room;
    }),
  ).toBe(true);
});

test('opens a file as a preview by double-click, Enter or the menu, and shows a search result in its folder', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  await newFolder(page, 'Letters');
  await row(page, 'Letters').dblclick();
  // A drop goes into the folder shown: Letters, once its rows are.
  await expect(page.getByText('This folder is empty.')).toBeVisible();
  await dropFiles(page, [{ name: 'note.txt', bytes: Buffer.from('Buy bread and tulips.') }]);
  const preview = page.getByRole('dialog', { name: 'Preview of note.txt' });

  await row(page, 'note.txt').dblclick();
  await expect(preview.getByText('Buy bread and tulips.')).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(preview).toHaveCount(0);

  await row(page, 'note.txt').click();
  await page.keyboard.press('Enter');
  await expect(preview.getByText('Buy bread and tulips.')).toBeVisible();
  await page.keyboard.press('Escape');

  await row(page, 'note.txt').click({ button: 'right' });
  await expect(page.getByRole('menuitem', { name: 'Show in folder' })).toHaveCount(0);
  await page.getByRole('menuitem', { name: 'Open', exact: true }).click();
  await expect(preview.getByText('Buy bread and tulips.')).toBeVisible();
  await page.keyboard.press('Escape');

  // From the whole vault's search: Enter previews the file; the menu shows it where it is.
  const path = page.getByRole('navigation', { name: 'Folder path' });
  await path.getByRole('button', { name: 'Personal' }).click();
  await page.getByRole('searchbox', { name: 'Search this vault' }).fill('note');
  const result = page.getByRole('grid', { name: 'Search results' }).getByRole('row', { name: /note\.txt/ });
  await result.click();
  await page.keyboard.press('Enter');
  await expect(preview.getByText('Buy bread and tulips.')).toBeVisible();
  await page.keyboard.press('Escape');
  await result.click({ button: 'right' });
  await page.getByRole('menuitem', { name: 'Show in folder' }).click();
  await expect(path).toContainText('Letters');
  await expect(row(page, 'note.txt')).toHaveAttribute('aria-selected', 'true');
});

test('takes files dropped anywhere in the window into the folder shown, and refuses them on a dialog or the Start screen', async ({
  coffer,
}) => {
  const { page } = coffer;
  const stray = () => filesTransfer(page, [{ name: 'stray.txt', size: 1 }]);

  // The page cancels the drag where nothing takes files: Chromium would otherwise open the file in its place.
  await expect(page.getByRole('button', { name: 'Create vault…' })).toBeVisible();
  const cancelled = await page
    .locator('#root > *')
    .first()
    .evaluate((element) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File(['x'], 'stray.txt'));
      const over = new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true });
      element.dispatchEvent(over);
      return over.defaultPrevented;
    });
  expect(cancelled).toBe(true);

  await createVault(coffer);
  await newFolder(page, 'Letters');
  await row(page, 'Letters').dblclick();
  const label = page.getByText('Add to Letters');
  await dragFilesOver(page.locator('header.toolbar'), await stray());
  await expect(label).toBeVisible();
  await dropFiles(
    page,
    [{ name: 'on-toolbar.txt', bytes: Buffer.from('dropped high') }],
    page.locator('header.toolbar'),
  );
  await expect(label).toHaveCount(0);
  await expect(row(page, 'on-toolbar.txt')).toBeVisible();
  await dropFiles(
    page,
    [{ name: 'on-status.txt', bytes: Buffer.from('dropped low') }],
    page.locator('footer.status-bar'),
  );
  await expect(row(page, 'on-status.txt')).toBeVisible();

  // Not onto a dialog in front of the window.
  await page.getByRole('button', { name: 'Settings' }).click();
  const settings = page.getByRole('dialog', { name: 'Settings' });
  await expect(settings).toBeVisible();
  await dragFilesOver(settings, await stray());
  await framesDrawn(page);
  await expect(label).toHaveCount(0);
  await dropFiles(page, [{ name: 'on-dialog.txt', bytes: Buffer.from('x') }], page.locator('[role=dialog]'));
  await page.keyboard.press('Escape');
  await expect(settings).toHaveCount(0);
  // A drop after it, which is added: had the one on the dialog started an add, it would have ended first.
  await dropFiles(page, [{ name: 'after-dialog.txt', bytes: Buffer.from('y') }]);
  await expect(row(page, 'after-dialog.txt')).toBeVisible();
  await expect(row(page, 'on-dialog.txt')).toHaveCount(0);
  await expect(page.getByRole('status', { name: 'Status' })).toContainText('3 items');

  // Onto a folder row: into that folder, and the window's "Add to …" goes when the row takes the drop.
  await page
    .getByRole('navigation', { name: 'Folder path' })
    .getByRole('button', { name: 'Personal' })
    .click();
  await dragFilesOver(row(page, 'Letters'), await stray());
  await dropFiles(page, [{ name: 'on-row.txt', bytes: Buffer.from('x') }], row(page, 'Letters'));
  await expect(page.getByText('Add to Personal')).toHaveCount(0);
  await row(page, 'Letters').dblclick();
  await expect(row(page, 'on-row.txt')).toBeVisible();
});

test('a folder dropped where the window gets no path for it is refused in words, and nothing of the drop is added', async ({
  coffer,
}) => {
  const { page } = coffer;
  test.skip(coffer.preview === undefined, 'Electron reads dropped folders by their path and adds them');
  await createVault(coffer);
  // What Chromium hands the page for a folder and a file dragged from the file manager: the folder is an item
  // whose entry is a directory (its File cannot be read). A synthetic drop has no entries, so they are stood in for.
  await page.evaluate(() => {
    const { prototype } = DataTransferItem;
    const entryOf = Object.getOwnPropertyDescriptor(prototype, 'webkitGetAsEntry')?.value as (
      this: DataTransferItem,
    ) => FileSystemEntry | null;
    prototype.webkitGetAsEntry = function (this: DataTransferItem) {
      return this.getAsFile()?.name === 'Album'
        ? ({ isDirectory: true, name: 'Album' } as FileSystemEntry)
        : entryOf.call(this);
    };
    const transfer = new DataTransfer();
    transfer.items.add(new File([], 'Album'));
    transfer.items.add(new File(['kept'], 'loose.txt'));
    document
      .querySelector('[data-testid=drop-zone]')
      ?.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
  });
  await expect(page.getByText('A dropped folder cannot be added in this window')).toBeVisible();
  await expect(page.getByText('Use “Add folder…”.')).toBeVisible();
  // A drop after it, which is added: had the refused one started an add, it would have ended first.
  await dropFiles(page, [{ name: 'after.txt', bytes: Buffer.from('later') }]);
  await expect(row(page, 'after.txt')).toBeVisible();
  await expect(page.getByRole('status', { name: 'Status' })).toContainText('1 item');
  await expect(row(page, 'loose.txt')).toHaveCount(0);
});
