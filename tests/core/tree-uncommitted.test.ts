/**
 * Rows an add has placed but not committed (FORMAT.md 8.5): its later names, and new names, must not clash with
 * them, yet they are not in the vault until committed.
 */
import { describe, expect, it } from 'vitest';

import { AlreadyExistsError, NotFoundError } from '../../src/core/errors.js';
import { Tree } from '../../src/core/vault/tree.js';
import { file, folder } from '../helpers/tree-nodes.js';

const docs = folder(1, 'docs', null);
const held = folder(2, 'held', null);
const inHeld = file(3, 'in-held.txt', held.id);
const heldInDocs = file(4, 'report.txt', docs.id);

function treeWithHeldRows(): Tree {
  const tree = new Tree();
  tree.insert(docs);
  tree.insertUncommitted(held);
  tree.insertUncommitted(inHeld);
  tree.insertUncommitted(heldInDocs);
  return tree;
}

const names = (nodes: Iterable<{ name: string }>): string[] => [...nodes].map((node) => node.name);

describe('rows not committed yet', () => {
  it('take their names, but are not listed, counted or found by path', () => {
    const tree = treeWithHeldRows();
    expect(tree.child(null, 'HELD')).toBe(held);
    expect(() => {
      tree.insert(file(5, 'Report.txt', docs.id));
    }).toThrow(AlreadyExistsError);
    expect(names(tree.children(null))).toEqual(['docs']);
    expect(names(tree.children(docs.id))).toEqual([]);
    expect(names(tree.values())).toEqual(['docs']);
    expect(tree.size).toBe(1);
    expect(() => tree.resolve(['held', 'in-held.txt'])).toThrow(NotFoundError);
    expect(() => tree.resolve(['docs', 'report.txt'])).toThrow(NotFoundError);
    expect(tree.resolve(['docs'])).toBe(docs);
  });

  it('are in the vault once committed; taken out, they leave nothing held behind', () => {
    const tree = treeWithHeldRows();
    tree.markCommitted([held.id, inHeld.id]);
    expect(names(tree.children(null))).toEqual(['docs', 'held']);
    expect(tree.resolve(['held', 'in-held.txt'])).toBe(inHeld);
    expect(tree.size).toBe(3);

    tree.remove(heldInDocs.id);
    tree.insert(heldInDocs);
    expect(tree.resolve(['docs', 'report.txt'])).toBe(heldInDocs);
    expect(tree.size).toBe(4);
  });

  it('stay held when renamed in the tree', () => {
    const tree = treeWithHeldRows();
    tree.replace({ ...heldInDocs, name: 'renamed.txt' });
    expect(tree.child(docs.id, 'renamed.txt')?.name).toBe('renamed.txt');
    expect(names(tree.children(docs.id))).toEqual([]);
    expect(tree.size).toBe(1);
  });

  it('in front of a file they replace, leave that file listed and found until they commit', () => {
    const tree = new Tree();
    const old = file(5, 'plan.txt', null);
    const newer = { ...file(6, 'Plan.txt', null), size: 9 };
    tree.insert(old);
    tree.insertUncommitted(newer, old);
    expect(tree.child(null, 'plan.txt')).toBe(newer);
    expect([...tree.children(null)]).toEqual([old]);
    expect(tree.resolve(['PLAN.TXT'])).toBe(old);
    expect(tree.size).toBe(1);
    expect(() => {
      tree.replace({ ...newer, name: 'other.txt' });
    }).toThrow(/internal error/);

    // Taken out (a cancelled add): the file has its name back.
    tree.remove(newer.id);
    expect(tree.child(null, 'plan.txt')).toBe(old);

    // Committed: the new row is the file, the old one is gone.
    tree.insertUncommitted(newer, old);
    tree.markCommitted([newer.id]);
    expect([...tree.children(null)]).toEqual([newer]);
    expect(tree.resolve(['plan.txt'])).toBe(newer);
    expect(tree.get(old.id)).toBeUndefined();
    expect(tree.size).toBe(1);
  });
});
