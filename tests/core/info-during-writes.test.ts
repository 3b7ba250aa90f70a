import { writeFileSync } from 'node:fs';
import * as fsPromises from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it, vi } from 'vitest';

import { newVault } from '../helpers/vault.js';

/** Paths whose stat answers ENOENT, as for a file renamed or removed between the listing and its stat. */
const vanished = new Set<string>();

vi.mock('node:fs/promises', async (original) => {
  const real = await original<typeof fsPromises>();
  return {
    ...real,
    stat: (path: string, ...rest: []) =>
      vanished.has(path)
        ? Promise.reject(Object.assign(new Error(`ENOENT: no such file, stat '${path}'`), { code: 'ENOENT' }))
        : real.stat(path, ...rest),
  };
});

describe('the vault’s details while it is being written', () => {
  it('counts the bytes on disk without a file that went between the listing and its stat', async () => {
    const { vault, dir } = await newVault();
    const before = (await vault.info()).storedBytes;
    const temp = join(dir, 'tmp', `${'ab'.repeat(16)}.tmp`);
    writeFileSync(temp, Buffer.alloc(5000));
    expect((await vault.info()).storedBytes).toBe(before + 5000);
    vanished.add(temp);
    expect((await vault.info()).storedBytes).toBe(before);
  });
});
