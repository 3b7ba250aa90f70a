import { closeSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

import { vi } from 'vitest';

import { tempDir } from './vault.js';

/** Records every message posted to a worker thread (and still posts it) until `stop` is called. */
export function recordPosts(): { posted: unknown[]; stop: () => void } {
  const posted: unknown[] = [];
  const original = Object.getOwnPropertyDescriptor(Worker.prototype, 'postMessage')
    ?.value as Worker['postMessage'];
  const spy = vi.spyOn(Worker.prototype, 'postMessage').mockImplementation(function (
    this: Worker,
    ...args: Parameters<Worker['postMessage']>
  ) {
    posted.push(args[0]);
    Reflect.apply(original, this, args);
  });
  return {
    posted,
    stop: () => {
      spy.mockRestore();
    },
  };
}

/** A plaintext file of `plaintext` to seal as a stripe job's source, and an empty blob file as its target. */
export function stripeFiles(plaintext: Uint8Array): {
  sourceFd: number;
  targetFd: number;
  close: () => void;
} {
  const dir = tempDir();
  writeFileSync(join(dir, 'plain'), plaintext);
  const sourceFd = openSync(join(dir, 'plain'), 'r');
  const targetFd = openSync(join(dir, 'blob'), 'w');
  return {
    sourceFd,
    targetFd,
    close: () => {
      closeSync(sourceFd);
      closeSync(targetFd);
    },
  };
}
