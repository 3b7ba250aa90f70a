import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { formatSize } from '../src/renderer/format.js';
import { dropFiles } from './drop.js';
import { expect, test } from './fixtures.js';
import { createVault, row, sha256, sha256OfFile } from './steps.js';

test('dropping names that exist asks once per batch: keep both, skip, replace', async ({ coffer }) => {
  const { page } = coffer;
  await createVault(coffer);
  const original = randomBytes(1000);
  const second = randomBytes(2000);
  const skipped = randomBytes(3000);
  const replacement = randomBytes(4000);
  const clashDialog = page.getByRole('alertdialog', { name: '“report.pdf” already exists' });

  // Nothing taken: no question.
  await dropFiles(page, [{ name: 'report.pdf', bytes: original }]);
  await expect(row(page, 'report.pdf')).toBeVisible();

  await dropFiles(page, [
    { name: 'Report.PDF', bytes: second },
    { name: 'notes.txt', bytes: Buffer.from('new') },
  ]);
  await expect(clashDialog).toBeVisible();
  await expect(clashDialog.getByRole('listitem')).toHaveText(['/report.pdf']);
  await expect(clashDialog.getByRole('button', { name: 'Keep both' })).toBeFocused();
  await clashDialog.getByRole('button', { name: 'Keep both' }).click();
  await expect(page.getByText('Added 2 files.')).toBeVisible();
  await expect(row(page, 'Report (2).PDF')).toBeVisible();
  await expect(row(page, 'notes.txt')).toBeVisible();

  await dropFiles(page, [{ name: 'report.pdf', bytes: skipped }]);
  await clashDialog.getByRole('button', { name: 'Skip' }).click();
  await expect(page.getByText('Added 0 files; skipped 1 existing name.')).toBeVisible();
  await expect(row(page, 'report.pdf').getByRole('gridcell').nth(1)).toHaveText(formatSize(original.length));

  // Cancel adds nothing.
  await dropFiles(page, [{ name: 'report.pdf', bytes: skipped }]);
  await clashDialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(clashDialog).toBeHidden();

  await dropFiles(page, [{ name: 'report.pdf', bytes: replacement }]);
  await clashDialog.getByRole('button', { name: 'Replace' }).click();
  await expect(page.getByText('Added 1 file (1 replaced).')).toBeVisible();
  await expect(row(page, 'report.pdf').getByRole('gridcell').nth(1)).toHaveText(
    formatSize(replacement.length),
  );
  await expect(page.getByRole('grid').getByRole('row')).toHaveCount(4); // the header and three files

  await row(page, 'report.pdf').click();
  await row(page, 'Report (2).PDF').click({ modifiers: ['ControlOrMeta'] });
  await coffer.answerFolderDialogs([coffer.restoreDir]);
  await page.getByRole('button', { name: 'Restore to…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Restore' }).click();
  await expect(page.getByText('Restored 2 files.')).toBeVisible();
  expect(await sha256OfFile(join(coffer.restoreDir, 'report.pdf'))).toBe(sha256(replacement));
  expect(await sha256OfFile(join(coffer.restoreDir, 'Report (2).PDF'))).toBe(sha256(second));
});

test('a batch with many taken names shows the first few and how many more', async ({ coffer }) => {
  const { page } = coffer;
  await createVault(coffer);
  const names = Array.from({ length: 7 }, (_, i) => `photo-${i}.jpg`);
  await dropFiles(
    page,
    names.map((name) => ({ name, bytes: Buffer.from(name) })),
  );
  await expect(page.getByText('Added 7 files.')).toBeVisible();

  await dropFiles(
    page,
    names.map((name) => ({ name, bytes: Buffer.from('again') })),
  );
  const dialog = page.getByRole('alertdialog', { name: '7 names already exist' });
  await expect(dialog.getByRole('listitem')).toHaveText([
    ...names.slice(0, 5).map((name) => `/${name}`),
    'and 2 more',
  ]);
  await dialog.getByRole('button', { name: 'Skip' }).click();
  await expect(page.getByText('Added 0 files; skipped 7 existing names.')).toBeVisible();
});

test('a folder added onto a folder of the same name asks about the files inside, and merges', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  const source = await mkdtemp(join(tmpdir(), 'coffer-e2e-source-'));
  await mkdir(join(source, 'Docs'), { recursive: true });
  await writeFile(join(source, 'Docs', 'a.txt'), 'first a');
  await coffer.answerFolderDialogs([join(source, 'Docs')]);
  await page.getByRole('button', { name: 'Add folder…' }).click();
  await expect(row(page, 'Docs')).toBeVisible();

  await writeFile(join(source, 'Docs', 'a.txt'), 'second a');
  await writeFile(join(source, 'Docs', 'b.txt'), 'b');
  await coffer.answerFolderDialogs([join(source, 'Docs')]);
  await page.getByRole('button', { name: 'Add folder…' }).click();
  const dialog = page.getByRole('alertdialog', { name: '“a.txt” already exists' });
  await expect(dialog.getByRole('listitem')).toHaveText(['/Docs/a.txt']);
  await dialog.getByRole('button', { name: 'Keep both' }).click();
  await expect(page.getByText('Added 2 files.')).toBeVisible();
  await row(page, 'Docs').dblclick();
  await expect(row(page, 'a (2).txt')).toBeVisible();
  await expect(row(page, 'b.txt')).toBeVisible();
  await expect(row(page, 'a.txt')).toBeVisible();
  await rm(source, { recursive: true, force: true });
});
