import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { xdgOpenShell } from '../../src/preview/shell.js';
import { tempDir } from '../helpers/vault.js';

/** A stand-in xdg-open in its own folder: records its argument, exits with `code`. */
function fakeXdgOpen(code: number): { path: string; log: string } {
  const dir = tempDir();
  const log = join(dir, 'opened.txt');
  const script = join(dir, 'xdg-open');
  writeFileSync(script, `#!/bin/sh\nprintf '%s' "$1" > '${log}'\nexit ${code}\n`);
  chmodSync(script, 0o755);
  return { path: dir, log };
}

describe("the preview's opener", () => {
  it('is not offered where xdg-open is not on the PATH', () => {
    expect(xdgOpenShell(tempDir())).toBeUndefined();
  });

  it('opens a file through xdg-open, and fails when xdg-open finds no app', async () => {
    const working = fakeXdgOpen(0);
    await xdgOpenShell(working.path)?.openPath('/tmp/some file.txt');
    expect(readFileSync(working.log, 'utf8')).toBe('/tmp/some file.txt');

    // xdg-open cannot select a file: "show in folder" opens the folder that holds it.
    await xdgOpenShell(working.path)?.showItemInFolder('/tmp/out/photo.jpg');
    expect(readFileSync(working.log, 'utf8')).toBe('/tmp/out');

    const failing = fakeXdgOpen(3);
    await expect(xdgOpenShell(failing.path)?.openPath('/tmp/x.weird')).rejects.toThrow('exited with 3');
  });
});
