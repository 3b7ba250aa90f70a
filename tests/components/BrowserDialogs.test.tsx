// @vitest-environment jsdom
import './dom.js';

import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';

import {
  DeleteDialog,
  ExistingNamesDialog,
  MoveDialog,
  RestoreDialog,
} from '../../src/renderer/browser/dialogs.js';
import { jobEvent } from '../../src/renderer/store.js';
import type { VaultEntry } from '../../src/shared/contract.js';
import type { FakeApi, Handlers } from './fake-api.js';
import { file, folder, requests, tree } from './fixtures.js';
import { browse } from './vault-browser.js';

/** / → Archive (→ 2023, 2024), Photos (→ Beach). */
const TREE = tree('/', [
  tree('/Archive', [tree('/Archive/2023'), tree('/Archive/2024')]),
  tree('/Photos', [tree('/Photos/Beach')]),
]);

const items = (list: HTMLElement) =>
  within(list)
    .getAllByRole('listitem')
    .map((item) => item.textContent);

describe('the delete confirmation', () => {
  it('names the one file it deletes, and deletes it only when Delete is pressed', async () => {
    const confirm = vi.fn();
    render(
      <DeleteDialog entries={[file('/notes/todo.txt')]} onConfirm={confirm} onCancel={() => undefined} />,
    );
    const dialog = screen.getByRole('alertdialog', { name: 'Delete “todo.txt”?' });
    expect(items(within(dialog).getByRole('list'))).toEqual(['/notes/todo.txt']);
    expect(
      within(dialog).getByText(
        'It is removed from the vault for good; copies elsewhere on this computer are not touched.',
      ),
    ).toBeTruthy();
    expect(within(dialog).queryByText(/Everything inside/)).toBeNull();
    expect(confirm).not.toHaveBeenCalled();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    expect(confirm).toHaveBeenCalledOnce();
  });

  it('speaks of one folder in the singular', () => {
    render(
      <DeleteDialog entries={[folder('/Photos')]} onConfirm={() => undefined} onCancel={() => undefined} />,
    );
    const dialog = screen.getByRole('alertdialog', { name: 'Delete “Photos”?' });
    expect(
      within(dialog).getByText(
        'Everything inside the folder goes too. It is removed from the vault for good; copies elsewhere on this computer are not touched.',
      ),
    ).toBeTruthy();
  });

  it('counts many items, names the first six, and warns that folders go with their contents', () => {
    const entries = [
      folder('/Photos'),
      folder('/Taxes'),
      ...['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((name) => file(`/${name}.txt`)),
    ];
    render(<DeleteDialog entries={entries} onConfirm={() => undefined} onCancel={() => undefined} />);
    const dialog = screen.getByRole('alertdialog', { name: 'Delete 9 items?' });
    expect(items(within(dialog).getByRole('list'))).toEqual([
      '/Photos',
      '/Taxes',
      '/a.txt',
      '/b.txt',
      '/c.txt',
      '/d.txt',
      'and 3 more items',
    ]);
    expect(
      within(dialog).getByText(
        'Everything inside the folders goes too. They are removed from the vault for good; copies elsewhere on this computer are not touched.',
      ),
    ).toBeTruthy();
    expect(within(dialog).getByRole('button', { name: 'Delete 9 items' })).toBeTruthy();
  });

  it('has the focus on Cancel, so an Enter out of habit deletes nothing; Tab then Enter deletes', async () => {
    const confirm = vi.fn();
    const cancel = vi.fn();
    render(<DeleteDialog entries={[file('/a.txt')]} onConfirm={confirm} onCancel={cancel} />);
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Cancel' }));
    await userEvent.keyboard('{Enter}');
    expect(cancel).toHaveBeenCalledOnce();
    expect(confirm).not.toHaveBeenCalled();
    await userEvent.keyboard('{Tab}');
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Delete' }));
    await userEvent.keyboard('{Enter}');
    expect(confirm).toHaveBeenCalledOnce();
    await userEvent.keyboard('{Escape}');
    expect(cancel).toHaveBeenCalledTimes(2);
  });
});

describe('Move to…', () => {
  /** The dialog moving `entries` within `folders`; returns its onConfirm. */
  const renderMoveDialog = (entries: readonly VaultEntry[], folders = TREE) => {
    const confirm = vi.fn();
    render(
      <MoveDialog
        entries={entries}
        tree={folders}
        vaultName="Personal"
        onConfirm={confirm}
        onCancel={() => undefined}
      />,
    );
    return confirm;
  };

  it('offers every folder but the ones moved and those inside them, the root by the vault’s name', () => {
    render(
      <MoveDialog
        entries={[folder('/Archive'), file('/Photos/Beach/sea.jpg')]}
        tree={TREE}
        vaultName="Personal"
        onConfirm={() => undefined}
        onCancel={() => undefined}
      />,
    );
    const dialog = screen.getByRole('dialog', { name: 'Move 2 items to…' });
    const choices = within(dialog).getByRole('listbox', { name: 'Destination folder' });
    expect(
      within(choices)
        .getAllByRole('option')
        .map((option) => option.textContent),
    ).toEqual(['Personal', 'Photos', 'Beach']);
  });

  it('names a folder whose name another offered folder shares by where it is, for a screen reader', () => {
    const twins = tree('/', [
      tree('/2023', [tree('/2023/Month 1')]),
      tree('/2024', [tree('/2024/Month 1'), tree('/2024/Month 2')]),
      tree('/Personal'),
    ]);
    renderMoveDialog([file('/2024/Month 1/a.txt')], twins);
    const options = screen.getAllByRole('option');
    const named = [
      'Personal (the top of the vault)',
      '2023',
      'Month 1, in Personal/2023',
      '2024',
      'Month 1, in Personal/2024 (already here)',
      'Month 2',
      'Personal, in Personal',
    ].map((name) => screen.getByRole('option', { name }));
    expect(named).toEqual(options);
    // What is seen stays the name, the indent showing where it is.
    expect(options.map((option) => option.textContent)).toEqual([
      'Personal',
      '2023',
      'Month 1',
      '2024',
      'Month 1 (already here)',
      'Month 2',
      'Personal',
    ]);
  });

  it('starts with the keyboard in the list, which says how to move', async () => {
    const confirm = renderMoveDialog([file('/notes.txt')]);
    const list = screen.getByRole('listbox', { name: 'Destination folder' });
    await waitFor(() => {
      expect(list.contains(document.activeElement)).toBe(true);
    });
    expect(list.getAttribute('aria-describedby')).toBe(
      screen.getByText('Choose a folder, then “Move here” (or press Enter).').id,
    );
    // Nothing is chosen for the person; the arrows choose (the top, where the file is already, is passed over).
    expect(screen.getByRole('button', { name: 'Move here' }).hasAttribute('disabled')).toBe(true);
    await userEvent.keyboard('{ArrowDown}');
    expect(document.activeElement).toBe(screen.getByRole('option', { name: 'Archive' }));
    await userEvent.keyboard('{Enter}');
    expect(confirm).toHaveBeenCalledWith('/Archive');
  });

  it('moves only once a folder is chosen, into the folder chosen', async () => {
    const confirm = renderMoveDialog([file('/notes.txt')]);
    const dialog = screen.getByRole('dialog', { name: 'Move “notes.txt” to…' });
    const moveHere = within(dialog).getByRole('button', { name: 'Move here' });
    expect(moveHere.hasAttribute('disabled')).toBe(true);
    await userEvent.click(moveHere);
    expect(confirm).not.toHaveBeenCalled();
    await userEvent.click(within(dialog).getByRole('option', { name: '2024' }));
    expect(moveHere.hasAttribute('disabled')).toBe(false);
    await userEvent.click(moveHere);
    expect(confirm).toHaveBeenCalledWith('/Archive/2024');
  });

  it('shows the folder all the items are in already, but does not let it be chosen', async () => {
    renderMoveDialog([file('/Archive/a.txt'), file('/Archive/b.txt')]);
    const here = screen.getByRole('option', { name: 'Archive (already here)' });
    expect(here.getAttribute('aria-disabled')).toBe('true');
    await userEvent.click(here);
    expect(screen.getByRole('button', { name: 'Move here' }).hasAttribute('disabled')).toBe(true);
  });

  it('moves at once on Enter or a double-click on a folder', async () => {
    const confirm = renderMoveDialog([file('/notes.txt')]);
    await userEvent.dblClick(screen.getByRole('option', { name: 'Photos' }));
    expect(confirm).toHaveBeenLastCalledWith('/Photos');
    await userEvent.click(screen.getByRole('option', { name: '2023' }));
    await userEvent.keyboard('{ArrowDown}{Enter}');
    expect(confirm).toHaveBeenLastCalledWith('/Archive/2024');
    expect(confirm).toHaveBeenCalledTimes(2);
  });

  it('lets a folder be chosen that holds only some of the items', async () => {
    const confirm = renderMoveDialog([file('/Archive/a.txt'), file('/Photos/b.txt')]);
    await userEvent.click(screen.getByRole('option', { name: 'Archive' }));
    await userEvent.click(screen.getByRole('button', { name: 'Move here' }));
    expect(confirm).toHaveBeenCalledWith('/Archive');
  });

  it('cancels by Cancel and by Escape', async () => {
    const cancel = vi.fn();
    render(
      <MoveDialog
        entries={[file('/notes.txt')]}
        tree={TREE}
        vaultName="Personal"
        onConfirm={() => undefined}
        onCancel={cancel}
      />,
    );
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    await userEvent.keyboard('{Escape}');
    expect(cancel).toHaveBeenCalledTimes(2);
  });
});

describe('the names-already-there question of an add', () => {
  it('names the one file met and the folder, and keeps both when Enter is pressed', async () => {
    const confirm = vi.fn();
    render(
      <ExistingNamesDialog
        count={1}
        paths={['/Reports/report.pdf']}
        folderLabel="Reports"
        onConfirm={confirm}
        onCancel={() => undefined}
      />,
    );
    const dialog = screen.getByRole('alertdialog', { name: '“report.pdf” already exists' });
    expect(within(dialog).getByText(/^Already in /).textContent).toBe('Already in Reports:');
    expect(items(within(dialog).getByRole('list'))).toEqual(['/Reports/report.pdf']);
    // Keep both is the default: it loses nothing.
    expect(document.activeElement).toBe(within(dialog).getByRole('button', { name: 'Keep both' }));
    await userEvent.keyboard('{Enter}');
    expect(confirm).toHaveBeenCalledWith('keep-both');
  });

  it('counts the names beyond those listed, and gives each choice as pressed', async () => {
    const confirm = vi.fn();
    const cancel = vi.fn();
    render(
      <ExistingNamesDialog
        count={7}
        paths={['/a.txt', '/b.txt', '/c.txt', '/d.txt', '/e.txt']}
        folderLabel="Personal"
        onConfirm={confirm}
        onCancel={cancel}
      />,
    );
    const dialog = screen.getByRole('alertdialog', { name: '7 names already exist' });
    expect(items(within(dialog).getByRole('list')).at(-1)).toBe('and 2 more');
    for (const name of ['Skip', 'Replace', 'Keep both', 'Cancel']) {
      await userEvent.click(within(dialog).getByRole('button', { name }));
    }
    expect(confirm.mock.calls).toEqual([['skip'], ['replace'], ['keep-both']]);
    expect(cancel).toHaveBeenCalledOnce();
  });
});

describe('the restore question', () => {
  it('says where it restores to, and by default keeps a file already there', async () => {
    const confirm = vi.fn();
    render(
      <RestoreDialog
        entries={[file('/a.txt'), folder('/Photos')]}
        destinationLabel="/home/u/Restored"
        onConfirm={confirm}
        onCancel={() => undefined}
      />,
    );
    const dialog = screen.getByRole('dialog', { name: 'Restore 2 items' });
    expect(within(dialog).getByText('/home/u/Restored')).toBeTruthy();
    const choices = within(dialog).getByRole('radiogroup', {
      name: 'When a file of the same name is already there',
    });
    expect(
      within(choices).getByRole<HTMLInputElement>('radio', {
        name: 'Skip it and keep the file that is there',
      }).checked,
    ).toBe(true);
    await userEvent.click(within(dialog).getByRole('button', { name: 'Restore' }));
    expect(confirm).toHaveBeenCalledWith(false);
  });

  it('overwrites when "Replace it" is chosen', async () => {
    const confirm = vi.fn();
    render(
      <RestoreDialog
        entries={[file('/a.txt')]}
        destinationLabel="/home/u/Restored"
        onConfirm={confirm}
        onCancel={() => undefined}
      />,
    );
    await userEvent.click(screen.getByRole('radio', { name: 'Replace it with the copy from the vault' }));
    await userEvent.click(screen.getByRole('button', { name: 'Restore' }));
    expect(confirm).toHaveBeenCalledWith(true);
  });

  it('restores nothing when cancelled', async () => {
    const confirm = vi.fn();
    const cancel = vi.fn();
    render(
      <RestoreDialog
        entries={[file('/a.txt')]}
        destinationLabel="/home/u/Restored"
        onConfirm={confirm}
        onCancel={cancel}
      />,
    );
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    await userEvent.keyboard('{Escape}');
    expect(cancel).toHaveBeenCalledTimes(2);
    expect(confirm).not.toHaveBeenCalled();
  });
});

/*
 * The same dialogs as the browser opens them, to see that what the user chose there is what the back end is asked.
 * The file table draws only the rows in view, and jsdom lays nothing out, so it draws none: an entry is chosen with
 * the keyboard (End selects the last row) and the menu opened with Shift+F10, as a keyboard user does.
 */
describe('the dialogs as the browser opens them', () => {
  /** Folders sort first: todo.txt is the last row. */
  const ROOT = [folder('/Archive'), folder('/Photos'), file('/notes.txt'), file('/todo.txt')];

  /** The browser of an unlocked vault whose root holds ROOT, with the back end's answers for what it asks. */
  async function browseRoot(handlers: Handlers = {}): Promise<FakeApi> {
    const { api } = await browse(ROOT, handlers, TREE);
    // The rows are in once the status bar counts them (Move to… offers the sidebar's folders, shown by then).
    await screen.findByText(/^4 items/);
    return api;
  }

  /** The back end's word that a job started (its row shows 0.4 s later). */
  function startedJob(jobId: string, kind: 'add' | 'restore') {
    act(() => {
      jobEvent({ jobId, vaultId: 'v1', kind, type: 'started' });
    });
  }

  /** Selects the last row and chooses `action` from its menu. */
  async function chooseForLastRow(action: string) {
    screen.getByRole('grid', { name: 'Files' }).focus();
    await userEvent.keyboard('{End}{Shift>}{F10}{/Shift}');
    await userEvent.click(await screen.findByRole('menuitem', { name: action }));
  }

  it('Delete… asks first, naming the file, then deletes it', async () => {
    const api = await browseRoot({ 'entries.remove': () => ({ removed: 1 }) });
    await chooseForLastRow('Delete…');
    const dialog = await screen.findByRole('alertdialog', { name: 'Delete “todo.txt”?' });
    expect(requests(api, 'entries.remove')).toEqual([]);
    await userEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    expect(requests(api, 'entries.remove')).toEqual([{ vaultId: 'v1', paths: ['/todo.txt'] }]);
    expect(screen.queryByRole('alertdialog')).toBeNull();
  });

  it('Move to… moves into the folder chosen', async () => {
    const api = await browseRoot({ 'entries.move': () => [] });
    await chooseForLastRow('Move to…');
    const dialog = await screen.findByRole('dialog', { name: 'Move “todo.txt” to…' });
    await userEvent.click(within(dialog).getByRole('option', { name: '2024' }));
    await userEvent.click(within(dialog).getByRole('button', { name: 'Move here' }));
    expect(requests(api, 'entries.move')).toEqual([
      { vaultId: 'v1', paths: ['/todo.txt'], destination: '/Archive/2024' },
    ]);
  });

  it('Restore to… asks for a folder, then restores into it, replacing files there only if told to', async () => {
    const api = await browseRoot({
      'dialog.pickFolder': () => ({ handle: 'folder-1', label: '/home/u/Restored', count: 1 }),
      'job.restore': () => ({ jobId: 'restore-1' }),
    });
    await chooseForLastRow('Restore to…');
    const dialog = await screen.findByRole('dialog', { name: 'Restore “todo.txt”' });
    expect(requests(api, 'dialog.pickFolder')).toEqual([{ purpose: 'restore-destination', vaultId: 'v1' }]);
    expect(within(dialog).getByText('/home/u/Restored')).toBeTruthy();
    await userEvent.click(
      within(dialog).getByRole('radio', { name: 'Replace it with the copy from the vault' }),
    );
    await userEvent.click(within(dialog).getByRole('button', { name: 'Restore' }));
    expect(requests(api, 'job.restore')).toEqual([
      { vaultId: 'v1', paths: ['/todo.txt'], destination: 'folder-1', overwrite: true },
    ]);
    startedJob('restore-1', 'restore');
    const job = await screen.findByRole('listitem', { name: 'Restore job' }, { timeout: 3000 });
    expect(within(job).getByText('To /home/u/Restored')).toBeTruthy();
  });

  it('an add that meets taken names starts only once the user chose, with that choice', async () => {
    const api = await browseRoot({
      'dialog.pickFiles': () => ({ handle: 'files-1', label: '2 files', count: 2 }),
      'job.add': ({ onExisting }) =>
        onExisting === 'ask' ? { taken: { count: 1, paths: ['/notes.txt'] } } : { jobId: 'add-1' },
    });
    await userEvent.click(screen.getByRole('button', { name: 'Add files…' }));
    const dialog = await screen.findByRole('alertdialog', { name: '“notes.txt” already exists' });
    expect(within(dialog).getByText(/^Already in /).textContent).toBe('Already in Personal:');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Skip' }));
    expect(requests(api, 'job.add')).toEqual([
      { vaultId: 'v1', source: 'files-1', destination: '/', onExisting: 'ask' },
      { vaultId: 'v1', source: 'files-1', destination: '/', onExisting: 'skip' },
    ]);
    startedJob('add-1', 'add');
    const job = await screen.findByRole('listitem', { name: 'Add job' }, { timeout: 3000 });
    expect(within(job).getByText('Into Personal')).toBeTruthy();
  });

  it('says in the jobs panel which folder each add puts its files into, while it runs and once it is done', async () => {
    await browseRoot({
      'entries.list': ({ path }) => (path === '/Archive' ? [file('/Archive/notes.txt')] : ROOT),
      'dialog.pickFiles': () => ({ handle: 'files-1', label: '1 file', count: 1 }),
      'job.add': () => ({ jobId: 'add-1' }),
    });
    screen.getByRole('grid', { name: 'Files' }).focus();
    await userEvent.keyboard('{Home}{Enter}');
    await screen.findByText(/^1 item/);
    await userEvent.click(screen.getByRole('button', { name: 'Add files…' }));
    startedJob('add-1', 'add');
    const job = await screen.findByRole('listitem', { name: 'Add job' }, { timeout: 3000 });
    expect(within(job).getByText('Into Personal/Archive')).toBeTruthy();
    const report = { filesAdded: 1, foldersAdded: 0, bytesAdded: 5, problems: [], replaced: 0, skipped: 0 };
    act(() => {
      jobEvent({
        jobId: 'add-1',
        vaultId: 'v1',
        kind: 'add',
        type: 'ended',
        status: 'done',
        result: { kind: 'add', report },
      });
    });
    expect(within(job).getByRole('status').textContent).toBe('Added 1 file.');
    expect(within(job).getByText('Into Personal/Archive')).toBeTruthy();
  });

  it('names a folder below the top as the vault’s name and its path, as it does the top by the vault’s name', async () => {
    await browseRoot({
      'entries.list': ({ path }) => (path === '/Archive' ? [file('/Archive/notes.txt')] : ROOT),
      'dialog.pickFiles': () => ({ handle: 'files-1', label: '1 file', count: 1 }),
      'job.add': () => ({ taken: { count: 1, paths: ['/Archive/notes.txt'] } }),
    });
    screen.getByRole('grid', { name: 'Files' }).focus();
    await userEvent.keyboard('{Home}{Enter}');
    await screen.findByText(/^1 item/);
    await userEvent.click(screen.getByRole('button', { name: 'Add files…' }));
    const dialog = await screen.findByRole('alertdialog', { name: '“notes.txt” already exists' });
    expect(within(dialog).getByText(/^Already in /).textContent).toBe('Already in Personal/Archive:');
  });
});
