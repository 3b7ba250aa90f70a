/**
 * Accessibility: axe-core (WCAG 2 A and AA rules) on every screen the window has, in the light and the dark theme.
 * No serious or critical violation may remain.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from '@playwright/test';

import { dropFiles, holdDroppedBytes } from './drop.js';
import { expect, test } from './fixtures.js';
import { inkPixels, pdfBytes, textLine } from './pdf.js';
import { createVault, PASSPHRASE } from './steps.js';

/** The serious and critical violations on the page as it is now, one line each (rule, impact, where). */
async function seriousViolations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa']).analyze();
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id} (${violation.impact ?? ''}): ${violation.help} — ${violation.nodes
          .map((node) => node.target.join(' '))
          .join(', ')}`,
    );
}

for (const colorScheme of ['light', 'dark'] as const) {
  test(`every screen in the ${colorScheme} theme has no serious or critical axe violation`, async ({
    coffer,
  }) => {
    // Some twenty screens, each with an axe run of its own.
    test.setTimeout(120_000);
    const { page } = coffer;
    await page.emulateMedia({ colorScheme });
    const found: Record<string, string[]> = {};
    const check = async (screen: string): Promise<void> => {
      found[screen] = await seriousViolations(page);
    };

    await expect(page.getByRole('button', { name: 'Create vault…' })).toBeVisible();
    await check('start (no recent vaults)');

    await page.getByRole('button', { name: 'Create vault…' }).click();
    await page.getByLabel('Passphrase', { exact: true }).fill('password');
    await expect(page.getByText('Very weak')).toBeVisible();
    await page.getByRole('button', { name: 'Create vault', exact: true }).click();
    await expect(page.getByRole('alert')).toBeVisible();
    await check('create (strength meter, an error)');
    await page.getByRole('button', { name: 'Cancel' }).click();

    await createVault(coffer);
    await check('browser (empty folder)');
    await dropFiles(page, [
      { name: 'notes.md', size: 1_204 },
      { name: 'photo.jpg', size: 300_000 },
    ]);
    await expect(page.getByText('Added 2 files.')).toBeVisible();
    await page.getByRole('row', { name: /notes\.md/ }).click();
    await check('browser (files, one selected, a finished job)');

    await page.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByRole('dialog', { name: 'Preview of notes.md' });
    await expect(preview.locator('pre')).toBeVisible();
    await check('preview (a text file)');
    await preview.getByRole('button', { name: 'Close' }).click();

    await page.getByRole('row', { name: /notes\.md/ }).click({ button: 'right' });
    await expect(page.getByRole('menu', { name: 'Actions' })).toBeVisible();
    await check('context menu');
    await page.getByRole('menuitem', { name: 'Move to…' }).click();
    await expect(page.getByRole('dialog', { name: 'Move “notes.md” to…' })).toBeVisible();
    await check('move (the dialog)');
    await page.keyboard.press('Escape');
    await expect(page.getByRole('dialog')).toHaveCount(0);

    await coffer.answerFolderDialogs([coffer.restoreDir]);
    await page.getByRole('button', { name: 'Restore to…' }).click();
    await expect(page.getByRole('dialog', { name: /Restore/ })).toBeVisible();
    await check('restore (the dialog)');
    await page.keyboard.press('Escape');
    await expect(page.getByRole('dialog')).toHaveCount(0);

    await page.getByRole('row', { name: /notes\.md/ }).click();
    await page.keyboard.press('Delete');
    await expect(page.getByRole('alertdialog', { name: 'Delete “notes.md”?' })).toBeVisible();
    await check('delete (the confirmation)');
    await page.keyboard.press('Escape');
    await expect(page.getByRole('alertdialog')).toHaveCount(0);

    const search = page.getByRole('searchbox', { name: 'Search this vault' });
    await search.fill('photo');
    await expect(page.getByRole('grid', { name: 'Search results' }).getByRole('row')).toHaveCount(2);
    await check('search (results)');
    await search.fill('nothing like it');
    await expect(page.getByText('No names match “nothing like it”.')).toBeVisible();
    await check('search (no results)');
    await search.fill('');

    await page.getByRole('button', { name: 'Settings' }).click();
    await expect(page.getByRole('dialog', { name: 'Settings' })).toBeVisible();
    await check('settings');
    await page.getByRole('dialog', { name: 'Settings' }).getByRole('button', { name: 'Close' }).click();

    await page.getByRole('button', { name: 'Vault details' }).click();
    const details = page.getByRole('dialog', { name: 'Vault details' });
    await details.getByRole('button', { name: 'Check vault' }).click();
    await expect(details.getByRole('region', { name: 'Check report' })).toBeVisible();
    await check('vault details (a check report)');
    await details.getByRole('button', { name: 'Close' }).click();

    // A job held running: the drop's bytes, their own request to the preview server, wait until the check is done.
    // The web host only: in Electron they cross by IPC, which a test cannot hold.
    if (coffer.preview) {
      const release = await holdDroppedBytes(page);
      await dropFiles(page, [{ name: 'held.bin', size: 1_000_000 }]);
      // The newest, below the finished one.
      const job = page.getByRole('listitem', { name: 'Add job' }).last();
      await expect(job.getByRole('status')).toContainText('Adding');
      await check('jobs panel (a running add)');
      // Cancelled, it stops at once, though its bytes have not come.
      await job.getByRole('button', { name: 'Cancel' }).click();
      release();
      await expect(job.getByRole('status')).toHaveText(
        'Stopped before any file was added; nothing half-added is in the vault.',
      );
      await page.unroute('**/api/drop/*');
    }

    // The one-time notice before the first "Open with default app"; cancelled, so it is still the first next time.
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('button', { name: 'Open with default app' }).click();
    const notice = page.getByRole('dialog', { name: 'Open a decrypted copy?' });
    await expect(notice).toBeVisible();
    await check('open a copy (the one-time notice)');
    await page.keyboard.press('Escape');
    await expect(notice).toBeHidden();
    // Focus goes back into the preview a moment after the notice has gone; an Escape before that reaches no dialog.
    await expect(page.getByRole('dialog').locator(':focus')).toHaveCount(1);
    await page.keyboard.press('Escape');
    await expect(page.getByRole('dialog')).toHaveCount(0);

    // A PDF's pages, and the words for one that cannot be read.
    await dropFiles(page, [
      { name: 'plan.pdf', bytes: pdfBytes([textLine(72, 700, 'Plan'), textLine(72, 700, 'Page two')]) },
      { name: 'damaged.pdf', bytes: Buffer.from('%PDF-1.4\nnot the rest of a PDF\n') },
    ]);
    await expect(page.getByRole('row', { name: /damaged\.pdf/ })).toBeVisible();
    await page.getByRole('row', { name: /plan\.pdf/ }).click();
    await page.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => inkPixels(page.getByRole('img', { name: 'Page 1 of 2' }))).toBeGreaterThan(0);
    await check('preview (a PDF)');
    await page.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('row', { name: /damaged\.pdf/ }).click();
    await page.getByRole('button', { name: 'Preview' }).click();
    await expect(page.getByRole('dialog').getByRole('alert')).toBeVisible();
    await check('preview (a PDF that cannot be read)');
    await page.getByRole('button', { name: 'Close' }).click();

    await dropFiles(page, [{ name: 'notes.md', size: 10 }]);
    await expect(page.getByRole('alertdialog', { name: '“notes.md” already exists' })).toBeVisible();
    await check('add (a name that already exists)');
    await page.keyboard.press('Escape');

    // The Security page: its tabs, the change form with its strength meter, the recovery key's sheet.
    await page.getByRole('button', { name: 'Security' }).click();
    await expect(page.getByRole('row', { name: /Passphrase 1/u })).toBeVisible();
    await check('security (passphrases)');
    await page.getByRole('button', { name: 'Change passphrase…' }).click();
    await page.getByLabel('New passphrase', { exact: true }).fill('password');
    await expect(page.getByText('Very weak')).toBeVisible();
    await check('security (change passphrase)');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('tab', { name: 'Recovery key' }).click();
    await page.getByRole('button', { name: 'Make a recovery key…' }).click();
    await page.getByLabel('Current passphrase').fill(PASSPHRASE);
    await page.getByRole('button', { name: 'Make recovery key' }).click();
    await expect(page.getByRole('alertdialog', { name: 'Your new recovery key' })).toBeVisible();
    await check('security (recovery key shown)');
    await page.getByLabel('I have printed or written down this key').check();
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await page.getByRole('tab', { name: 'Data key' }).click();
    await expect(page.getByRole('button', { name: 'Rotate and re-encrypt' })).toBeVisible();
    await check('security (data key)');
    await page.getByRole('tab', { name: 'Activity log' }).click();
    await expect(
      page.getByRole('region', { name: 'Activity log entries' }).getByRole('listitem').first(),
    ).toBeVisible();
    await check('security (activity log)');
    await page.getByRole('button', { name: 'Close', exact: true }).click();

    await page.getByRole('button', { name: 'Lock vault' }).click();
    const field = page.getByLabel('Passphrase');
    await field.fill('wrong');
    await field.dispatchEvent('keydown', { key: 'A', modifierCapsLock: true });
    await page.getByRole('button', { name: /^Unlock/ }).click();
    await expect(page.getByRole('alert')).toBeVisible();
    await check('unlock (Caps Lock warning, wrong passphrase)');

    // The vault's own header stands in for a saved header backup.
    await coffer.answerFileDialogs([[join(coffer.vaultParent, 'Personal', 'coffer.header')]]);
    await page.getByRole('button', { name: 'Restore a header backup…' }).click();
    const restore = page.getByRole('dialog', { name: 'Restore a header backup' });
    await restore.getByLabel('A passphrase of the backup', { exact: true }).fill('wrong');
    await restore.getByRole('button', { name: 'Restore header' }).click();
    await expect(restore.getByRole('alert')).toBeVisible();
    await check('restore a header backup (a wrong passphrase)');
    await restore.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: 'Use the recovery key instead' }).click();
    await expect(page.getByLabel('Recovery key', { exact: true })).toBeVisible();
    await check('unlock (the recovery key)');
    await page.getByRole('button', { name: 'Use the passphrase instead' }).click();

    await page.getByRole('button', { name: 'Choose another vault' }).click();
    await expect(page.getByText('Recent vaults')).toBeVisible();
    await check('start (recent vaults)');

    await mkdir(join(coffer.vaultParent, 'Not a vault'));
    await coffer.answerFolderDialogs([join(coffer.vaultParent, 'Not a vault')]);
    await page.getByRole('button', { name: 'Open vault…' }).click();
    await expect(page.getByRole('alert')).toContainText('This folder is not a Coffer vault.');
    await check('start (an error)');

    expect(found).toEqual(Object.fromEntries(Object.keys(found).map((screen) => [screen, []])));
  });
}
