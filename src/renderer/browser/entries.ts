/** Pure helpers of the browser: sorting, range selection, fresh names. No React, no API. */
import type { FolderTree, VaultEntry } from '../../shared/contract.js';
import { nameKey } from '../../shared/name-key.js';
import { plural } from '../../shared/plural.js';
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
 * `base`, or `base (2)`, `base (3)`… (numbered as the vault numbers a copy it keeps beside a name already there):
 * the first name none of `names` takes. Compared as the vault does ({@link nameKey}): "NEW FOLDER" takes
 * "New folder" there (creating that folder would give back the existing one).
 */
export function freeName(base: string, names: Iterable<string>): string {
  const taken = new Set([...names].map(nameKey));
  const free = (name: string): boolean => !taken.has(nameKey(name));
  if (free(base)) return base;
  for (let n = 2; ; n++) if (free(`${base} (${n})`)) return `${base} (${n})`;
}

/** What a list of entries is called in a title, a button or a status: the name of one, or "3 items". */
export function describeItems(entries: readonly VaultEntry[]): string {
  const [first] = entries;
  return entries.length === 1 && first ? `“${first.name}”` : plural(entries.length, 'item');
}

/**
 * A vault folder as the window names it in words: the vault's name for the top, else the vault's name and the
 * folder's path ("Personal/Taxes/2024"), so that two folders with one name in different places are told apart.
 */
export function folderLabel(vaultName: string, path: string): string {
  return path === '/' ? vaultName : `${vaultName}${path}`;
}

/**
 * Why items cannot all go into one folder: `name` (one of them) is taken by `taken`, a name already there or that
 * of an earlier item, which may differ from it in case (or in how its accents are encoded).
 */
export interface NameClash {
  readonly name: string;
  readonly taken: string;
  readonly with: 'there' | 'each-other';
}

/**
 * The first of `moving` whose name a folder holding `there` would refuse (compared as the vault does, ignoring
 * case), because one of `there` or an earlier one of `moving` has it.
 */
export function findNameClash(moving: readonly string[], there: Iterable<string>): NameClash | undefined {
  const present = new Map([...there].map((name) => [nameKey(name), name]));
  const coming = new Map<string, string>();
  for (const name of moving) {
    const key = nameKey(name);
    const existing = present.get(key);
    if (existing !== undefined) return { name, taken: existing, with: 'there' };
    const earlier = coming.get(key);
    if (earlier !== undefined) return { name, taken: earlier, with: 'each-other' };
    coming.set(key, name);
  }
  return undefined;
}

/** A change that gives items names in a folder. */
export type ChangeOfNames = 'move' | 'rename';

/** What a `change` refused for `clash` in the folder called `place` says: which names, and what to do. */
export function describeNameClash(clash: NameClash, place: string, change: ChangeOfNames): string {
  // Two encodings of one accent look the same on screen: only a difference a reader can see is pointed out.
  const alike = clash.name.normalize('NFC') === clash.taken.normalize('NFC');
  if (clash.with === 'there') {
    const held = alike
      ? `an item called “${clash.name}”`
      : `“${clash.taken}”, which counts as the same name as “${clash.name}” (a folder cannot hold two names that differ only in case)`;
    return change === 'move'
      ? `Nothing was moved: “${place}” already holds ${held}. Rename one of them, or choose another folder.`
      : `Not renamed: “${place}” already holds ${held}. Choose another name.`;
  }
  const called = alike
    ? `are called “${clash.name}”,`
    : `are called “${clash.taken}” and “${clash.name}”, which differ only in case,`;
  return `Nothing was moved: two of the items ${called} and one folder cannot hold both. Rename one of them first.`;
}

/** True when `path` is `folder` or lies inside it. */
export function isWithin(path: string, folder: string): boolean {
  return path === folder || folder === '/' || path.startsWith(`${folder}/`);
}

/** Where `path` is once the entry at `from` went to `to`: its new path when it is that entry or inside it. */
export function movedPath(path: string, from: string, to: string): string {
  return isWithin(path, from) ? to + path.slice(from.length) : path;
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
