/**
 * An add refuses the vault folder, anything in it and anything holding it, checked for every source before anything
 * is added. A selection's files share their folder, whose answer is found once: these check that sharing never
 * carries one folder's answer to another, and that the source named is the first one given that fails.
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { InvalidArgumentError } from '../../src/core/errors.js';
import { collect, newVault, writeTree } from '../helpers/vault.js';

const files = (folder: string, count: number): Record<string, string> =>
  Object.fromEntries(
    Array.from({ length: count }, (_, i) => [`${folder}/${folder}-${i}.txt`, `${folder} ${i}`]),
  );

describe('adding many files beside the vault', () => {
  it('adds a selection of 300 files from three folders, one of them a link to a folder outside', async () => {
    const { vault, root } = await newVault();
    await writeTree(root, { ...files('a', 100), ...files('b', 100), ...files('elsewhere', 100) });
    symlinkSync(join(root, 'elsewhere'), join(root, 'linked'));
    const sources = [
      ...Array.from({ length: 100 }, (_, i) => join(root, 'a', `a-${i}.txt`)),
      ...Array.from({ length: 100 }, (_, i) => join(root, 'b', `b-${i}.txt`)),
      ...Array.from({ length: 100 }, (_, i) => join(root, 'linked', `elsewhere-${i}.txt`)),
    ];
    const report = await vault.add(sources);
    expect(report.problems).toEqual([]);
    expect(vault.list('/')).toHaveLength(300);
    expect((await collect(vault.read('/elsewhere-99.txt'))).toString()).toBe('elsewhere 99');
  });

  it('refuses a selection whose last file is reached through a link into the vault, naming it, and adds nothing', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(root, files('a', 200));
    mkdirSync(join(dir, 'inside'));
    symlinkSync(join(dir, 'inside'), join(root, 'into-vault'));
    await writeTree(root, { 'into-vault/last.txt': 'in the vault' });
    const sources = [
      ...Array.from({ length: 200 }, (_, i) => join(root, 'a', `a-${i}.txt`)),
      join(root, 'into-vault', 'last.txt'),
    ];
    const refused = vault.add(sources);
    await expect(refused).rejects.toThrow(InvalidArgumentError);
    await expect(refused).rejects.toThrow(
      `Cannot add "${join(root, 'into-vault', 'last.txt')}": it is in the vault folder`,
    );
    expect(vault.list('/')).toEqual([]);
  });

  it('names the first failing source in the order given, not the first whose check finished', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(root, files('a', 50));
    const sources = [
      ...Array.from({ length: 50 }, (_, i) => join(root, 'a', `a-${i}.txt`)),
      root, // holds the vault folder
      dir, // is the vault folder
    ];
    await expect(vault.add(sources)).rejects.toThrow(
      `Cannot add "${root}": the vault folder "${dir}" is inside it`,
    );
    expect(vault.list('/')).toEqual([]);
  });
});
