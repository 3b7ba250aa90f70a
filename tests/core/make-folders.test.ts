import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { makeFolders } from '../../src/core/vault/durable.js';
import { tempDir } from '../helpers/vault.js';

describe('makeFolders', () => {
  it('answers the folder each new folder was made in, outermost first, for the caller to fsync', async () => {
    const root = tempDir();
    expect(await makeFolders(join(root, 'a', 'b', 'c'))).toEqual([
      root,
      join(root, 'a'),
      join(root, 'a', 'b'),
    ]);
    expect(await makeFolders(join(root, 'a', 'd'))).toEqual([join(root, 'a')]);
  });

  it('answers nothing for a folder that was there', async () => {
    const root = tempDir();
    await makeFolders(join(root, 'a'));
    expect(await makeFolders(join(root, 'a'))).toEqual([]);
  });

  it('throws when a file is in the way', async () => {
    const root = tempDir();
    writeFileSync(join(root, 'a'), 'x');
    await expect(makeFolders(join(root, 'a', 'b'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });
});
