// @vitest-environment jsdom
import './dom.js';

import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';

import { formatDate } from '../../src/renderer/format.js';
import { jobEvent } from '../../src/renderer/store.js';
import type { VaultEntry } from '../../src/shared/contract.js';
import { Refusal } from './fake-api.js';
import { browse, drawnRows, itemsStatus, withViewport } from './vault-browser.js';
import { file, folder, settle, VAULT } from './fixtures.js';

withViewport();

const DAY = 86_400_000;
/** Listed in the engine's order (by name); the table shows folders first. */
const ROOT = [
  folder('/Archive', 2 * DAY),
  file('/budget.xlsx', 200, 1 * DAY),
  file('/notes.txt', 1500, 3 * DAY),
  folder('/Photos', 1 * DAY),
  file('/todo.txt', 30_000, 2 * DAY),
];
const ARCHIVE = [file('/Archive/2023.zip', 5), file('/Archive/2024.zip', 6)];

/** f00.txt … f29.txt: three screens of rows. */
const THIRTY = Array.from({ length: 30 }, (_, i) => file(`/f${String(i).padStart(2, '0')}.txt`));

const grid = () => screen.getByRole('grid', { name: 'Files' });
const nameOf = (row: HTMLElement) => within(row).getAllByRole('gridcell', { hidden: true })[0]?.textContent;
const names = () => drawnRows().map(nameOf);
const selectedNames = () =>
  drawnRows()
    .filter((row) => row.getAttribute('aria-selected') === 'true')
    .map(nameOf);
/** The row the grid's focus is on (its aria-activedescendant), by name. */
function focusedName(): string | null | undefined {
  const id = grid().getAttribute('aria-activedescendant');
  const row = id === null ? null : document.getElementById(id);
  return row === null ? null : nameOf(row);
}
const row = (name: string) => {
  const found = drawnRows().find((candidate) => nameOf(candidate) === name);
  if (found === undefined) throw new Error(`no row ${name} drawn`);
  return found;
};
const status = itemsStatus;

/** The root is ROOT, /Archive holds ARCHIVE; `listing` overrides what a folder holds. */
function listing(extra: Record<string, readonly VaultEntry[]> = {}) {
  const folders: Record<string, readonly VaultEntry[]> = { '/': ROOT, '/Archive': ARCHIVE, ...extra };
  return ({ path }: { path: string }) => folders[path] ?? [];
}

describe('the rows of a folder', () => {
  it('lists folders first, each with its size (a dash for a folder) and its modified time', async () => {
    await browse(ROOT);
    await screen.findByText(/^5 items/);
    expect(names()).toEqual(['Archive', 'Photos', 'budget.xlsx', 'notes.txt', 'todo.txt']);
    const cells = (name: string) =>
      within(row(name))
        .getAllByRole('gridcell')
        .map((cell) => cell.textContent);
    expect(cells('notes.txt')).toEqual(['notes.txt', '1.5 kB', formatDate(3 * DAY)]);
    expect(cells('Photos')).toEqual(['Photos', '—', formatDate(DAY)]);
    // The exact size is a hover away.
    expect(within(row('notes.txt')).getByText('1.5 kB').getAttribute('title')).toBe('1,500 bytes');
  });

  it('keeps only a few dozen of 5,000 rows in the page, and draws the last when End goes there', async () => {
    const many = Array.from({ length: 5000 }, (_, i) => file(`/f${String(i).padStart(4, '0')}.txt`));
    await browse(many);
    await screen.findByText(/^5,000 items/);
    expect(grid().getAttribute('aria-rowcount')).toBe('5001');
    expect(drawnRows().length).toBeGreaterThan(0);
    expect(drawnRows().length).toBeLessThan(40);
    grid().focus();
    await userEvent.keyboard('{End}');
    await waitFor(() => {
      expect(names()).toContain('f4999.txt');
    });
    expect(names()).not.toContain('f0000.txt');
    expect(drawnRows().length).toBeLessThan(40);
    expect(focusedName()).toBe('f4999.txt');
    expect(selectedNames()).toEqual(['f4999.txt']);
  });

  it('says an empty folder is empty, and draws no table', async () => {
    await browse([]);
    expect(await screen.findByText('This folder is empty.')).toBeTruthy();
    expect(screen.queryByRole('grid')).toBeNull();
    expect(status()).toBe('0 items');
  });
});

describe('sorting', () => {
  it('sorts by the column clicked, ascending then descending, folders always first, and says so by aria-sort', async () => {
    await browse(ROOT);
    await screen.findByText(/^5 items/);
    const header = (name: string) => screen.getByRole('columnheader', { name });
    expect(header('Name').getAttribute('aria-sort')).toBe('ascending');
    expect(header('Size').getAttribute('aria-sort')).toBe('none');

    await userEvent.click(screen.getByRole('button', { name: 'Size' }));
    expect(header('Size').getAttribute('aria-sort')).toBe('ascending');
    expect(header('Name').getAttribute('aria-sort')).toBe('none');
    expect(names()).toEqual(['Archive', 'Photos', 'budget.xlsx', 'notes.txt', 'todo.txt']);

    await userEvent.click(screen.getByRole('button', { name: 'Size' }));
    expect(header('Size').getAttribute('aria-sort')).toBe('descending');
    expect(names()).toEqual(['Archive', 'Photos', 'todo.txt', 'notes.txt', 'budget.xlsx']);

    await userEvent.click(screen.getByRole('button', { name: 'Modified' }));
    expect(header('Modified').getAttribute('aria-sort')).toBe('ascending');
    expect(names()).toEqual(['Photos', 'Archive', 'budget.xlsx', 'todo.txt', 'notes.txt']);

    await userEvent.click(screen.getByRole('button', { name: 'Name' }));
    await userEvent.click(screen.getByRole('button', { name: 'Name' }));
    expect(header('Name').getAttribute('aria-sort')).toBe('descending');
    expect(names()).toEqual(['Photos', 'Archive', 'todo.txt', 'notes.txt', 'budget.xlsx']);
  });
});

describe('the column headers from the keyboard', () => {
  it('sorts by Enter or Space on a header, leaving the rows and the folder as they were', async () => {
    const { requests } = await browse(ROOT, { 'entries.list': listing() });
    await screen.findByText(/^5 items/);
    await userEvent.click(row('Archive'));
    const size = screen.getByRole('button', { name: 'Size' });
    size.focus();
    await userEvent.keyboard('{Enter}');
    expect(screen.getByRole('columnheader', { name: 'Size' }).getAttribute('aria-sort')).toBe('ascending');
    await userEvent.keyboard(' ');
    expect(screen.getByRole('columnheader', { name: 'Size' }).getAttribute('aria-sort')).toBe('descending');
    // The table's own keys are not the header's: nothing opened, went up, moved or was asked to be deleted.
    await userEvent.keyboard('{ArrowDown}{Backspace}{Delete}');
    expect(document.activeElement).toBe(size);
    expect(selectedNames()).toEqual(['Archive']);
    expect(requests('entries.list').map(({ path }) => path)).toEqual(['/']);
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('gives the keyboard to the table when the rows’ scroller takes it (a click below the rows, a right-click)', async () => {
    await browse(ROOT);
    await screen.findByText(/^5 items/);
    await userEvent.click(row('Archive'));
    act(() => {
      screen.getByTestId('grid-body').focus();
    });
    await waitFor(() => {
      expect(document.activeElement).toBe(screen.getByRole('grid'));
    });
    await userEvent.keyboard('{ArrowDown}');
    expect(focusedName()).toBe('Photos');
    expect(selectedNames()).toEqual(['Photos']);
  });
});

describe('selecting with the mouse', () => {
  it('selects a row by click, adds or removes one by Ctrl-click, and a range by Shift-click', async () => {
    const user = userEvent.setup();
    await browse(ROOT);
    await screen.findByText(/^5 items/);
    await user.click(row('budget.xlsx'));
    expect(selectedNames()).toEqual(['budget.xlsx']);
    expect(status()).toContain('1 selected (200 B)');

    await user.keyboard('{Control>}');
    await user.click(row('todo.txt'));
    await user.keyboard('{/Control}');
    expect(selectedNames()).toEqual(['budget.xlsx', 'todo.txt']);
    expect(status()).toContain('2 selected (30.2 kB)');

    await user.keyboard('{Control>}');
    await user.click(row('budget.xlsx'));
    await user.keyboard('{/Control}');
    expect(selectedNames()).toEqual(['todo.txt']);

    // The range runs from the row last clicked without Shift (budget.xlsx, Ctrl-clicked) to this one.
    await user.keyboard('{Shift>}');
    await user.click(row('Photos'));
    await user.keyboard('{/Shift}');
    expect(selectedNames()).toEqual(['Photos', 'budget.xlsx']);
    expect(focusedName()).toBe('Photos');

    await user.click(row('notes.txt'));
    expect(selectedNames()).toEqual(['notes.txt']);
  });
});

describe('the keyboard in the table', () => {
  async function browseThirty() {
    await browse(THIRTY);
    await screen.findByText(/^30 items/);
    grid().focus();
  }

  it('moves the selection with the arrows, extends it with Shift, and goes to the ends with Home and End', async () => {
    await browseThirty();
    await userEvent.keyboard('{ArrowDown}');
    // Nothing was selected: the first ArrowDown goes from the first row to the second.
    expect(selectedNames()).toEqual(['f01.txt']);
    await userEvent.keyboard('{ArrowDown}{ArrowDown}{ArrowUp}');
    expect(selectedNames()).toEqual(['f02.txt']);
    await userEvent.keyboard('{Shift>}{ArrowDown}{ArrowDown}{/Shift}');
    expect(selectedNames()).toEqual(['f02.txt', 'f03.txt', 'f04.txt']);
    expect(focusedName()).toBe('f04.txt');
    await userEvent.keyboard('{Shift>}{ArrowUp}{ArrowUp}{ArrowUp}{/Shift}');
    expect(selectedNames()).toEqual(['f01.txt', 'f02.txt']);

    await userEvent.keyboard('{End}');
    await waitFor(() => {
      expect(focusedName()).toBe('f29.txt');
    });
    expect(selectedNames()).toEqual(['f29.txt']);
    await userEvent.keyboard('{Home}');
    await waitFor(() => {
      expect(focusedName()).toBe('f00.txt');
    });
    expect(selectedNames()).toEqual(['f00.txt']);
  });

  it('moves a screenful less one row by PageDown and PageUp, and stops at the last row', async () => {
    await browseThirty();
    // Ten rows are in view: a page is nine, so the row at the bottom stays in sight.
    await userEvent.keyboard('{PageDown}');
    expect(focusedName()).toBe('f09.txt');
    expect(selectedNames()).toEqual(['f09.txt']);
    await userEvent.keyboard('{PageDown}{PageDown}');
    await waitFor(() => {
      expect(focusedName()).toBe('f27.txt');
    });
    await userEvent.keyboard('{PageDown}');
    await waitFor(() => {
      expect(focusedName()).toBe('f29.txt');
    });
    await userEvent.keyboard('{PageUp}');
    await waitFor(() => {
      expect(focusedName()).toBe('f20.txt');
    });
    expect(selectedNames()).toEqual(['f20.txt']);
  });

  it('selects all by Ctrl+A, moves without selecting by Ctrl+arrows, toggles by Ctrl+Space, clears by Escape', async () => {
    await browseThirty();
    await userEvent.keyboard('{Control>}a{/Control}');
    expect(status()).toBe('30 items · 30 selected (300 B)');
    await userEvent.keyboard('{Escape}');
    expect(status()).toBe('30 items');

    await userEvent.keyboard('{ArrowDown}');
    await userEvent.keyboard('{Control>}{ArrowDown}{ArrowDown}{/Control}');
    expect(focusedName()).toBe('f03.txt');
    expect(selectedNames()).toEqual(['f01.txt']);
    await userEvent.keyboard('{Control>}[Space]{/Control}');
    expect(selectedNames()).toEqual(['f01.txt', 'f03.txt']);
    await userEvent.keyboard('{Control>}[Space]{/Control}');
    expect(selectedNames()).toEqual(['f01.txt']);
    // Space alone selects the focused row only.
    await userEvent.keyboard('{Control>}{ArrowDown}{/Control}[Space]');
    expect(selectedNames()).toEqual(['f04.txt']);
  });
});

describe('opening', () => {
  it('opens a folder by Enter and goes back up by Backspace or Alt+Up, with the folder left selected', async () => {
    const { requests } = await browse(ROOT, { 'entries.list': listing() });
    await screen.findByText(/^5 items/);
    grid().focus();
    await userEvent.keyboard('{Enter}');
    await screen.findByText(/^2 items/);
    expect(requests('entries.list')).toContainEqual({ vaultId: 'v1', path: '/Archive' });
    expect(names()).toEqual(['2023.zip', '2024.zip']);
    // The new folder's table has the keyboard: no click is needed to go on.
    expect(document.activeElement).toBe(grid());

    await userEvent.keyboard('{Backspace}');
    await screen.findByText(/^5 items/);
    expect(selectedNames()).toEqual(['Archive']);
    expect(focusedName()).toBe('Archive');

    await userEvent.dblClick(row('Archive'));
    await screen.findByText(/^2 items/);
    grid().focus();
    await userEvent.keyboard('{Alt>}{ArrowUp}{/Alt}');
    await screen.findByText(/^5 items/);
    expect(selectedNames()).toEqual(['Archive']);
  });

  it('previews a file by Enter or a double-click, decrypting it in memory', async () => {
    const { requests } = await browse(ROOT, {
      'preview.read': ({ length }) => ({ bytes: new Uint8Array(length).fill(0x61), fileSize: length }),
    });
    await screen.findByText(/^5 items/);
    await userEvent.click(row('notes.txt'));
    await userEvent.keyboard('{Enter}');
    const preview = await screen.findByRole('dialog', { name: 'Preview of notes.txt' });
    expect(requests('preview.read')).toContainEqual(expect.objectContaining({ path: '/notes.txt' }));
    await userEvent.click(within(preview).getByRole('button', { name: 'Close' }));
    expect(screen.queryByRole('dialog')).toBeNull();

    await userEvent.dblClick(row('todo.txt'));
    expect(await screen.findByRole('dialog', { name: 'Preview of todo.txt' })).toBeTruthy();
  });
});

describe('renaming in place', () => {
  /** Browses ROOT, selects `name` and presses F2; resolves with the name field once it has the focus. */
  async function renameByF2(name: string, handlers: Parameters<typeof browse>[1] = {}) {
    const browsed = await browse(ROOT, handlers);
    await screen.findByText(/^5 items/);
    await userEvent.click(row(name));
    await userEvent.keyboard('{F2}');
    const field = screen.getByRole<HTMLInputElement>('textbox', { name: `New name for ${name}` });
    await waitFor(() => {
      expect(document.activeElement).toBe(field);
    });
    return { ...browsed, field };
  }

  it('edits the name without its extension selected, and renames by Enter, selecting the renamed file', async () => {
    let root = ROOT;
    const { field, requests } = await renameByF2('notes.txt', {
      'entries.list': () => root,
      'entries.rename': ({ newName }) => {
        root = ROOT.map((entry) => (entry.name === 'notes.txt' ? file(`/${newName}`, 1500) : entry));
        return file(`/${newName}`, 1500);
      },
    });
    expect(field.value).toBe('notes.txt');
    expect([field.selectionStart, field.selectionEnd]).toEqual([0, 'notes'.length]);
    // Typing replaces the selected stem and keeps the extension.
    await userEvent.keyboard('ideas{Enter}');
    expect(requests('entries.rename')).toEqual([{ vaultId: 'v1', path: '/notes.txt', newName: 'ideas.txt' }]);
    await waitFor(() => {
      expect(selectedNames()).toEqual(['ideas.txt']);
    });
    expect(screen.queryByRole('textbox', { name: /^New name for/ })).toBeNull();
    expect(document.activeElement).toBe(grid());
  });

  it('cancels by Escape, asking nothing, and gives the keyboard back to the table', async () => {
    const { requests } = await renameByF2('notes.txt', { 'entries.rename': () => file('/x') });
    await userEvent.keyboard('changed{Escape}');
    expect(screen.queryByRole('textbox', { name: 'New name for notes.txt' })).toBeNull();
    expect(names()).toContain('notes.txt');
    expect(document.activeElement).toBe(grid());
    // The table's keys work again: Enter was the rename field's, now it is the table's.
    await userEvent.keyboard('{ArrowDown}');
    expect(focusedName()).toBe('todo.txt');
    expect(requests('entries.rename')).toEqual([]);
  });

  it('keeps the field and what was typed when another window takes the keyboard', async () => {
    const { requests, field } = await renameByF2('notes.txt', { 'entries.rename': () => file('/x') });
    await userEvent.keyboard('half');
    const hasFocus = vi.spyOn(document, 'hasFocus').mockReturnValue(false);
    fireEvent.blur(field);
    hasFocus.mockRestore();
    await settle();
    expect(screen.getByRole<HTMLInputElement>('textbox', { name: 'New name for notes.txt' }).value).toBe(
      'half.txt',
    );
    expect(requests('entries.rename')).toEqual([]);
  });

  it('takes leaving the field with the refused name as a cancel, not another try', async () => {
    const { requests } = await renameByF2('notes.txt', {
      'entries.rename': () => new Refusal('ALREADY_EXISTS'),
    });
    await userEvent.keyboard('todo{Enter}');
    const again = await screen.findByRole<HTMLInputElement>('textbox', { name: 'New name for notes.txt' });
    await waitFor(() => {
      expect(document.activeElement).toBe(again);
    });
    // A click elsewhere leaves it as it was refused.
    await userEvent.click(row('budget.xlsx'));
    await waitFor(() => {
      expect(screen.queryByRole('textbox', { name: /^New name for/ })).toBeNull();
    });
    expect(requests('entries.rename')).toHaveLength(1);
    expect(names()).toContain('notes.txt');
    expect(selectedNames()).toEqual(['budget.xlsx']);
  });

  it('says in words when the name is taken or cannot be used, and keeps the field with what was typed', async () => {
    const { field } = await renameByF2('notes.txt', {
      'entries.rename': ({ newName }) =>
        new Refusal(newName === 'todo.txt' ? 'ALREADY_EXISTS' : 'INVALID_NAME'),
    });
    await userEvent.clear(field);
    await userEvent.keyboard('todo.txt{Enter}');
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Not renamed: “Personal” already holds an item called “todo.txt”. Choose another name.',
    );

    // Still notes.txt, and its field is back, with the refused name and its stem selected, to be mended rather than typed again.
    const again = await screen.findByRole<HTMLInputElement>('textbox', { name: 'New name for notes.txt' });
    await waitFor(() => {
      expect(document.activeElement).toBe(again);
    });
    expect(again.value).toBe('todo.txt');
    expect([again.selectionStart, again.selectionEnd]).toEqual([0, 'todo'.length]);
    await userEvent.clear(again);
    await userEvent.keyboard('..{Enter}');
    await waitFor(() => {
      expect(screen.getByRole('alert').textContent).toBe(
        'That name cannot be used. Choose one that is not "." or "..", has none of / \\ < > : " | ? *, does not ' +
          'end in a dot or a space, has no invisible control characters, is not a device name of Windows (such as ' +
          'CON or NUL) and is at most 255 bytes long.',
      );
    });
  });
});

describe('delete and the context menu', () => {
  it('asks before deleting the selection by the Delete key, and does nothing with nothing selected', async () => {
    const { requests } = await browse(ROOT, { 'entries.remove': () => ({ removed: 2 }) });
    await screen.findByText(/^5 items/);
    grid().focus();
    await userEvent.keyboard('{Delete}');
    expect(screen.queryByRole('alertdialog')).toBeNull();
    await userEvent.keyboard('{End}{Shift>}{ArrowUp}{/Shift}{Delete}');
    const dialog = await screen.findByRole('alertdialog', { name: 'Delete 2 items?' });
    expect(requests('entries.remove')).toEqual([]);
    await userEvent.click(within(dialog).getByRole('button', { name: 'Delete 2 items' }));
    expect(requests('entries.remove')).toEqual([{ vaultId: 'v1', paths: ['/notes.txt', '/todo.txt'] }]);
  });

  it('right-click on an unselected row selects it alone; on a selected row keeps the whole selection', async () => {
    const user = userEvent.setup();
    await browse(ROOT);
    await screen.findByText(/^5 items/);
    await user.click(row('budget.xlsx'));
    await user.pointer({ keys: '[MouseRight]', target: row('todo.txt') });
    expect(selectedNames()).toEqual(['todo.txt']);
    await user.click(await screen.findByRole('menuitem', { name: 'Delete…' }));
    expect(await screen.findByRole('alertdialog', { name: 'Delete “todo.txt”?' })).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Cancel' }));

    await user.keyboard('{Control>}');
    await user.click(row('notes.txt'));
    await user.keyboard('{/Control}');
    await user.pointer({ keys: '[MouseRight]', target: row('notes.txt') });
    expect(selectedNames()).toEqual(['notes.txt', 'todo.txt']);
    await user.click(await screen.findByRole('menuitem', { name: 'Delete…' }));
    expect(await screen.findByRole('alertdialog', { name: 'Delete 2 items?' })).toBeTruthy();
  });

  it('opens the menu of the focused row by the ContextMenu key and by Shift+F10', async () => {
    await browse(ROOT);
    await screen.findByText(/^5 items/);
    grid().focus();
    await userEvent.keyboard('{ArrowDown}{ContextMenu}');
    const menu = await screen.findByRole('menu', { name: 'Actions' });
    // One folder: Rename is offered; a folder is not opened with another app.
    expect(within(menu).getByRole('menuitem', { name: 'Rename' }).getAttribute('aria-disabled')).toBeNull();
    await userEvent.keyboard('{Escape}');
    // Closed, the menu gives the keyboard back to the table.
    await waitFor(() => {
      expect(document.activeElement).toBe(grid());
    });
    expect(screen.queryByRole('menu')).toBeNull();
    await userEvent.keyboard('{Shift>}{F10}{/Shift}');
    await userEvent.click(await screen.findByRole('menuitem', { name: 'Rename' }));
    expect(screen.getByRole('textbox', { name: 'New name for Photos' })).toBeTruthy();
  });

  it('right-click on the table’s background clears the selection and offers only what needs none', async () => {
    const user = userEvent.setup();
    await browse(ROOT);
    await screen.findByText(/^5 items/);
    await user.click(row('notes.txt'));
    await user.pointer({ keys: '[MouseRight]', target: grid() });
    const menu = await screen.findByRole('menu', { name: 'Actions' });
    expect(selectedNames()).toEqual([]);
    const enabled = within(menu)
      .getAllByRole('menuitem')
      .filter((item) => item.getAttribute('aria-disabled') !== 'true')
      .map((item) => item.textContent);
    expect(enabled).toEqual(['New folder']);
  });
});

describe('search results in the table', () => {
  it('says when no name matches, and what search looks at', async () => {
    await browse(ROOT, { 'entries.search': () => [] });
    await screen.findByText(/^5 items/);
    await userEvent.type(screen.getByRole('searchbox', { name: 'Search this vault' }), ' zzz ');
    expect(await screen.findByText('No names match “zzz”.')).toBeTruthy();
    expect(
      screen.getByText('Search looks at the names of every file and folder in this vault.'),
    ).toBeTruthy();
    expect(screen.queryByRole('grid')).toBeNull();
  });
});

describe('while an add brings files in', () => {
  /** a00.txt … : files that sort above THIRTY's. */
  const above = (count: number) =>
    Array.from({ length: count }, (_, i) => file(`/a${String(i).padStart(2, '0')}.txt`));

  /** Browses `rows`; `arrive(more)` lists `more` above them, as an add's committed rows do, and waits for them. */
  async function browseWhileAdding(rows: readonly VaultEntry[]) {
    let listed = rows;
    const browsed = await browse(rows, { 'entries.list': () => listed });
    await screen.findByText(`${rows.length} items`, { exact: false });
    let told = 0;
    const arrive = async (more: readonly VaultEntry[]) => {
      listed = [...more, ...rows];
      act(() => {
        jobEvent({
          jobId: 'j1',
          vaultId: VAULT.vaultId,
          kind: 'add',
          type: 'committed',
          filesFinished: ++told,
        });
      });
      await screen.findByText(`${listed.length} items`, { exact: false });
    };
    return { ...browsed, arrive };
  }

  it('keeps the focus and the anchor of a Shift selection on their files as rows come in above them', async () => {
    const { arrive } = await browseWhileAdding(THIRTY);
    grid().focus();
    await userEvent.keyboard('{ArrowDown}{ArrowDown}{Shift>}{ArrowDown}{/Shift}');
    expect(selectedNames()).toEqual(['f02.txt', 'f03.txt']);
    await arrive(above(3));
    expect(focusedName()).toBe('f03.txt');
    await userEvent.keyboard('{Shift>}{ArrowDown}{/Shift}');
    expect(selectedNames()).toEqual(['f02.txt', 'f03.txt', 'f04.txt']);
    // Moved without selecting (Ctrl), the focus stays where it was put too.
    await userEvent.keyboard('{Control>}{ArrowDown}{ArrowDown}{/Control}');
    await arrive(above(5));
    expect(focusedName()).toBe('f06.txt');
    await userEvent.keyboard('[Space]');
    expect(selectedNames()).toEqual(['f06.txt']);
  });

  it('keeps a name being typed in place though the rows coming in push its row out of view', async () => {
    const { arrive } = await browseWhileAdding(THIRTY);
    await userEvent.click(row('f02.txt'));
    await userEvent.keyboard('{F2}');
    const field = await screen.findByRole<HTMLInputElement>('textbox', { name: 'New name for f02.txt' });
    await waitFor(() => {
      expect(document.activeElement).toBe(field);
    });
    await userEvent.keyboard('plan');
    await arrive(above(40));
    expect(screen.getByRole<HTMLInputElement>('textbox', { name: 'New name for f02.txt' })).toBe(field);
    expect(document.activeElement).toBe(field);
    await userEvent.keyboard('-b');
    expect(field.value).toBe('plan-b.txt');
  });
});
