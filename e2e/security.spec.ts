/**
 * The vault's Security page (issue 14): changing the passphrase, adding and removing one, the recovery key with its
 * "I have saved it" step, the activity log, and rotate and re-encrypt. Each test on a fresh vault.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { Page } from '@playwright/test';

import { encodePassphrase, loadSodium, Vault } from '../src/core/index.js';
import { HEADER_BACKUP_FILE, HEADER_FILE } from '../src/core/vault/layout.js';
import { dropFiles } from './drop.js';
import { makeVault, spreadLayout } from './engine-vault.js';
import { expect, test, type CofferApp } from './fixtures.js';
import { createVault, openAndUnlock, PASSPHRASE, row, sha256 } from './steps.js';

const NEW_PASSPHRASE = 'lantern orchard velvet quarry';
const EXTRA_PASSPHRASE = 'second key for the same vault';

async function openSecurity(page: Page, tab: string): Promise<void> {
  await page.getByRole('button', { name: 'Security' }).click();
  await page.getByRole('tab', { name: tab }).click();
}

async function lock(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Lock vault' }).click();
  await expect(page.getByLabel('Passphrase', { exact: true })).toBeVisible();
}

/** Unlocks the vault shown; resolves to the error shown, or null once the browser is back. */
async function unlockWith(page: Page, secret: string, field = 'Passphrase'): Promise<string | null> {
  await page.getByLabel(field, { exact: true }).fill(secret);
  await page.getByRole('button', { name: 'Unlock' }).click();
  const error = page.getByRole('alert');
  const browser = page.getByRole('button', { name: 'Lock vault' });
  await expect(error.or(browser).first()).toBeVisible();
  return (await browser.isVisible()) ? null : await error.innerText();
}

/** Saves a header backup from the open Security page into `restoreDir`; the name of the file it says it saved. */
async function saveHeaderBackup(coffer: CofferApp): Promise<string> {
  await coffer.answerFolderDialogs([coffer.restoreDir]);
  await coffer.page.getByRole('button', { name: 'Save a header backup…' }).click();
  const status = coffer.page.getByRole('status').filter({ hasText: 'Header backup saved as' });
  await expect(status).toBeVisible();
  return /“(.+)”/u.exec(await status.innerText())?.[1] ?? '';
}

/** Fills a change/add passphrase form and sends it with the fastest key strength. */
async function fillPassphraseForm(page: Page, current: string, passphrase: string, submit: string) {
  await page.getByLabel('Current passphrase', { exact: true }).fill(current);
  await page.getByLabel('New passphrase', { exact: true }).fill(passphrase);
  await page.getByLabel('Repeat new passphrase', { exact: true }).fill(passphrase);
  await page.getByLabel('Key strength').selectOption('interactive');
  await page.getByRole('button', { name: submit, exact: true }).click();
}

test('change passphrase: the current one is asked; then the old one fails and the new one opens', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  await openSecurity(page, 'Passphrases');
  await page.getByRole('button', { name: 'Change passphrase…' }).click();
  // The strength meter of the create form.
  await page.getByLabel('New passphrase', { exact: true }).fill('password');
  await expect(page.getByText('Very weak')).toBeVisible();

  await fillPassphraseForm(page, 'not the passphrase', NEW_PASSPHRASE, 'Change passphrase');
  await expect(page.getByText('That is not the passphrase this vault was unlocked with')).toBeVisible();
  await expect(page.getByLabel('Current passphrase', { exact: true })).toHaveValue('');

  await fillPassphraseForm(page, PASSPHRASE, NEW_PASSPHRASE, 'Change passphrase');
  // Said where the keyboard now is (the form went with its focus), so Esc closes the page from there.
  await expect(page.getByRole('status').filter({ hasText: 'Passphrase changed.' })).toBeFocused();
  await page.keyboard.press('Escape');

  await lock(page);
  expect(await unlockWith(page, PASSPHRASE)).toMatch(/Wrong passphrase/u);
  expect(await unlockWith(page, NEW_PASSPHRASE)).toBeNull();

  // The log shows the unlocks and the change, newest first.
  await openSecurity(page, 'Activity log');
  const entries = page.getByRole('region', { name: 'Activity log entries' }).getByRole('listitem');
  await expect(entries.first()).toHaveText(/Unlocked, after 1 failed attempt/u);
  await expect(entries.filter({ hasText: 'Changed a passphrase' })).toHaveCount(1);
});

test('a recovery key is shown once, must be saved, and then unlocks the vault', async ({ coffer }) => {
  const { page } = coffer;
  await createVault(coffer);
  await openSecurity(page, 'Recovery key');
  await expect(page.getByText('This vault has no recovery key.')).toBeVisible();
  await page.getByRole('button', { name: 'Make a recovery key…' }).click();
  await page.getByLabel('Current passphrase', { exact: true }).fill(PASSPHRASE);
  await page.getByRole('button', { name: 'Make recovery key' }).click();

  const sheet = page.getByRole('alertdialog', { name: 'Your new recovery key' });
  await expect(sheet).toBeVisible();
  const key = (await sheet.locator('.recovery-key').innerText()).replace(/\s+/gu, '');
  expect(key).toMatch(/^[A-Z2-7]{40}$/u);
  // Esc does not take the key off the screen before it is saved.
  await page.keyboard.press('Escape');
  await expect(sheet).toBeVisible();
  const saved = sheet.getByRole('button', { name: 'I have saved it' });
  await expect(saved).toBeDisabled();
  // The print view holds the vault's name and the key, and only it is printed.
  await page.emulateMedia({ media: 'print' });
  await expect(page.locator('.print-sheet')).toContainText('Personal');
  await expect(sheet).toBeHidden();
  await page.emulateMedia({ media: 'screen' });

  await sheet.getByLabel('I have printed or written down this key').check();
  await saved.click();
  await expect(sheet).toBeHidden();
  await expect(page.locator('.recovery-key')).toHaveCount(0);
  await expect(page.getByText('This vault has a recovery key.')).toBeVisible();
  await page.keyboard.press('Escape');

  await lock(page);
  await page.getByRole('button', { name: 'Use the recovery key instead' }).click();
  expect(await unlockWith(page, key.toLowerCase(), 'Recovery key')).toBeNull();
});

test('an added passphrase unlocks; once removed it does not; the one in use cannot be removed', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  await openSecurity(page, 'Passphrases');
  await expect(page.getByRole('row', { name: /Passphrase 1/u })).toContainText('Used for this unlock');
  await page.getByRole('button', { name: 'Add a passphrase…' }).click();
  await fillPassphraseForm(page, PASSPHRASE, EXTRA_PASSPHRASE, 'Add a passphrase');
  await expect(page.getByRole('status').filter({ hasText: 'Passphrase added.' })).toBeVisible();
  await expect(page.getByRole('row', { name: /Passphrase 2/u })).toBeVisible();
  await page.keyboard.press('Escape');

  await lock(page);
  expect(await unlockWith(page, EXTRA_PASSPHRASE)).toBeNull();
  await openSecurity(page, 'Passphrases');
  // Unlocked with the second now: the first can go, the second cannot (said before trying).
  await expect(page.getByRole('row', { name: /Passphrase 2/u })).toContainText('Used for this unlock');
  await expect(page.getByRole('button', { name: 'Remove passphrase 2…' })).toHaveCount(0);
  await page.keyboard.press('Escape');

  await lock(page);
  expect(await unlockWith(page, PASSPHRASE)).toBeNull();
  await openSecurity(page, 'Passphrases');
  await page.getByRole('button', { name: 'Remove passphrase 2…' }).click();
  await page.getByRole('alertdialog').getByRole('button', { name: 'Remove passphrase 2' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Passphrase 2 removed' })).toBeVisible();
  await expect(page.getByRole('row', { name: /Passphrase 2/u })).toHaveCount(0);
  await expect(page.getByRole('row', { name: /Passphrase 1/u })).toContainText('The only way in');

  await page.getByRole('tab', { name: 'Activity log' }).click();
  const entries = page.getByRole('region', { name: 'Activity log entries' }).getByRole('listitem');
  await expect(entries.first()).toHaveText(/Removed a passphrase/u);
  await expect(entries.filter({ hasText: 'Added a passphrase' })).toHaveCount(1);
  await page.keyboard.press('Escape');

  await lock(page);
  expect(await unlockWith(page, EXTRA_PASSPHRASE)).toMatch(/Wrong passphrase/u);
});

test('rotate and re-encrypt a vault of 1,000 files: the same bytes after restore, only the new key left', async ({
  coffer,
}) => {
  test.slow();
  const { page } = coffer;
  const dir = join(coffer.vaultParent, 'Archive');
  const layout = spreadLayout('/data', 10, 100);
  await makeVault(dir, new Map(layout));
  await openAndUnlock(coffer, page, dir);

  await page.getByRole('button', { name: 'Vault details' }).click();
  const keyIds = page.locator('dt:text-is("Data keys in the vault") + dd');
  const before = await keyIds.innerText();
  expect(before).toMatch(/^key \d+$/u);
  await page.keyboard.press('Escape');

  await openSecurity(page, 'Data key');
  await page.getByRole('button', { name: 'Rotate and re-encrypt' }).click();
  await expect(
    page.getByText(/^Re-encrypted 1,000 files under key \d+; older keys removed\.$/u).first(),
  ).toBeVisible({ timeout: 150_000 });
  await expect(page.getByLabel('Data key ids')).not.toContainText(before);
  await page.keyboard.press('Escape');

  await page.getByRole('button', { name: 'Vault details' }).click();
  const after = await keyIds.innerText();
  expect(after).toMatch(/^key \d+$/u);
  expect(after).not.toBe(before);
  await page.keyboard.press('Escape');

  await row(page, 'data').click();
  await coffer.answerFolderDialogs([coffer.restoreDir]);
  await page.getByRole('button', { name: 'Restore to…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Restore', exact: true }).click();
  // A thousand files under a loaded machine: waited for as long as the test may run.
  await expect(page.getByText('Restored 1,000 files.')).toBeVisible({ timeout: 150_000 });
  for (const [folder, names] of layout) {
    for (const name of names) {
      const restored = await readFile(join(coffer.restoreDir, folder, name));
      expect(sha256(restored)).toBe(sha256(new TextEncoder().encode(name)));
    }
  }
});

test('a header backup is saved through the folder dialog as a new file, the same bytes as the header', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  await openSecurity(page, 'Passphrases');
  const fileName = await saveHeaderBackup(coffer);
  expect(fileName).toMatch(/^Personal header \d{4}-\d{2}-\d{2}\.coffer-header$/u);
  expect(sha256(await readFile(join(coffer.restoreDir, fileName)))).toBe(
    sha256(await readFile(join(coffer.vaultParent, 'Personal', 'coffer.header'))),
  );
});

test('locking while a new recovery key is shown takes it off the screen and out of the page', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  await openSecurity(page, 'Recovery key');
  await page.getByRole('button', { name: 'Make a recovery key…' }).click();
  await page.getByLabel('Current passphrase', { exact: true }).fill(PASSPHRASE);
  await page.getByRole('button', { name: 'Make recovery key' }).click();
  const sheet = page.getByRole('alertdialog', { name: 'Your new recovery key' });
  const key = (await sheet.locator('.recovery-key').innerText()).replace(/\s+/gu, '');
  await page.keyboard.press('Control+l');
  await expect(page.getByLabel('Passphrase', { exact: true })).toBeVisible();
  expect(await page.content()).not.toContain(key.slice(0, 5));
  await expect(page.locator('.recovery-key, .print-sheet')).toHaveCount(0);
});

test('a header backup restored from the Unlock screen brings its passphrase back and retires the newer one', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  await openSecurity(page, 'Passphrases');
  const fileName = await saveHeaderBackup(coffer);
  await page.getByRole('button', { name: 'Change passphrase…' }).click();
  await fillPassphraseForm(page, PASSPHRASE, NEW_PASSPHRASE, 'Change passphrase');
  // Said where the keyboard now is (the form went with its focus), so Esc closes the page from there.
  await expect(page.getByRole('status').filter({ hasText: 'Passphrase changed.' })).toBeFocused();
  await page.keyboard.press('Escape');
  await lock(page);

  await coffer.answerFileDialogs([[join(coffer.restoreDir, fileName)]]);
  await page.getByRole('button', { name: 'Restore a header backup…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Restore a header backup' });
  await expect(dialog.getByText('ones removed since then work again')).toBeVisible();
  await dialog.getByLabel('A passphrase of the backup', { exact: true }).fill(NEW_PASSPHRASE);
  await dialog.getByRole('button', { name: 'Restore header' }).click();
  await expect(dialog.getByText('does not open this header backup')).toBeVisible();
  await dialog.getByLabel('A passphrase of the backup', { exact: true }).fill(PASSPHRASE);
  await dialog.getByRole('button', { name: 'Restore header' }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByRole('status').filter({ hasText: 'is restored' })).toBeVisible();

  expect(await unlockWith(page, NEW_PASSPHRASE)).toMatch(/Wrong passphrase/u);
  expect(await unlockWith(page, PASSPHRASE)).toBeNull();
});

test('an older header put back by hand changes nothing until coffer.header.bak is restored, which brings every file back', async ({
  coffer,
}) => {
  const { page } = coffer;
  const dir = join(coffer.vaultParent, 'Rotated');
  const sodium = await loadSodium();
  const made = await Vault.create(dir, encodePassphrase(sodium, PASSPHRASE), { kdf: 'interactive', sodium });
  const file = (name: string) => ({ name, size: name.length, mtime: Date.now(), bytes: Buffer.from(name) });
  await made.addStreams([file('before.txt')], '/');
  const older = made.exportHeader();
  await made.rotateKey();
  await made.addStreams([file('after.txt')], '/');
  made.close();
  await writeFile(join(dir, HEADER_FILE), older);

  await openAndUnlock(coffer, page, dir);
  const held = page.getByRole('alert').filter({ hasText: 'Nothing in this vault can be changed for now.' });
  await expect(held).toContainText('restore “coffer.header.bak” from the vault folder');
  await expect(row(page, 'before.txt')).toBeVisible();
  await expect(row(page, 'after.txt')).toHaveCount(0);
  const refusal = page.getByText('The vault header in use is older than the data in this vault');
  const rename = async (): Promise<void> => {
    await row(page, 'before.txt').click();
    await page.keyboard.press('F2');
    // F2 gives the field the keyboard, the name without its extension selected. Typed into as a person does: a
    // locator's typing focuses the field itself when it is first, and moves the caret to the start.
    const field = page.getByLabel('New name for before.txt');
    await expect(field).toBeFocused();
    await page.keyboard.type('renamed');
    await expect(field).toHaveValue('renamed.txt');
    await page.keyboard.press('Enter');
  };
  await rename();
  await expect(refusal).toBeVisible();
  await expect(row(page, 'before.txt')).toBeVisible();
  // The next request clears the words (a restore, its folder dialog unanswered: a cancel, which says nothing). Then
  // no file dialog is answered either: the add is refused before one would open.
  await page.getByRole('button', { name: 'Restore to…' }).click();
  await expect(refusal).toHaveCount(0);
  await page.getByRole('button', { name: 'Add files…' }).click();
  await expect(refusal).toBeVisible();
  // A drop is refused too, before its bytes are sent to the back end.
  const dropRequests: string[] = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname.startsWith('/api/drop')) dropRequests.push(request.url());
  });
  await page.getByRole('button', { name: 'Restore to…' }).click();
  await expect(refusal).toHaveCount(0);
  await dropFiles(page, [{ name: 'new.txt', bytes: Buffer.from('new') }]);
  await expect(refusal).toBeVisible();
  expect(dropRequests).toEqual([]);

  // The notice's button locks and asks for the header backup at once.
  await coffer.answerFileDialogs([[join(dir, HEADER_BACKUP_FILE)]]);
  await held.getByRole('button', { name: 'Lock and restore the header…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Restore a header backup' });
  await dialog.getByLabel('A passphrase of the backup', { exact: true }).fill(PASSPHRASE);
  await dialog.getByRole('button', { name: 'Restore header' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'is restored' })).toBeVisible();
  expect(await unlockWith(page, PASSPHRASE)).toBeNull();
  await expect(row(page, 'after.txt')).toBeVisible();
  await expect(held).toHaveCount(0);
  await rename();
  await expect(row(page, 'renamed.txt')).toBeVisible();
});
