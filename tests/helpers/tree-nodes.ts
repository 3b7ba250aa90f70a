import type { TreeNode } from '../../src/core/vault/tree.js';

/** A record id from a small number. */
export const id = (n: number): string => n.toString(16).padStart(32, '0');

/** A folder node `n` called `name` in folder `parent` (`null`: the root). */
export const folder = (n: number, name: string, parent: string | null): TreeNode => ({
  id: id(n),
  keyId: 1,
  type: 'folder',
  name,
  parent,
  size: 0,
  mtime: 0,
});

/** A file node of 3 bytes, as {@link folder} makes a folder. */
export const file = (n: number, name: string, parent: string | null): TreeNode => ({
  ...folder(n, name, parent),
  type: 'file',
  size: 3,
  fileId: id(1000 + n),
});
