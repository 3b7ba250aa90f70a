/**
 * The start, create, open and unlock screens: issue 12's flows 1, 3 and 11, and the recent-vault list.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { loadSodium } from '../src/core/index.js';
import { Vault } from '../src/core/vault/vault.js';
import { HEADER_FILE } from '../src/core/vault/layout.js';
import { formatDate, formatSize } from '../src/renderer/format.js';
import { dropFiles } from './drop.js';
import { expect, test } from './fixtures.js';
import { createVault, PASSPHRASE } from './steps.js';

/** Makes a vault with the engine in the test's own process, which holds it until {@link release}. */
async function engineVault(dir: string): Promise<Vault> {
  return Vault.create(dir, Buffer.from(PASSPHRASE), { kdf: 'interactive' });
}

async function release(vault: Vault): Promise<void> {
  vault.close();
  await vault.released();
}

test('flow 1: a new vault lists several dropped files with their sizes and dates', async ({ coffer }) => {
  const { page } = coffer;
  await createVault(coffer);
  const files = [
    { name: 'notes.md', size: 1_204, lastModified: Date.UTC(2026, 7, 12, 14, 3) },
    { name: 'IMG_0412.jpg', size: 3_145_728, lastModified: Date.UTC(2025, 0, 2, 9, 30) },
    { name: 'empty.txt', size: 0, lastModified: Date.UTC(2024, 11, 31, 23, 59) },
  ];
  await dropFiles(page, files);
  await expect(page.getByText('Added 3 files.')).toBeVisible();
  for (const file of files) {
    const cells = page
      .getByRole('row', { name: new RegExp(file.name.replace('.', '\\.')) })
      .getByRole('gridcell');
    await expect(cells.nth(1)).toHaveText(formatSize(file.size));
    await expect(cells.nth(2)).toHaveText(formatDate(file.lastModified));
  }
});

test('flow 3: wrong passphrases say so, keep the focus and make the person wait after three; the right one opens the browser', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer);
  await page.getByRole('button', { name: 'Lock vault' }).click();
  const field = page.getByLabel('Passphrase');
  const unlock = page.getByRole('button', { name: /^Unlock/ });

  for (const tries of [1, 2]) {
    await field.fill(`wrong ${tries}`);
    await unlock.click();
    await expect(page.getByRole('alert')).toHaveText(
      'Wrong passphrase. Check Caps Lock and the keyboard layout.',
    );
    await expect(field).toBeFocused();
  }
  await field.fill('wrong 3');
  await unlock.click();
  await expect(page.getByRole('alert')).toHaveText(
    'Wrong passphrase. Check Caps Lock and the keyboard layout. After 3 wrong tries, wait 5 s before the next.',
  );
  await expect(field).toBeFocused();

  await field.fill(PASSPHRASE);
  // The wait ends by itself; then Unlock is offered again.
  await expect(unlock).toHaveText('Unlock');
  await unlock.click();
  await expect(page.getByText('This folder is empty.')).toBeVisible();
});

test('unlock: show/hide reveals the passphrase, Caps Lock is pointed out', async ({ coffer }) => {
  const { page } = coffer;
  await createVault(coffer);
  await page.getByRole('button', { name: 'Lock vault' }).click();
  const field = page.getByLabel('Passphrase');
  await field.fill('typed');
  await expect(field).toHaveAttribute('type', 'password');
  await page.getByRole('button', { name: 'Show text' }).click();
  await expect(field).toHaveAttribute('type', 'text');
  await page.getByRole('button', { name: 'Hide text' }).click();
  await expect(field).toHaveAttribute('type', 'password');

  await expect(page.getByText('Caps Lock is on.')).toHaveCount(0);
  await field.dispatchEvent('keydown', { key: 'A', modifierCapsLock: true });
  await expect(page.getByText('Caps Lock is on.')).toBeVisible();
  await expect(field).toHaveAccessibleDescription(/Caps Lock is on/);
  await field.dispatchEvent('keyup', { key: 'A', modifierCapsLock: false });
  await expect(page.getByText('Caps Lock is on.')).toHaveCount(0);
});

test('create: the strength meter, the time of each key-strength preset and the can’t-recover warning', async ({
  coffer,
}) => {
  const { page } = coffer;
  await page.getByRole('button', { name: 'Create vault…' }).click();
  await expect(page.getByText('A lost passphrase cannot be recovered.')).toBeVisible();
  const passphrase = page.getByLabel('Passphrase', { exact: true });
  await passphrase.fill('password');
  await expect(page.getByRole('meter', { name: 'Passphrase strength' })).toHaveJSProperty('value', 0);
  await expect(page.getByText('Very weak')).toBeVisible();
  await passphrase.fill('grape tundra lantern copper whistle');
  await expect(page.getByText('Very strong')).toBeVisible();
  await expect(page.getByRole('meter', { name: 'Passphrase strength' })).toHaveJSProperty('value', 4);

  const preset = page.getByLabel('Key strength');
  for (const label of ['Fast (64 MiB)', 'Standard (256 MiB)', 'Strong (1 GiB)']) {
    await expect(preset.locator('option', { hasText: label })).toHaveText(/· about \d+(\.\d)? (s|min)$/);
  }
  await expect(
    page.getByText(/^Unlocking will take about \d+(\.\d)? (s|min) on this computer/),
  ).toBeVisible();
  await expect(page.getByLabel('Hide each file’s exact size')).toBeChecked();
});

test('create: the form holds still while the strength check and the key-strength figures arrive', async ({
  coffer,
}) => {
  const { page } = coffer;
  // Chromium reports every move of an element already on screen; the form appearing is none.
  await page.evaluate(() => {
    const moved: string[] = [];
    Object.assign(window, { moved });
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const { sources = [] } = entry as PerformanceEntry & { sources?: { node?: Node | null }[] };
        moved.push(...sources.map((source) => source.node?.textContent?.slice(0, 40) ?? '?'));
      }
    }).observe({ type: 'layout-shift' });
  });
  await page.getByRole('button', { name: 'Create vault…' }).click();
  await expect(page.getByText('Four or more unrelated words make a strong passphrase')).toBeVisible();
  await expect(page.getByText(/^Unlocking will take about/)).toBeVisible();
  // A frame after the last change, so its shift (if any) is reported.
  await page.evaluate(() => new Promise((drawn) => requestAnimationFrame(() => setTimeout(drawn, 100))));
  expect(await page.evaluate(() => (window as unknown as { moved: string[] }).moved)).toEqual([]);
});

test("create: sizes are padded unless unticked, and the vault's details say which", async ({ coffer }) => {
  const { page } = coffer;
  const paddingShown = async (): Promise<string | null> => {
    await page.getByRole('button', { name: 'Vault details' }).click();
    const details = page.getByRole('dialog', { name: 'Vault details' });
    const shown = await details.locator('dt', { hasText: 'Size padding' }).locator('+ dd').textContent();
    await details.getByRole('button', { name: 'Close' }).click();
    return shown;
  };
  await createVault(coffer, 'Padded');
  expect(await paddingShown()).toBe('On: each file’s size shows only roughly (to within about 12 %)');
  await page.getByRole('button', { name: 'Lock vault' }).click();
  await page.getByRole('button', { name: 'Choose another vault' }).click();
  await createVault(coffer, 'Exact sizes', { padSizes: false });
  expect(await paddingShown()).toBe('Off');
});

test('recent vaults: listed with folder and last opened; a vault whose folder is gone is marked and can be forgotten', async ({
  coffer,
}) => {
  const { page } = coffer;
  await createVault(coffer, 'Work');
  await page.getByRole('button', { name: 'Lock vault' }).click();
  await page.getByRole('button', { name: 'Choose another vault' }).click();
  const row = page.getByRole('listitem').filter({ hasText: 'Work' });
  await expect(row).toContainText(join(coffer.vaultParent, 'Work'));
  await expect(row).toContainText('Last opened');

  await rm(join(coffer.vaultParent, 'Work'), { recursive: true });
  await page.reload();
  await expect(row).toContainText('Folder not found');
  await expect(row.getByRole('button', { name: /^Work/ })).toBeDisabled();
  await row.getByRole('button', { name: 'Forget Work' }).click();
  await expect(row).toHaveCount(0);
  await page.reload();
  await expect(page.getByText('No vault opened yet.')).toBeVisible();
});

test('flow 11: a folder that is not a vault, one from a newer Coffer and one held by another program each get a clear message', async ({
  coffer,
}) => {
  const { page } = coffer;
  const alert = page.getByRole('alert');
  const openVault = async (folder: string): Promise<void> => {
    await coffer.answerFolderDialogs([folder]);
    await page.getByRole('button', { name: 'Open vault…' }).click();
  };

  const plain = join(coffer.vaultParent, 'Holiday photos');
  await mkdir(plain);
  await openVault(plain);
  await expect(alert).toContainText('This folder is not a Coffer vault.');
  await expect(alert).toContainText('Choose the vault folder itself');

  const newer = join(coffer.vaultParent, 'From the future');
  await release(await engineVault(newer));
  // The header's u16 little-endian version at offset 8 (docs/FORMAT.md 4.1), as a later Coffer would write it: with
  // its checksum, the last 32 bytes, recomputed (4.4), or it is damage and the backup stands in (4.5).
  const header = await readFile(join(newer, HEADER_FILE));
  header.writeUInt16LE(2, 8);
  const sodium = await loadSodium();
  sodium.blake2b(32, header.subarray(0, header.length - 32)).copy(header, header.length - 32);
  await writeFile(join(newer, HEADER_FILE), header);
  await openVault(newer);
  await expect(alert).toContainText('This vault was made by a newer version of Coffer.');
  await expect(alert).toContainText('Update Coffer to open it.');

  const held = join(coffer.vaultParent, 'Held');
  const holder = await engineVault(held);
  try {
    await openVault(held);
    await expect(alert).toContainText('This vault is in use by another window or program.');
    await expect(alert).toContainText('Close it there');
  } finally {
    await release(holder);
  }
  // Once the other program lets go, the same vault opens.
  await openVault(held);
  await expect(page.getByRole('heading', { name: 'Held' })).toBeVisible();
  await expect(page.getByLabel('Passphrase')).toBeVisible();
});
