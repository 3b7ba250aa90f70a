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

  it('gives every entry its whole path at any depth, in list, listFolders and listRecursive alike', async () => {
    const { vault } = await newVault();
    for (const path of ['/Photos', '/Photos/2024', '/Photos/2024/June', '/Notes']) vault.mkdir(path);
    const file = (name: string) => ({ name, size: 1, mtime: 0, bytes: Buffer.from('x') });
    await vault.addStreams([file('beach.jpg')], '/Photos/2024/June');
    await vault.addStreams([file('a.txt')], '/');
    expect(vault.list('/Photos/2024').map((entry) => entry.path)).toEqual(['/Photos/2024/June']);
    expect(vault.list('/Photos/2024/June').map((entry) => entry.path)).toEqual([
      '/Photos/2024/June/beach.jpg',
    ]);
    expect(vault.listFolders('/Photos').map((entry) => entry.path)).toEqual(['/Photos/2024']);
    // A folder named in another case lists its entries under the folder's own spelling.
    expect(vault.list('/photos/2024').map((entry) => entry.path)).toEqual(['/Photos/2024/June']);
    expect(vault.listRecursive('/PHOTOS').map((entry) => entry.path)).toContain(
      '/Photos/2024/June/beach.jpg',
    );
    expect(vault.listRecursive('/').map((entry) => entry.path)).toEqual([
      '/Notes',
      '/Photos',
      '/Photos/2024',
      '/Photos/2024/June',
      '/Photos/2024/June/beach.jpg',
      '/a.txt',
    ]);
    expect(vault.listRecursive('/Photos/2024').map((entry) => entry.path)).toEqual([
      '/Photos/2024/June',
      '/Photos/2024/June/beach.jpg',
    ]);
    for (const entry of vault.listRecursive('/')) expect(vault.stat(entry.path)).toEqual(entry);
  });
});
