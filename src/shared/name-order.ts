/**
 * The order a folder's entries are listed in, by the engine (the CLI's `ls`, the contract's listings) and by the
 * window: one order, so the window's sort of a listing it was sent already in that order costs one pass.
 */
const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/**
 * Names in natural order ("file 2" before "file 10"), ignoring case and accents, then told apart by them, and last
 * by code units (the collator ignores some characters, such as a zero-width space, altogether), so that the order
 * is total and a listing comes out the same at every unlock.
 */
export function compareNames(a: string, b: string): number {
  return collator.compare(a, b) || a.localeCompare(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** Folders before files, as file managers list them; 0 for two of a kind. */
export function compareKinds(
  a: { readonly type: 'file' | 'folder' },
  b: { readonly type: 'file' | 'folder' },
): number {
  return Number(a.type === 'file') - Number(b.type === 'file');
}

/** Folders first ({@link compareKinds}), then by name ({@link compareNames}). */
export function compareEntries(
  a: { readonly type: 'file' | 'folder'; readonly name: string },
  b: { readonly type: 'file' | 'folder'; readonly name: string },
): number {
  return compareKinds(a, b) || compareNames(a.name, b.name);
}
