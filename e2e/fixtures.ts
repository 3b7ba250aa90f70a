/**
 * Gives each test a fresh app on a fresh data folder, and fresh folders for its vault and for restores:
 * - host `web`: a preview server (test mode) started for the test, and a new browser page on it;
 * - host `electron`: the built app launched with its own user-data folder; skipped, with the reason, when the
 *   Electron binary is missing.
 * Native dialogs are answered by the test: {@link CofferApp.answerFolderDialogs} queues the paths the next dialogs
 * return (the preview server's test-only queue, or a stand-in for Electron's `dialog.showOpenDialog`).
 */
import { once } from 'node:events';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { _electron, test as base, expect, type Page } from '@playwright/test';

import { electronPackage, findElectronBinary } from '../scripts/electron-binary.js';
import { chromiumExecutable } from '../scripts/find-chromium.js';
import { startPreview, type PreviewProcess } from './preview-process.js';

export interface HostOptions {
  host: 'web' | 'electron';
}

export interface CofferApp {
  readonly page: Page;
  /** An empty folder to create the vault in. */
  readonly vaultParent: string;
  /** An empty folder to restore into. */
  readonly restoreDir: string;
  /** The paths the next native dialogs answer with, in order (`null` = the user cancelled). */
  readonly answerFolderDialogs: (answers: readonly (string | null)[]) => Promise<void>;
  /** The files the next open-file dialogs answer with, in order (`null` = the user cancelled). */
  readonly answerFileDialogs: (answers: readonly (readonly string[] | null)[]) => Promise<void>;
  /**
   * Quits the app and starts it again on the same data folder, as a person reopening it would; returns the new
   * window (`page` is the first one only).
   */
  readonly restart: () => Promise<Page>;
  /** Web host only (the preview's test mode): what the back end asked the system's shell to open or show. */
  readonly preview?: Pick<PreviewProcess, 'shellRequests' | 'invoke'>;
}

const ROOT = join(import.meta.dirname, '..');

export const test = base.extend<HostOptions & { coffer: CofferApp }>({
  host: ['web', { option: true }],
  coffer: async ({ host, playwright }, use, testInfo) => {
    const work = await mkdtemp(join(tmpdir(), 'coffer-e2e-'));
    const dataDir = join(work, 'data');
    const vaultParent = join(work, 'vaults');
    const restoreDir = join(work, 'restored');
    await Promise.all([mkdir(dataDir), mkdir(vaultParent), mkdir(restoreDir)]);
    try {
      if (host === 'web') {
        let preview = await startPreview(dataDir);
        // Launched here rather than through the `browser` fixture, so the electron project never needs Chromium.
        const executablePath = chromiumExecutable();
        const browser = await playwright.chromium.launch(
          executablePath === undefined ? {} : { executablePath },
        );
        const context = await browser.newContext();
        // The preview serves the app under the same CSP as Electron: nothing the window does may need more.
        const cspViolations: string[] = [];
        context.on('console', (message) => {
          if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
        });
        const page = await context.newPage();
        try {
          await page.goto(preview.url);
          await use({
            page,
            vaultParent,
            restoreDir,
            answerFolderDialogs: (answers) => preview.answerFolderDialogs(answers),
            answerFileDialogs: (answers) => preview.answerFileDialogs(answers),
            preview: {
              shellRequests: () => preview.shellRequests(),
              invoke: (channel, request) => preview.invoke(channel, request),
            },
            async restart() {
              await Promise.all(context.pages().map((open) => open.close()));
              const exited = once(preview.child, 'exit');
              preview.stop();
              await exited;
              preview = await startPreview(dataDir);
              const fresh = await context.newPage();
              await fresh.goto(preview.url);
              return fresh;
            },
          });
          expect(cspViolations).toEqual([]);
        } finally {
          await browser.close();
          // Closing the page locks its vaults (lock on close), and stopping the server locks the rest: both write
          // to the vault and the data folder, so the work folder is removed only once the server has exited.
          const exited = preview.child.exitCode === null ? once(preview.child, 'exit') : Promise.resolve();
          preview.stop();
          await exited;
        }
      } else {
        const binary = findElectronBinary();
        testInfo.skip(
          binary === null,
          `the Electron ${electronPackage().version} binary is not installed here (it cannot be downloaded); ` +
            'the web project runs the same specs against the preview server',
        );
        const launch = () =>
          _electron.launch({
            executablePath: binary ?? undefined,
            args: [ROOT, `--user-data-dir=${dataDir}`],
          });
        let app = await launch();
        try {
          const page = await app.firstWindow();
          await use({
            page,
            vaultParent,
            restoreDir,
            async restart() {
              await app.close();
              app = await launch();
              return app.firstWindow();
            },
            async answerFolderDialogs(answers) {
              await app.evaluate(({ dialog }, queued) => {
                const queue = [...queued];
                dialog.showOpenDialog = () => {
                  const next = queue.shift() ?? null;
                  return Promise.resolve({ canceled: next === null, filePaths: next === null ? [] : [next] });
                };
              }, answers);
            },
            async answerFileDialogs(answers) {
              await app.evaluate(({ dialog }, queued) => {
                const queue = [...queued];
                dialog.showOpenDialog = () => {
                  const next = queue.shift() ?? null;
                  return Promise.resolve({
                    canceled: next === null,
                    filePaths: next === null ? [] : [...next],
                  });
                };
              }, answers);
            },
          });
        } finally {
          await app.close();
        }
      }
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  },
});

export { expect } from '@playwright/test';
