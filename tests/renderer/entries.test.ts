import { describe, expect, it } from 'vitest';

import type { VaultEntry } from '../../src/shared/contract.js';
import {
  describeNameClash,
  findNameClash,
  folderLabel,
  freeName,
  pathsBetween,
  sortEntries,
} from '../../src/renderer/browser/entries.js';

const file = (name: string, size: number, mtime: number): VaultEntry => ({
  path: `/${name}`,
  name,
  type: 'file',
  size,
  mtime,
});
const folder = (name: string, mtime: number): VaultEntry => ({ ...file(name, 0, mtime), type: 'folder' });

// Neither the names' nor the sizes' order is the dates' order; two files share a date.
const ENTRIES: readonly VaultEntry[] = [
  file('a.txt', 300, 2025),
  file('b.txt', 100, 2023),
  folder('Zed', 2020),
  file('c.txt', 200, 2026),
  folder('Archive', 2030),
  file('d.txt', 400, 2023),
];
const names = (entries: readonly VaultEntry[]): string[] => entries.map((entry) => entry.name);

describe('sorting the rows by their modification time', () => {
  // Folders first either way; files of the same time by name either way.
  it.each([
    { ascending: true, expected: ['Zed', 'Archive', 'b.txt', 'd.txt', 'a.txt', 'c.txt'] },
    { ascending: false, expected: ['Archive', 'Zed', 'c.txt', 'a.txt', 'b.txt', 'd.txt'] },
  ])('ascending: $ascending', ({ ascending, expected }) => {
    expect(names(sortEntries(ENTRIES, { column: 'mtime', ascending }))).toEqual(expected);
  });

  it('leaves the rows it was given as they were', () => {
    const before = names(ENTRIES);
    sortEntries(ENTRIES, { column: 'mtime', ascending: false });
    expect(names(ENTRIES)).toEqual(before);
  });
});

describe('the rows a Shift+click or Shift+arrow selects', () => {
  const rows = sortEntries(ENTRIES, { column: 'name', ascending: true });

  it('every row from the anchor to the row clicked, both included, whichever is higher', () => {
    const down = pathsBetween(rows, 1, 4);
    expect([...down]).toEqual(rows.slice(1, 5).map((row) => row.path));
    expect(pathsBetween(rows, 4, 1)).toEqual(down);
  });

  it('the one row when the anchor is the row clicked', () => {
    expect([...pathsBetween(rows, 2, 2)]).toEqual([rows[2]?.path]);
  });
});

describe('names one folder cannot hold twice', () => {
  it('finds a name already there, compared as the vault compares them, and the name it met', () => {
    expect(findNameClash(['a.txt', 'Notes.TXT'], ['notes.txt'])).toEqual({
      name: 'Notes.TXT',
      taken: 'notes.txt',
      with: 'there',
    });
    // Final and medial sigma, which toLowerCase keeps apart, are one letter to a case-insensitive file system.
    expect(findNameClash(['ΟΔΟΣ'], ['οδοσ'])).toEqual({ name: 'ΟΔΟΣ', taken: 'οδοσ', with: 'there' });
    expect(findNameClash(['e\u0301'], ['\u00e9'])).toEqual({
      name: 'e\u0301',
      taken: '\u00e9',
      with: 'there',
    });
  });

  it('finds two moved items of one name', () => {
    expect(findNameClash(['q1.pdf', 'b', 'Q1.pdf'], ['c'])).toEqual({
      name: 'Q1.pdf',
      taken: 'q1.pdf',
      with: 'each-other',
    });
  });

  it('finds nothing when every name is free', () => {
    expect(findNameClash(['a', 'b'], ['c', 'ab'])).toBeUndefined();
  });

  it('says which names clash, pointing out a difference in case but not one of encoding alone', () => {
    expect(describeNameClash({ name: 'a.txt', taken: 'a.txt', with: 'there' }, 'Reports', 'move')).toBe(
      'Nothing was moved: “Reports” already holds an item called “a.txt”. Rename one of them, or choose another folder.',
    );
    expect(describeNameClash({ name: 'e\u0301', taken: '\u00e9', with: 'there' }, 'Reports', 'move')).toBe(
      'Nothing was moved: “Reports” already holds an item called “e\u0301”. Rename one of them, or choose another folder.',
    );
    expect(
      describeNameClash({ name: 'q1.pdf', taken: 'q1.pdf', with: 'each-other' }, 'Archive', 'move'),
    ).toBe(
      'Nothing was moved: two of the items are called “q1.pdf”, and one folder cannot hold both. Rename one of them first.',
    );
    expect(
      describeNameClash({ name: 'Q1.pdf', taken: 'q1.pdf', with: 'each-other' }, 'Archive', 'move'),
    ).toBe(
      'Nothing was moved: two of the items are called “q1.pdf” and “Q1.pdf”, which differ only in case, and one ' +
        'folder cannot hold both. Rename one of them first.',
    );
  });

  it('words a refused rename apart from a refused move', () => {
    expect(
      describeNameClash({ name: 'Todo.txt', taken: 'todo.txt', with: 'there' }, 'Personal', 'rename'),
    ).toBe(
      'Not renamed: “Personal” already holds “todo.txt”, which counts as the same name as “Todo.txt” (a folder ' +
        'cannot hold two names that differ only in case). Choose another name.',
    );
  });

  it('names a folder with the vault’s name and its path, so that two folders of one name are told apart', () => {
    expect(folderLabel('Personal', '/')).toBe('Personal');
    expect(folderLabel('Personal', '/Taxes/2024')).toBe('Personal/Taxes/2024');
  });

  it('numbers a new name past the names taken in the vault’s way, as the vault numbers a kept copy', () => {
    expect(freeName('οδοσ', ['ΟΔΟΣ', 'ΟΔΟΣ (2)'])).toBe('οδοσ (3)');
    expect(freeName('\u00e9t\u00e9', ['e\u0301te\u0301'])).toBe('\u00e9t\u00e9 (2)');
  });
});
