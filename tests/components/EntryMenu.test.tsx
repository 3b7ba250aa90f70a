// @vitest-environment jsdom
import './dom.js';

import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';

import { EntryMenu } from '../../src/renderer/browser/EntryMenu.js';

/** The menu for `count` selected entries; the props a test leaves out are those of one file, outside a search. */
function openMenu(props: Partial<Parameters<typeof EntryMenu>[0]> = {}) {
  const onAction = vi.fn();
  const onClose = vi.fn();
  render(
    <EntryMenu
      x={10}
      y={20}
      count={1}
      folder={false}
      canOpenWith
      inSearch={false}
      onAction={onAction}
      onClose={onClose}
      {...props}
    />,
  );
  return { onAction, onClose };
}

/** The menu's items as the user sees them: name, and whether it can be chosen. */
function offered(): string[] {
  return screen
    .getAllByRole('menuitem')
    .map((item) => `${item.textContent}${item.getAttribute('aria-disabled') === 'true' ? ' (off)' : ''}`);
}

describe('the actions menu', () => {
  it('offers everything for one file but "Show in folder", which only search results have', () => {
    openMenu();
    expect(screen.getByRole('menu', { name: 'Actions' })).toBeTruthy();
    expect(offered()).toEqual([
      'Open',
      'Open with default app',
      'Restore to…',
      'Rename',
      'Move to…',
      'New folder',
      'Delete…',
    ]);
  });

  it('for a search result, offers showing it in its folder', () => {
    openMenu({ inSearch: true });
    expect(offered()).toContain('Show in folder');
  });

  it('does not offer the default app for a folder', () => {
    openMenu({ folder: true });
    expect(offered()).toContain('Open with default app (off)');
    expect(offered()).toContain('Open');
  });

  it('does not offer the default app where the host cannot open files', () => {
    openMenu({ canOpenWith: false });
    expect(offered()).toContain('Open with default app (off)');
  });

  it('for several entries, offers only what acts on them all', () => {
    openMenu({ count: 3, inSearch: true });
    expect(offered()).toEqual([
      'Open (off)',
      'Open with default app (off)',
      'Show in folder (off)',
      'Restore to…',
      'Rename (off)',
      'Move to…',
      'New folder',
      'Delete…',
    ]);
  });

  it('on the folder’s background, offers only a new folder', () => {
    openMenu({ count: 0 });
    expect(offered().filter((item) => !item.endsWith('(off)'))).toEqual(['New folder']);
  });

  it('does the action chosen, and closes', async () => {
    const { onAction, onClose } = openMenu();
    await userEvent.click(screen.getByRole('menuitem', { name: 'Delete…' }));
    expect(onAction).toHaveBeenCalledWith('delete');
    expect(onClose).toHaveBeenCalledOnce();
  });

  it('does nothing for an item it does not offer', async () => {
    const { onAction } = openMenu({ count: 3 });
    await userEvent.click(screen.getByRole('menuitem', { name: 'Rename' }));
    expect(onAction).not.toHaveBeenCalled();
  });

  it('opens with the focus on its first item and is worked by the keyboard; Escape closes it', async () => {
    const { onAction, onClose } = openMenu();
    expect(document.activeElement).toBe(screen.getByRole('menuitem', { name: 'Open' }));
    await userEvent.keyboard('{ArrowDown}{ArrowDown}{Enter}');
    expect(onAction).toHaveBeenCalledWith('restore');
    onClose.mockClear();
    await userEvent.keyboard('{Escape}');
    expect(onClose).toHaveBeenCalledOnce();
  });
});
