/** The one order in which the engine and the window list a folder (src/shared/name-order.ts). */
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { compareEntries, compareNames } from '../../src/shared/name-order.js';
import { newVault, writeTree } from '../helpers/vault.js';

describe('the listing order', () => {
  it('puts folders first, then numbered names in natural order, whatever their case', async () => {
    const { vault, root } = await newVault();
    await writeTree(join(root, 'in'), {
      'file10.txt': '1',
      'File2.txt': '2',
      'file1.txt': '3',
      'zeta/x': '4',
      'Alpha/y': '5',
    });
    await vault.add([join(root, 'in')], '/');
    expect(vault.list('/in').map((entry) => entry.name)).toEqual([
      'Alpha',
      'zeta',
      'file1.txt',
      'File2.txt',
      'file10.txt',
    ]);
  });

  it('is total: names the collator takes as equal (a zero-width space) still come in one order', () => {
    const plain = 'ab.txt';
    const spaced = 'a\u200Bb.txt';
    expect(compareNames(plain, spaced)).not.toBe(0);
    expect(Math.sign(compareNames(plain, spaced))).toBe(-Math.sign(compareNames(spaced, plain)));
    const file = (name: string) => ({ type: 'file' as const, name });
    expect([file(spaced), file(plain)].sort(compareEntries)).toEqual(
      [file(plain), file(spaced)].sort(compareEntries),
    );
  });
});
