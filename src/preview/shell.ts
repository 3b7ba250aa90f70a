/** What the preview server does for "Open with the default app" and "Show in folder". */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

import type { SystemShell } from '../app/backend.js';

/** One request the back end made of the shell, as a test reads it back. */
export interface ShellRequest {
  readonly action: 'open' | 'show';
  readonly path: string;
}

/** Test mode: opens nothing, remembers what it was asked, so a test can check the file and then its removal. */
export class RecordingShell implements SystemShell {
  readonly requests: ShellRequest[] = [];

  openPath(path: string): Promise<void> {
    this.requests.push({ action: 'open', path });
    return Promise.resolve();
  }

  showItemInFolder(path: string): Promise<void> {
    this.requests.push({ action: 'show', path });
    return Promise.resolve();
  }
}

/** The first executable `name` on `PATH`, or undefined. */
function findOnPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * The desktop's opener through xdg-open (freedesktop.org), when this machine has it; otherwise undefined and the
 * window does not offer opening files. xdg-open starts the app and returns; its exit code says whether it found
 * one.
 */
export function xdgOpenShell(path = process.env.PATH): SystemShell | undefined {
  const xdgOpen = findOnPath('xdg-open', path);
  if (xdgOpen === undefined) return undefined;
  const run = (target: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const child = spawn(xdgOpen, [target], { stdio: 'ignore' });
      child.once('error', reject);
      child.once('exit', (code) => {
        if (code === 0) resolve();
        else reject(new Error(`xdg-open exited with ${String(code)}`));
      });
    });
  return {
    openPath: run,
    // xdg-open cannot select a file: it opens the folder that holds it.
    showItemInFolder: (item) => run(dirname(item)),
  };
}
