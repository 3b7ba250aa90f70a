// @vitest-environment jsdom
import './dom.js';

import { act, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import type { ChooserEntry, ChooserRequest, PreviewChooser as Chooser } from '../../src/preview/bridge.js';
import { PreviewChooser } from '../../src/renderer/components/PreviewChooser.js';

/** The server's folders below the root /home/u. */
const FOLDERS: Record<string, readonly ChooserEntry[]> = {
  '/home/u': [
    { name: 'Docs', type: 'folder' },
    { name: 'Empty', type: 'folder' },
    { name: 'a.txt', type: 'file' },
    { name: 'b.txt', type: 'file' },
  ],
  '/home/u/Docs': [{ name: 'letter.pdf', type: 'file' }],
  '/home/u/Empty': [],
};
/** Entries past the server's listing limit, by folder. */
const OMITTED: Record<string, number> = { '/home/u/Docs': 2_500 };

const folderRequest: ChooserRequest = {
  chooserId: 'c1',
  kind: 'folder',
  purpose: 'restore-destination',
  roots: ['/home/u'],
};
const filesRequest: ChooserRequest = { ...folderRequest, kind: 'files', purpose: 'add-files' };

/** A chooser over FOLDERS: `ask` sends it a request as the server does; `answers` are what the page answered. */
function fakeChooser(pending: ChooserRequest | null = null) {
  const listeners = new Set<(request: ChooserRequest) => void>();
  const answers: { chooserId: string; paths: readonly string[] | null }[] = [];
  const chooser: Chooser = {
    onRequest(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    pending: () => Promise.resolve({ ok: true, value: pending }),
    list(path) {
      const entries = FOLDERS[path];
      return Promise.resolve(
        entries === undefined
          ? { ok: false, code: 'NOT_FOUND', message: `${path} cannot be listed.` }
          : {
              ok: true,
              value: {
                path,
                parent: path === '/home/u' ? null : '/home/u',
                entries,
                omitted: OMITTED[path] ?? 0,
              },
            },
      );
    },
    answer(chooserId, paths) {
      answers.push({ chooserId, paths });
      return Promise.resolve({ ok: true, value: null });
    },
  };
  const ask = async (request: ChooserRequest) => {
    await act(async () => {
      for (const listener of listeners) listener(request);
      await Promise.resolve();
    });
  };
  return { chooser, ask, answers };
}

const item = (name: string) => screen.getByRole('button', { name });

describe('the preview’s chooser', () => {
  it('shows nothing until a dialog is asked for, then lists the first root, and chooses the folder it shows', async () => {
    const { chooser, ask, answers } = fakeChooser();
    render(<PreviewChooser chooser={chooser} />);
    await act(() => Promise.resolve());
    expect(screen.queryByRole('dialog')).toBeNull();

    await ask(folderRequest);
    const dialog = await screen.findByRole('dialog', { name: 'Choose a folder' });
    expect(
      within(dialog)
        .getAllByRole('listitem')
        .map((entry) => entry.textContent),
    ).toEqual(['Docs', 'Empty', 'a.txt', 'b.txt']);
    expect(within(dialog).getByText('/home/u')).toBeTruthy();
    // Files are shown for orientation, but a folder is being chosen.
    expect(item('a.txt')).toHaveProperty('disabled', true);
    // The root is as far up as it goes.
    expect(item('Up')).toHaveProperty('disabled', true);

    await userEvent.click(item('Docs'));
    expect(await within(dialog).findByText('/home/u/Docs')).toBeTruthy();
    expect(item('Up')).toHaveProperty('disabled', false);
    await userEvent.click(item('Up'));
    expect(await within(dialog).findByText('/home/u')).toBeTruthy();
    await userEvent.click(item('Empty'));
    await within(dialog).findByText('/home/u/Empty');

    await userEvent.click(item('Choose this folder'));
    expect(answers).toEqual([{ chooserId: 'c1', paths: ['/home/u/Empty'] }]);
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('opens in the folder the request starts in (a header backup’s: the vault folder)', async () => {
    const { chooser, ask } = fakeChooser();
    render(<PreviewChooser chooser={chooser} />);
    await ask({ ...filesRequest, purpose: 'header-restore', startIn: '/home/u/Docs' });
    const dialog = await screen.findByRole('dialog', { name: 'Choose files' });
    expect(await within(dialog).findByText('/home/u/Docs')).toBeTruthy();
    expect(within(dialog).getByRole('button', { name: 'letter.pdf' })).toBeTruthy();
  });

  it('opens in the first root when the start folder cannot be listed', async () => {
    const { chooser, ask } = fakeChooser();
    render(<PreviewChooser chooser={chooser} />);
    await ask({ ...filesRequest, purpose: 'header-restore', startIn: '/home/u/gone' });
    const dialog = await screen.findByRole('dialog', { name: 'Choose files' });
    expect(await within(dialog).findByRole('button', { name: 'a.txt' })).toBeTruthy();
    expect(within(dialog).queryByText('/home/u/gone cannot be listed.')).toBeNull();
  });

  it('says how many entries of a large folder are not listed', async () => {
    const { chooser, ask } = fakeChooser();
    render(<PreviewChooser chooser={chooser} />);
    await ask(filesRequest);
    await userEvent.click(await screen.findByRole('button', { name: 'Docs' }));
    expect(
      await screen.findByText(
        '2,500 more items in this folder are not listed (a folder shows its first 1 here).',
      ),
    ).toBeTruthy();
    await userEvent.click(item('Up'));
    await screen.findByRole('button', { name: 'Docs' });
    expect(screen.queryByText(/not listed/)).toBeNull();
  });

  it('answers a cancel with no choice', async () => {
    const { chooser, ask, answers } = fakeChooser();
    render(<PreviewChooser chooser={chooser} />);
    await ask(folderRequest);
    await screen.findByRole('button', { name: 'Docs' });
    await userEvent.click(item('Cancel'));
    expect(answers).toEqual([{ chooserId: 'c1', paths: null }]);
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('chooses files only once one is picked, and answers with every file picked', async () => {
    const { chooser, ask, answers } = fakeChooser();
    render(<PreviewChooser chooser={chooser} />);
    await ask(filesRequest);
    await screen.findByRole('dialog', { name: 'Choose files' });
    await screen.findByRole('button', { name: 'a.txt' });
    const choose = item('Choose files');
    expect(choose).toHaveProperty('disabled', true);
    await userEvent.click(item('a.txt'));
    expect(choose).toHaveProperty('disabled', false);
    await userEvent.click(item('b.txt'));
    await userEvent.click(choose);
    expect(answers).toEqual([{ chooserId: 'c1', paths: ['/home/u/a.txt', '/home/u/b.txt'] }]);
  });

  it('shows the request already waiting when the page opens (after a reload)', async () => {
    const { chooser } = fakeChooser(filesRequest);
    render(<PreviewChooser chooser={chooser} />);
    expect(await screen.findByRole('dialog', { name: 'Choose files' })).toBeTruthy();
    expect(await screen.findByRole('button', { name: 'Docs' })).toBeTruthy();
  });

  it('says why a folder cannot be listed', async () => {
    const { chooser, ask } = fakeChooser();
    render(<PreviewChooser chooser={chooser} />);
    await ask({ ...folderRequest, roots: ['/mnt/gone'] });
    expect((await screen.findByRole('alert')).textContent).toBe('/mnt/gone cannot be listed.');
    expect(item('Choose this folder')).toHaveProperty('disabled', true);
  });
});
