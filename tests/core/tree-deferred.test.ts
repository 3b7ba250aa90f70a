/**
 * The tree an unlock fills from the snapshot: the root's entries at once, the rest held back until something other
 * than a listing of the root needs them (Tree.deferAllButRoot), so the first rows of a large vault come first.
 */
import { describe, expect, it } from 'vitest';

import { Tree } from '../../src/core/vault/tree.js';
import { file, folder } from '../helpers/tree-nodes.js';

const docs = folder(1, 'docs', null);
const top = file(2, 'top.txt', null);
const inner = file(3, 'inner.txt', docs.id);

/** A tree holding the root's entries, with `inner` held back; counts how often the rest was added and dropped. */
function deferredTree(): { tree: Tree; added: () => number; dropped: () => number } {
  const tree = new Tree();
  tree.insert(docs);
  tree.insert(top);
  let added = 0;
  let dropped = 0;
  tree.deferAllButRoot(
    () => {
      added++;
      tree.insert(inner);
    },
    () => {
      dropped++;
    },
  );
  return { tree, added: () => added, dropped: () => dropped };
}

describe('a tree with all but the root held back', () => {
  it('lists the root and gives its entries paths without adding the rest', () => {
    const { tree, added } = deferredTree();
    expect(tree.childrenOf(null).map((node) => tree.pathOf(node))).toEqual(['/docs', '/top.txt']);
    expect(tree.resolve([])).toBeNull();
    expect(added()).toBe(0);
  });

  const needs: [string, (tree: Tree) => unknown][] = [
    ['a folder below the root', (tree) => tree.childrenOf(docs.id)],
    ['a name looked up, even in the root', (tree) => tree.child(null, 'new.txt')],
    ['a path resolved', (tree) => tree.resolve(['docs', 'inner.txt'])],
    ['an id looked up', (tree) => tree.get(inner.id)],
    ['every entry', (tree) => [...tree.values()]],
    ['the count', (tree) => tree.size],
    [
      'an insert',
      (tree) => {
        tree.insert(file(4, 'new.txt', null));
      },
    ],
    [
      'a removal',
      (tree) => {
        tree.remove(top.id);
      },
    ],
  ];
  it.each(needs)('adds the rest, once, for %s', (_need, use) => {
    const { tree, added } = deferredTree();
    use(tree);
    use(tree);
    expect(added()).toBe(1);
    expect(tree.get(inner.id)).toEqual(inner);
    expect(tree.pathOf(inner)).toBe('/docs/inner.txt');
  });

  it('drops the rest unread when cleared (a lock before anything needed it), and not again', () => {
    const { tree, added, dropped } = deferredTree();
    tree.clear();
    tree.clear();
    expect([added(), dropped()]).toEqual([0, 1]);
    expect(tree.size).toBe(0);
  });

  it('does not drop what was added', () => {
    const { tree, dropped } = deferredTree();
    expect(tree.size).toBe(3);
    tree.clear();
    expect(dropped()).toBe(0);
  });
});
