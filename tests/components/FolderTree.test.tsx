// @vitest-environment jsdom
import './dom.js';

import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';

import { FolderTree } from '../../src/renderer/browser/FolderTree.js';
import { browse, drawnRows, withViewport } from './vault-browser.js';
import { file, folder, tree } from './fixtures.js';

withViewport();

/** / → Archive (→ 2023, 2024), Photos (→ Beach), Work. */
const TREE = tree('/', [
  tree('/Archive', [tree('/Archive/2023'), tree('/Archive/2024')]),
  tree('/Photos', [tree('/Photos/Beach')]),
  tree('/Work'),
]);

function showTree(current: string) {
  const onOpen = vi.fn();
  const props = { tree: TREE, vaultName: 'Personal', onOpen, onMove: vi.fn(), onAddFiles: vi.fn() };
  const shown = render(<FolderTree {...props} current={current} />);
  return {
    onOpen,
    showFolder: (path: string) => {
      shown.rerender(<FolderTree {...props} current={path} />);
    },
  };
}

const folders = () => screen.getByRole('treegrid', { name: 'Folders' });
const row = (name: string) => within(folders()).getByRole('row', { name });
/** Each folder row shown, as "name level" with ▸ (closed) or ▾ (open) and * for the one selected. */
const outline = () =>
  within(folders())
    .getAllByRole('row')
    .map((item) => {
      const expanded = item.getAttribute('aria-expanded');
      const mark = expanded === 'true' ? ' ▾' : expanded === 'false' ? ' ▸' : '';
      const selected = item.getAttribute('aria-selected') === 'true' ? ' *' : '';
      return `${item.getAttribute('aria-level') ?? '?'} ${item.textContent}${mark}${selected}`;
    });

describe('the folder tree', () => {
  it('shows the vault as the top folder, opens the way to the folder shown and selects it, with levels', () => {
    showTree('/Archive/2024');
    expect(outline()).toEqual(['1 Personal ▾', '2 Archive ▾', '3 2023', '3 2024 *', '2 Photos ▸', '2 Work']);
    // Position in its set, as a screen reader says "3 of 3".
    expect([row('Work').getAttribute('aria-posinset'), row('Work').getAttribute('aria-setsize')]).toEqual([
      '3',
      '3',
    ]);
  });

  it('expands and collapses a folder by its arrow button, and shows a folder when it is clicked', async () => {
    const { onOpen } = showTree('/');
    await userEvent.click(screen.getByRole('button', { name: 'Expand Photos' }));
    expect(outline()).toContain('3 Beach');
    // Opening a folder in the tree only shows what is inside it; the table stays where it was.
    expect(onOpen).not.toHaveBeenCalled();
    await userEvent.click(screen.getByRole('button', { name: 'Collapse Photos' }));
    expect(outline()).not.toContain('3 Beach');

    await userEvent.click(row('Work'));
    expect(onOpen).toHaveBeenCalledWith('/Work');
    // The folder shown already is not loaded again.
    onOpen.mockClear();
    await userEvent.click(row('Personal'));
    expect(onOpen).not.toHaveBeenCalled();
  });

  it('moves by the arrows without showing folders, opens and closes by Right and Left, and shows one by Enter', async () => {
    const { onOpen } = showTree('/');
    row('Personal').focus();
    await userEvent.keyboard('{ArrowDown}{ArrowDown}');
    expect(document.activeElement).toBe(row('Photos'));
    expect(onOpen).not.toHaveBeenCalled();

    // Right opens a closed folder, then goes to its first child; Left goes to the parent, then closes it.
    await userEvent.keyboard('{ArrowRight}');
    expect(row('Photos').getAttribute('aria-expanded')).toBe('true');
    expect(document.activeElement).toBe(row('Photos'));
    await userEvent.keyboard('{ArrowRight}');
    expect(document.activeElement).toBe(row('Beach'));
    await userEvent.keyboard('{ArrowLeft}');
    expect(document.activeElement).toBe(row('Photos'));
    await userEvent.keyboard('{ArrowLeft}');
    expect(row('Photos').getAttribute('aria-expanded')).toBe('false');

    await userEvent.keyboard('{ArrowUp}{Enter}');
    expect(onOpen).toHaveBeenCalledWith('/Archive');
  });

  it('goes to a folder whose name is typed', async () => {
    showTree('/');
    row('Personal').focus();
    await userEvent.keyboard('wo');
    expect(document.activeElement).toBe(row('Work'));
  });

  it('follows the folder shown, and selects none while searching', () => {
    const { showFolder } = showTree('/');
    showFolder('/Photos/Beach');
    expect(outline()).toContain('3 Beach *');
    expect(row('Photos').getAttribute('aria-expanded')).toBe('true');
    showFolder('');
    expect(outline().filter((line) => line.endsWith('*'))).toEqual([]);
  });
});

describe('the folder tree in the browser', () => {
  it('shows in the table the folder chosen in the tree, and follows a folder opened in the table', async () => {
    const listings: Record<string, readonly ReturnType<typeof file>[]> = {
      '/': [folder('/Archive'), folder('/Photos'), folder('/Work')],
      '/Photos': [folder('/Photos/Beach')],
      '/Photos/Beach': [file('/Photos/Beach/sea.jpg')],
    };
    const { requests } = await browse(
      listings['/'] ?? [],
      {
        'entries.list': ({ path }) => listings[path] ?? [],
      },
      TREE,
    );
    await userEvent.click(row('Photos'));
    await screen.findByText(/^1 item/);
    expect(requests('entries.list')).toContainEqual({ vaultId: 'v1', path: '/Photos' });
    expect(
      within(screen.getByRole('navigation', { name: 'Folder path' }))
        .getAllByRole('button')
        .map((b) => b.textContent),
    ).toEqual(['Personal', 'Photos']);

    screen.getByRole('grid', { name: 'Files' }).focus();
    await userEvent.keyboard('{Enter}');
    await screen.findByText(/^1 item/);
    await waitFor(() => {
      expect(drawnRows().map((r) => r.textContent)).toEqual([expect.stringContaining('sea.jpg')]);
    });
    expect(outline()).toContain('3 Beach *');
  });
});
