/** Pure helpers of the browser: sorting, range selection, fresh names. No React, no API. */
import type { FolderTree, VaultEntry } from '../../shared/contract.js';
import { nameKey } from '../../shared/name-key.js';
import { compareKinds, compareNames } from '../../shared/name-order.js';

export type SortColumn = 'name' | 'size' | 'mtime';
export interface SortOrder {
  readonly column: SortColumn;
  readonly ascending: boolean;
}

/** Folders first (as file managers list them), then by the column; ties by name so the order is stable. */
export function sortEntries(entries: readonly VaultEntry[], order: SortOrder): VaultEntry[] {
  const sign = order.ascending ? 1 : -1;
  return [...entries].sort((a, b) => {
    const kind = compareKinds(a, b);
    if (kind !== 0) return kind;
    // Search results from several folders can share a name. A folder's listing comes sorted by name (the
    // engine's order is this one), so sorting it again by name takes one pass.
    const byName = compareNames(a.name, b.name) || a.path.localeCompare(b.path);
    if (order.column === 'name') return sign * byName;
    const byColumn = order.column === 'size' ? a.size - b.size : a.mtime - b.mtime;
    return sign * byColumn || byName;
  });
}

/** The paths of `rows` from index `from` to index `to`, either way round. */
export function pathsBetween(rows: readonly VaultEntry[], from: number, to: number): Set<string> {
  const [low, high] = from <= to ? [from, to] : [to, from];
  return new Set(rows.slice(Math.max(0, low), high + 1).map((row) => row.path));
}

/**
 * `base`, or `base 2`, `base 3`… : the first name none of `names` takes. Compared as the vault does ({@link nameKey}):
 * "NEW FOLDER" takes "New folder" there (creating that folder would give back the existing one).
 */
export function freeName(base: string, names: Iterable<string>): string {
  const taken = new Set([...names].map(nameKey));
  const free = (name: string): boolean => !taken.has(nameKey(name));
  if (free(base)) return base;
  for (let n = 2; ; n++) if (free(`${base} ${n}`)) return `${base} ${n}`;
}

/** Why items cannot all go into one folder: one takes a name already there, or two take the same name. */
export type NameClash = { readonly name: string; readonly with: 'there' | 'each-other' };

/**
 * The first of `moving` whose name a folder holding `there` would refuse (compared as the vault does, ignoring
 * case), because one of `there` or an earlier one of `moving` has it.
 */
export function findNameClash(moving: readonly string[], there: Iterable<string>): NameClash | undefined {
  const present = new Set([...there].map(nameKey));
  const coming = new Set<string>();
  for (const name of moving) {
    const key = nameKey(name);
    if (present.has(key)) return { name, with: 'there' };
    if (coming.has(key)) return { name, with: 'each-other' };
    coming.add(key);
  }
  return undefined;
}

/** True when `path` is `folder` or lies inside it. */
export function isWithin(path: string, folder: string): boolean {
  return path === folder || folder === '/' || path.startsWith(`${folder}/`);
}

/** Every folder of a tree, depth first, with its depth (the root is 0). */
export function flattenTree(tree: FolderTree, depth = 0): { folder: FolderTree; depth: number }[] {
  return [{ folder: tree, depth }, ...tree.children.flatMap((child) => flattenTree(child, depth + 1))];
}

/**
 * Whether two trees hold the same folders under the same names. Times are not compared: the window shows none of
 * a tree's, and adding files changes their folder's time.
 */
export function sameFolders(a: FolderTree, b: FolderTree): boolean {
  return (
    a.path === b.path &&
    a.name === b.name &&
    a.truncated === b.truncated &&
    a.children.length === b.children.length &&
    a.children.every((child, index) => {
      const other = b.children[index];
      return other !== undefined && sameFolders(child, other);
    })
  );
}
