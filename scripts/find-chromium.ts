/**
 * The Chromium the web tests and the screenshot script drive: Playwright's own build when installed, else Debian's
 * /usr/bin/chromium (which .ci/run installs when there is no browser).
 */
import { existsSync } from 'node:fs';

import { chromium } from '@playwright/test';

export const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/**
 * The executable to launch, or `undefined` for Playwright's own build.
 * @throws Error naming both ways to get a browser when neither is there.
 */
export function chromiumExecutable(): string | undefined {
  if (existsSync(chromium.executablePath())) return undefined;
  if (existsSync(SYSTEM_CHROMIUM)) return SYSTEM_CHROMIUM;
  throw new Error(
    "No Chromium for the web tests: run `npx playwright install chromium` (Playwright's own build), " +
      "or install Debian's with `apt-get install chromium` (found at /usr/bin/chromium).",
  );
}
