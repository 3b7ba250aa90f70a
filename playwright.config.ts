/**
 * End-to-end tests of the window. The same specs run in two projects:
 * - `web`: the built renderer in Chromium against the preview server (the real engine, dialogs answered by the
 *   test through the server's test-only queue). `npm test` runs this one.
 * - `electron`: the built desktop app through Playwright's Electron launcher; every test is reported as skipped,
 *   with the reason, where the Electron binary is missing (as on the machines this project is built on).
 * Both need `npm run build:app` first (`npm run test:e2e` does it).
 */
import { defineConfig } from '@playwright/test';

import type { HostOptions } from './e2e/fixtures.js';

export default defineConfig<HostOptions>({
  testDir: 'e2e',
  // The machines are shared and small; each test starts its own server and vault.
  workers: 1,
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  reporter: [['list']],
  use: { trace: 'retain-on-failure' },
  projects: [
    {
      name: 'web',
      // Chromium: Playwright's own build when installed, else /usr/bin/chromium (scripts/find-chromium.ts).
      use: { host: 'web' },
    },
    { name: 'electron', use: { host: 'electron' } },
  ],
});
