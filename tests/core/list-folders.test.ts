import { describe, expect, it } from 'vitest';

import { InvalidArgumentError, NotFoundError } from '../../src/core/index.js';
import { newVault } from '../helpers/vault.js';

describe('Vault.listFolders', () => {
  it('lists only the folders of a folder, by name, as list() would show them', async () => {
    const { vault } = await newVault();
    for (const path of ['/b', '/A', '/c', '/A/inner']) vault.mkdir(path);
    await vault.addStreams(
      ['a.txt', 'z.txt'].map((name) => ({ name, size: 1, mtime: 0, bytes: Buffer.from('x') })),
      '/',
    );
    expect(vault.listFolders('/').map((entry) => entry.path)).toEqual(['/A', '/b', '/c']);
    expect(vault.listFolders('/')).toEqual(vault.list('/').filter((entry) => entry.type === 'folder'));
    expect(vault.listFolders('/A').map((entry) => entry.name)).toEqual(['inner']);
    expect(vault.listFolders('/c')).toEqual([]);
    expect(() => vault.listFolders('/a.txt')).toThrow(InvalidArgumentError);
    expect(() => vault.listFolders('/missing')).toThrow(NotFoundError);
  });
});
