/**
 * The window's ties to the desktop, in the preview host: "Open with the default app" (a private decrypted copy,
 * removed at lock), "Show in folder" after a restore, lock when the window closes, and the system notification
 * when a long job ends in the background. What the preview's test mode would have opened is read back from it.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { createVault, row, sha256, sha256OfFile } from './steps.js';
import { dropFiles } from './drop.js';
import { expect, test, type CofferApp } from './fixtures.js';

test.skip(
  ({ host }) => host === 'electron',
  "these flows read back what the preview's test mode asked of the system's shell and the events socket; " +
    "Electron's side of them (shell, Notification, setContentProtection, powerMonitor) is covered by tests/desktop and tests/app",
);

function previewOf(coffer: CofferApp): NonNullable<CofferApp['preview']> {
  if (coffer.preview === undefined) throw new Error('this flow needs the preview host');
  return coffer.preview;
}

test('open with the default app: says so once, opens a private copy with the same bytes, removes it at lock', async ({
  coffer,
}) => {
  const { page } = coffer;
  const preview = previewOf(coffer);
  await createVault(coffer);
  const report = randomBytes(200_000);
  const notes = Buffer.from('plain notes\n');
  await dropFiles(page, [
    { name: 'report.pdf', bytes: report },
    { name: 'notes.txt', bytes: notes },
  ]);
  await expect(page.getByText('Added 2 files.')).toBeVisible();

  // From the context menu: the first time, the window says what this leaves on disk.
  await row(page, 'report.pdf').click({ button: 'right' });
  await page.getByRole('menuitem', { name: 'Open with default app' }).click();
  const notice = page.getByRole('dialog', { name: 'Open a decrypted copy?' });
  await expect(notice).toContainText('removed when the vault locks');
  await notice.getByRole('button', { name: 'Open copy' }).click();
  await expect(notice).toHaveCount(0);
  await expect.poll(async () => (await preview.shellRequests()).length).toBe(1);
  const [first] = await preview.shellRequests();
  expect(first?.action).toBe('open');
  const reportCopy = first?.path ?? '';
  expect(reportCopy.endsWith('/report.pdf')).toBe(true);
  expect(await sha256OfFile(reportCopy)).toBe(sha256(report));
  // The window never sees where the copy is.
  expect(await page.content()).not.toContain(dirname(reportCopy));

  // From the preview, the second time: no notice any more.
  await row(page, 'notes.txt').click();
  await page.getByRole('button', { name: 'Preview' }).click();
  const textPreview = page.getByRole('dialog', { name: 'Preview of notes.txt' });
  await textPreview.getByRole('button', { name: 'Open with default app' }).click();
  await expect.poll(async () => (await preview.shellRequests()).length).toBe(2);
  await expect(notice).toHaveCount(0);
  const notesCopy = (await preview.shellRequests())[1]?.path ?? '';
  expect(await sha256OfFile(notesCopy)).toBe(sha256(notes));

  await page.keyboard.press('Control+L');
  await expect(page.getByRole('button', { name: 'Unlock' })).toBeVisible();
  expect(existsSync(reportCopy)).toBe(false);
  expect(existsSync(notesCopy)).toBe(false);
});

test('show in folder after a restore: the window names the job, the back end shows the restored file', async ({
  coffer,
}) => {
  const { page } = coffer;
  const preview = previewOf(coffer);
  await createVault(coffer);
  await dropFiles(page, [{ name: 'photo.jpg', bytes: randomBytes(5000) }]);
  await expect(page.getByText('Added 1 file.')).toBeVisible();
  // Only a finished restore offers it.
  await expect(page.getByRole('button', { name: 'Show in folder' })).toHaveCount(0);

  await row(page, 'photo.jpg').click();
  await coffer.answerFolderDialogs([coffer.restoreDir]);
  await page.getByRole('button', { name: 'Restore to…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Restore' }).click();
  const job = page.getByRole('listitem', { name: 'Restore job' });
  await expect(job.getByRole('status')).toHaveText('Restored 1 file.');
  await job.getByRole('button', { name: 'Show in folder' }).click();
  await expect
    .poll(() => preview.shellRequests())
    .toEqual([{ action: 'show', path: join(coffer.restoreDir, 'photo.jpg') }]);
});

/** Creates a vault and opens the Settings dialog. */
async function settingsOfNewVault(coffer: CofferApp) {
  await createVault(coffer);
  await coffer.page.getByRole('button', { name: 'Settings' }).click();
  return {
    page: coffer.page,
    preview: previewOf(coffer),
    settings: coffer.page.getByRole('dialog', { name: 'Settings' }),
  };
}

test('settings: content protection is shown as not available in the preview; closing the page locks the vaults', async ({
  coffer,
}) => {
  const { page, preview, settings } = await settingsOfNewVault(coffer);
  const protection = settings.getByRole('checkbox', {
    name: 'Hide the window from screen capture and screen sharing',
  });
  await expect(protection).toBeDisabled();
  await expect(protection).not.toBeChecked();
  await expect(protection).toHaveAccessibleDescription(/Not available here/);
  await expect(settings.getByRole('checkbox', { name: 'Lock when the window closes' })).toBeChecked();

  // Leaving the page is the preview's "window closed".
  expect(await preview.invoke('vault.listOpen', {})).toMatchObject([{ name: 'Personal', locked: false }]);
  await page.goto('about:blank');
  await expect
    .poll(() => preview.invoke('vault.listOpen', {}))
    .toMatchObject([{ name: 'Personal', locked: true }]);
});

test('settings: locking on sleep and on screen lock is on by default, and turning it off is kept', async ({
  coffer,
}) => {
  const { page, preview, settings } = await settingsOfNewVault(coffer);
  const group = settings.getByRole('group', { name: 'Also lock' });
  const onSleep = group.getByRole('checkbox', { name: 'Lock when the computer goes to sleep' });
  const onScreenLock = group.getByRole('checkbox', { name: 'Lock when the screen locks' });
  await expect(onSleep).toBeChecked();
  await expect(onScreenLock).toBeChecked();
  await expect(onSleep).toHaveAccessibleDescription(/^Sleep and screen lock: the desktop app hears of these/);

  await onSleep.uncheck();
  await expect
    .poll(() => preview.invoke('settings.get', {}))
    .toMatchObject({ lockOnSuspend: false, lockOnScreenLock: true });
  await page.keyboard.press('Escape');
  await expect(settings).toBeHidden();
  await page.getByRole('button', { name: 'Settings' }).click();
  await expect(onSleep).not.toBeChecked();
  await expect(onScreenLock).toBeChecked();
});

/**
 * Stands in for the parts of the browser a notification test needs to control, before the app's own code runs:
 * the Notification API (records instead of showing; permission granted), whether the page is in the background,
 * and the clock the window measures a job's length with.
 */
function stubBrowser(): void {
  const state = window as unknown as {
    notices: { title: string; body: string | undefined }[];
    background: boolean;
    skewMs: number;
  };
  state.notices = [];
  state.background = false;
  state.skewMs = 0;
  const RecordedNotification = Object.assign(
    function record(title: string, options?: { body?: string }) {
      state.notices.push({ title, body: options?.body });
    },
    { permission: 'granted', requestPermission: () => Promise.resolve('granted') },
  );
  Object.defineProperty(window, 'Notification', { value: RecordedNotification, configurable: true });
  Document.prototype.hasFocus = () => !state.background;
  Object.defineProperty(Document.prototype, 'visibilityState', {
    get: () => (state.background ? 'hidden' : 'visible'),
    configurable: true,
  });
  const realNow = Date.now.bind(Date);
  Date.now = () => realNow() + state.skewMs;
}

test('a long job that ends while the window is in the background gets a notification without names', async ({
  coffer,
}) => {
  const { page } = coffer;
  await page.addInitScript(stubBrowser);
  // When asked, holds a job's 'ended' event, so the test can let time pass between a job's start and its end.
  let holding = false;
  let heldEnd: ((message: string | Buffer) => void) | undefined;
  let toPage: ((message: string | Buffer) => void) | undefined;
  await page.routeWebSocket(/\/api\/events/, (socket) => {
    const server = socket.connectToServer();
    toPage = (message) => {
      socket.send(message);
    };
    server.onMessage((message) => {
      if (holding && message.toString().includes('"type":"ended"')) heldEnd?.(message);
      else socket.send(message);
    });
    socket.onMessage((message) => {
      server.send(message);
    });
  });
  await page.reload();
  await createVault(coffer);
  const setPage = (background: boolean, skewMs: number) =>
    page.evaluate(
      ([inBackground, skew]) => {
        Object.assign(window, { background: inBackground, skewMs: skew });
      },
      [background, skewMs] as const,
    );
  const notices = () => page.evaluate(() => (window as unknown as { notices: unknown[] }).notices);
  /** Adds one file as a job that, to the window, runs a minute; in the background or not. */
  const addLongJob = async (name: string, background: boolean) => {
    await setPage(background, 0);
    holding = true;
    const ended = new Promise<string | Buffer>((resolve) => {
      heldEnd = resolve;
    });
    await dropFiles(page, [{ name, bytes: Buffer.from(name) }]);
    const message = await ended;
    holding = false;
    await setPage(background, 60_000);
    toPage?.(message);
  };

  // A short job in the background: nothing.
  await setPage(true, 0);
  await dropFiles(page, [{ name: 'quick-secret.txt', bytes: Buffer.from('q') }]);
  await expect(page.getByText('Added 1 file.')).toBeVisible();
  expect(await notices()).toEqual([]);
  await page.getByRole('button', { name: 'Dismiss add job' }).click();

  // A long one while the window has the focus: nothing (the user sees the jobs panel).
  await addLongJob('seen-secret.txt', false);
  await expect(page.getByText('Added 1 file.')).toBeVisible();
  expect(await notices()).toEqual([]);
  await page.getByRole('button', { name: 'Dismiss add job' }).click();

  // A long one in the background: a notification with the count, and no name from the vault.
  await addLongJob('diary-secret.txt', true);
  await expect.poll(notices).toEqual([{ title: 'Coffer: add finished', body: 'Added 1 file.' }]);
  expect(JSON.stringify(await notices())).not.toMatch(/secret|Personal/);
});
