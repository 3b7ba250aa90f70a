import { describe, expect, it } from 'vitest';

import type { FolderTree } from '../../src/shared/contract.js';
import { sameFolders } from '../../src/renderer/browser/entries.js';

const folder = (path: string, children: FolderTree[] = [], mtime = 1): FolderTree => ({
  path,
  name: path === '/' ? '' : path.slice(path.lastIndexOf('/') + 1),
  mtime,
  children,
  truncated: false,
});

const tree = (mtime = 1): FolderTree =>
  folder('/', [folder('/Docs', [folder('/Docs/Taxes', [], mtime)], mtime), folder('/Photos')], mtime);

describe('whether the sidebar must draw a new folder tree', () => {
  it('not when only times changed (files were added, renamed or removed)', () => {
    expect(sameFolders(tree(1), tree(2))).toBe(true);
  });

  it('when a folder was added, removed, renamed or moved anywhere in the tree', () => {
    const added = folder('/', [
      folder('/Docs', [folder('/Docs/Taxes'), folder('/Docs/Letters')]),
      folder('/Photos'),
    ]);
    const removed = folder('/', [folder('/Docs'), folder('/Photos')]);
    const renamed = folder('/', [folder('/Docs', [folder('/Docs/Tax')]), folder('/Photos')]);
    const moved = folder('/', [folder('/Docs'), folder('/Photos', [folder('/Photos/Taxes')])]);
    for (const changed of [added, removed, renamed, moved]) {
      expect(sameFolders(tree(), changed)).toBe(false);
      expect(sameFolders(changed, tree())).toBe(false);
    }
  });

  it('when the depth limit now cuts off a different part', () => {
    const cut: FolderTree = { ...tree(), truncated: true };
    expect(sameFolders(tree(), cut)).toBe(false);
  });
});
