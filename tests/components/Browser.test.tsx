// @vitest-environment jsdom
import './dom.js';

import { act, cleanup, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { CHANGE_REFUSED_FOR_OLDER_HEADER, errorSentence } from '../../src/renderer/error-messages.js';
import { jobEvent, showNotices, showVault, useCoffer, vaultLocked } from '../../src/renderer/store.js';
import type { VaultEntry } from '../../src/shared/contract.js';
import { Refusal } from './fake-api.js';
import { browse, drawnRows, itemsStatus, statusBar, withViewport } from './vault-browser.js';
import { file, folder, settle, tree, VAULT } from './fixtures.js';

withViewport();

const ROOT = [folder('/Reports'), file('/notes.txt', 1500), file('/report-draft.txt', 200)];
const LISTINGS: Record<string, readonly VaultEntry[]> = {
  '/': ROOT,
  '/Reports': [folder('/Reports/2024'), file('/Reports/report.pdf', 4000)],
  '/Reports/2024': [file('/Reports/2024/q1.pdf', 10)],
};
const list = ({ path }: { path: string }) => LISTINGS[path] ?? [];

const status = itemsStatus;
/** What the back end answers for the vault's size. */
const holding = (totalBytes: number) => ({ files: 3, folders: 1, totalBytes });
const searchField = () => screen.getByRole('searchbox', { name: 'Search this vault' });
const crumbs = () =>
  within(screen.getByRole('navigation', { name: 'Folder path' }))
    .getAllByRole('button')
    .map((crumb) => crumb.textContent);
const cellsOf = (row: HTMLElement) =>
  within(row)
    .getAllByRole('gridcell', { hidden: true })
    .map((cell) => cell.textContent);
const row = (name: string) => {
  const found = drawnRows().find((candidate) => cellsOf(candidate)[0] === name);
  if (found === undefined) throw new Error(`no row ${name} drawn`);
  return found;
};

describe('the status bar', () => {
  it('counts the items, then the selection and its size, then the vault’s size, which a change refreshes', async () => {
    let totalBytes = 1_234_567;
    await browse(ROOT, {
      'vault.totals': () => holding(totalBytes),
      'entries.remove': () => {
        totalBytes = 1_000;
        return { removed: 1 };
      },
    });
    await waitFor(() => {
      expect(statusBar()).toBe('3 items · vault 1.2 MB');
    });
    const user = userEvent.setup();
    await user.click(row('notes.txt'));
    await user.keyboard('{Shift>}{ArrowDown}{/Shift}');
    expect(statusBar()).toBe('3 items · 2 selected (1.7 kB) · vault 1.2 MB');

    await user.keyboard('{Delete}');
    await user.click(await screen.findByRole('button', { name: 'Delete 2 items' }));
    await waitFor(() => {
      expect(statusBar()).toBe('3 items · vault 1.0 kB');
    });
  });

  it('shows the files an add committed while it runs, and the vault’s size with them, keeping the selection', async () => {
    let listing = ROOT;
    let totalBytes = 1_700;
    await browse(ROOT, {
      'entries.list': () => listing,
      'vault.totals': () => holding(totalBytes),
    });
    await waitFor(() => {
      expect(statusBar()).toBe('3 items · vault 1.7 kB');
    });
    await userEvent.setup().click(row('notes.txt'));
    act(() => {
      jobEvent({ jobId: 'j1', vaultId: VAULT.vaultId, kind: 'add', type: 'started' });
    });
    listing = [...ROOT, file('/scan.pdf', 3_000_000)];
    totalBytes = 3_001_700;
    act(() => {
      jobEvent({ jobId: 'j1', vaultId: VAULT.vaultId, kind: 'add', type: 'committed', filesFinished: 1 });
    });
    await waitFor(() => {
      expect(statusBar()).toBe('4 items · 1 selected (1.5 kB) · vault 3.0 MB');
    });
    expect(cellsOf(row('scan.pdf')).slice(0, 2)).toEqual(['scan.pdf', '3.0 MB']);
    // While it runs, a screen reader is not read the changing figures each second.
    const bar = screen.getByRole('status', { name: 'Status' });
    expect(bar.getAttribute('aria-busy')).toBe('true');
    act(() => {
      jobEvent({ jobId: 'j1', vaultId: VAULT.vaultId, kind: 'add', type: 'ended', status: 'cancelled' });
    });
    await waitFor(() => {
      expect(bar.getAttribute('aria-busy')).toBe('false');
    });
    expect(statusBar()).toBe('4 items · 1 selected (1.5 kB) · vault 3.0 MB');
  });

  it('shows the vault’s size the latest change was answered with, though an older answer comes later', async () => {
    let answerLate: (() => void) | undefined;
    let totalBytes = 1_700;
    let asked = 0;
    await browse(ROOT, {
      'vault.totals': () => {
        if (++asked !== 2) return holding(totalBytes);
        const then = totalBytes;
        return new Promise((resolve) => {
          answerLate = () => {
            resolve(holding(then));
          };
        });
      },
    });
    await waitFor(() => {
      expect(statusBar()).toBe('3 items · vault 1.7 kB');
    });
    totalBytes = 3_000;
    act(() => {
      jobEvent({ jobId: 'j1', vaultId: VAULT.vaultId, kind: 'add', type: 'committed', filesFinished: 1 });
    });
    await waitFor(() => {
      expect(answerLate).toBeDefined();
    });
    totalBytes = 5_000;
    act(() => {
      jobEvent({ jobId: 'j1', vaultId: VAULT.vaultId, kind: 'add', type: 'ended', status: 'cancelled' });
    });
    await waitFor(() => {
      expect(statusBar()).toBe('3 items · vault 5.0 kB');
    });
    await act(async () => {
      answerLate?.();
      await Promise.resolve();
    });
    await settle();
    expect(statusBar()).toBe('3 items · vault 5.0 kB');
  });

  it('shows the rows of the latest load and the tree of the latest that asked for one, whichever answer comes last', async () => {
    const held: (() => void)[] = [];
    let holding = false;
    const hold = <T,>(answer: () => T): T | Promise<T> =>
      holding
        ? new Promise<T>((resolve) => {
            held.push(() => {
              resolve(answer());
            });
          })
        : answer();
    let rootRows = ROOT;
    let folders = tree('/', [tree('/Reports')]);
    await browse(ROOT, {
      'entries.list': ({ path }) => hold(() => (path === '/' ? rootRows : list({ path }))),
      'entries.tree': () => hold(() => folders),
    });
    holding = true;
    // An add ends (a refresh asks for the root's rows and the tree), then the person opens Reports.
    rootRows = [...ROOT, folder('/Scans')];
    folders = tree('/', [tree('/Reports'), tree('/Scans')]);
    act(() => {
      jobEvent({ jobId: 'j1', vaultId: VAULT.vaultId, kind: 'add', type: 'ended', status: 'cancelled' });
    });
    await waitFor(() => {
      expect(held.length).toBeGreaterThanOrEqual(2);
    });
    const refresh = held.splice(0);
    screen.getByRole('grid', { name: 'Files' }).focus();
    await userEvent.keyboard('{Home}{Enter}');
    await waitFor(() => {
      expect(held.length).toBe(1);
    });
    // Reports' rows come first, the refresh's root rows and tree last.
    await act(async () => {
      held[0]?.();
      await Promise.resolve();
    });
    for (const answer of refresh) {
      await act(async () => {
        answer();
        await Promise.resolve();
      });
    }
    await waitFor(() => {
      expect(
        within(screen.getByRole('treegrid', { name: 'Folders' })).getByRole('row', { name: 'Scans' }),
      ).toBeTruthy();
    });
    expect(crumbs()).toEqual(['Personal', 'Reports']);
    expect(status()).toMatch(/^2 items/);
  });

  it('shows the folder being opened when an add’s rows come meanwhile, though the older answer comes first', async () => {
    const asked: { path: string; answer: () => void }[] = [];
    let held = false;
    await browse(ROOT, {
      'entries.list': ({ path }) =>
        held
          ? new Promise<readonly VaultEntry[]>((resolve) => {
              asked.push({
                path,
                answer: () => {
                  resolve(list({ path }));
                },
              });
            })
          : list({ path }),
    });
    held = true;
    screen.getByRole('grid', { name: 'Files' }).focus();
    await userEvent.keyboard('{Home}{Enter}');
    act(() => {
      jobEvent({ jobId: 'j1', vaultId: VAULT.vaultId, kind: 'add', type: 'committed', filesFinished: 1 });
    });
    await waitFor(() => {
      expect(asked.map(({ path }) => path)).toEqual(['/Reports', '/Reports']);
    });
    for (const { answer } of asked) {
      answer();
      await act(async () => {
        await Promise.resolve();
      });
    }
    await waitFor(() => {
      expect(crumbs()).toEqual(['Personal', 'Reports']);
    });
    expect(status()).toMatch(/^2 items/);
  });

  it('gives no size for a selection holding a folder, whose size it does not know', async () => {
    await browse(ROOT);
    await screen.findByText(/^3 items/);
    const user = userEvent.setup();
    await user.click(row('Reports'));
    expect(status()).toBe('3 items · 1 selected');
    await user.keyboard('{Shift>}{ArrowDown}{/Shift}');
    expect(status()).toBe('3 items · 2 selected');
    await user.keyboard('{Shift>}{ArrowUp}{/Shift}{ArrowDown}');
    expect(status()).toBe('3 items · 1 selected (1.5 kB)');
  });
});

describe('the breadcrumbs', () => {
  it('show the way from the vault to the folder shown, and open the folder clicked', async () => {
    const { requests } = await browse(ROOT, { 'entries.list': list });
    expect(crumbs()).toEqual(['Personal']);
    screen.getByRole('grid', { name: 'Files' }).focus();
    await userEvent.keyboard('{Enter}');
    await screen.findByText(/^2 items/);
    await userEvent.keyboard('{Enter}');
    await screen.findByText(/^1 item/);
    expect(crumbs()).toEqual(['Personal', 'Reports', '2024']);

    await userEvent.click(screen.getByRole('button', { name: 'Reports' }));
    await screen.findByText(/^2 items/);
    expect(crumbs()).toEqual(['Personal', 'Reports']);
    expect(requests('entries.list').at(-1)).toEqual({ vaultId: 'v1', path: '/Reports' });
    await userEvent.click(screen.getByRole('button', { name: 'Personal' }));
    await screen.findByText(/^3 items/);
    expect(crumbs()).toEqual(['Personal']);
  });
});

describe('search as you type', () => {
  const FOUND = [file('/Reports/report.pdf', 4000), file('/report-draft.txt', 200)];

  it('asks the whole vault for the words typed, shows each result with its folder, and Escape goes back', async () => {
    const { requests } = await browse(ROOT, { 'entries.search': () => FOUND });
    // Spaces around the words are not part of the search.
    await userEvent.type(searchField(), ' report ');
    await screen.findByRole('grid', { name: 'Search results' });
    expect(requests('entries.search').at(-1)).toEqual({ vaultId: 'v1', query: 'report', limit: 1000 });
    expect(screen.getAllByRole('columnheader').map((header) => header.textContent)).toEqual([
      'Name',
      'Folder',
      'Size',
      'Modified',
    ]);
    expect(drawnRows().map((result) => cellsOf(result).slice(0, 3))).toEqual([
      ['report-draft.txt', 'Personal', '200 B'],
      ['report.pdf', 'Personal/Reports', '4.0 kB'],
    ]);
    expect(status()).toBe('2 results');

    await userEvent.keyboard('{Escape}');
    expect(searchField()).toHaveProperty('value', '');
    expect(await screen.findByRole('grid', { name: 'Files' })).toBeTruthy();
    expect(status()).toBe('3 items');
  });

  it('shows the answer to the latest words, even when an older answer comes later', async () => {
    const answers = new Map<string, (found: readonly VaultEntry[]) => void>();
    await browse(ROOT, {
      'entries.search': ({ query }) =>
        new Promise((resolve) => {
          answers.set(query, resolve);
        }),
    });
    await userEvent.type(searchField(), 'no');
    await act(async () => {
      answers.get('no')?.([file('/notes.txt')]);
      await Promise.resolve();
    });
    await act(async () => {
      answers.get('n')?.([file('/notes.txt'), file('/Reports/nn.txt')]);
      await Promise.resolve();
    });
    await screen.findByRole('grid', { name: 'Search results' });
    expect(drawnRows().map((result) => cellsOf(result)[0])).toEqual(['notes.txt']);
    expect(status()).toBe('1 result');
  });

  it('says when there may be more results than the first thousand', async () => {
    const many = Array.from({ length: 1000 }, (_, i) => file(`/r${String(i)}.txt`));
    await browse(ROOT, { 'entries.search': () => many });
    await userEvent.type(searchField(), 'r');
    await waitFor(() => {
      expect(status()).toBe('First 1,000 results');
    });
  });

  it('says in words when the search fails', async () => {
    await browse(ROOT, { 'entries.search': () => new Refusal('VAULT_LOCKED') });
    await userEvent.type(searchField(), 'x');
    expect((await screen.findByRole('alert')).textContent).toBe(
      'The vault is locked. Unlock it with its passphrase and try again.',
    );
    // Nothing was searched: not "no names match", nor "0 results".
    expect(status()).toBe('Search failed');
    expect(screen.queryByText(/No names match/)).toBeNull();
  });

  it('searches again after a failure, saying so until the answer comes', async () => {
    let fail = true;
    await browse(ROOT, {
      'entries.search': () => (fail ? new Refusal('BUSY') : new Promise<never>(() => undefined)),
    });
    await userEvent.type(searchField(), 'x');
    await waitFor(() => {
      expect(status()).toBe('Search failed');
    });
    fail = false;
    await userEvent.type(searchField(), 'y');
    expect(status()).toBe('Searching…');
  });

  it('goes to the search field by Ctrl+F, and from it to the results by ArrowDown', async () => {
    await browse(ROOT, { 'entries.search': () => FOUND });
    screen.getByRole('grid', { name: 'Files' }).focus();
    await userEvent.keyboard('{Control>}f{/Control}');
    expect(document.activeElement).toBe(searchField());
    await userEvent.keyboard('report');
    const results = await screen.findByRole('grid', { name: 'Search results' });
    await userEvent.keyboard('{ArrowDown}');
    expect(document.activeElement).toBe(results);
  });

  it('leaves a result selected in the search out of the folder shown after it: Delete there asks nothing', async () => {
    await browse(ROOT, { 'entries.search': () => FOUND });
    await userEvent.type(searchField(), 'report');
    await screen.findByRole('grid', { name: 'Search results' });
    await userEvent.click(row('report.pdf'));
    expect(status()).toBe('2 results · 1 selected (4.0 kB)');
    await userEvent.click(searchField());
    await userEvent.keyboard('{Escape}{ArrowDown}');
    expect(document.activeElement).toBe(await screen.findByRole('grid', { name: 'Files' }));
    expect(status()).toBe('3 items');
    await userEvent.keyboard('{Delete}');
    expect(screen.queryByRole('alertdialog')).toBeNull();
  });

  it('“Show in folder” opens the result’s folder with it selected, and ends the search', async () => {
    const { requests } = await browse(ROOT, { 'entries.list': list, 'entries.search': () => FOUND });
    await userEvent.type(searchField(), 'report');
    await screen.findByRole('grid', { name: 'Search results' });
    await userEvent.pointer({ keys: '[MouseRight]', target: row('report.pdf') });
    await userEvent.click(await screen.findByRole('menuitem', { name: 'Show in folder' }));
    await screen.findByRole('grid', { name: 'Files' });
    expect(requests('entries.list').at(-1)).toEqual({ vaultId: 'v1', path: '/Reports' });
    expect(crumbs()).toEqual(['Personal', 'Reports']);
    expect(searchField()).toHaveProperty('value', '');
    expect(status()).toBe('2 items · 1 selected (4.0 kB)');
    expect(row('report.pdf').getAttribute('aria-selected')).toBe('true');
  });
});

describe('changing search results', () => {
  const FOUND = [folder('/Reports'), file('/Reports/report.pdf', 4000), file('/report-draft.txt', 200)];
  const resultNames = () => drawnRows().map((result) => cellsOf(result)[0]);
  /** Searches for "rep" and deletes the folder /Reports from the results, confirming. */
  const deleteFoundFolder = async () => {
    await userEvent.type(searchField(), 'rep');
    await screen.findByRole('grid', { name: 'Search results' });
    await userEvent.click(row('Reports'));
    await userEvent.keyboard('{Delete}');
    await userEvent.click(await screen.findByRole('button', { name: 'Delete' }));
  };

  it('takes away with a deleted folder the results inside it', async () => {
    await browse(ROOT, { 'entries.search': () => FOUND, 'entries.remove': () => ({ removed: 3 }) });
    await deleteFoundFolder();
    await waitFor(() => {
      expect(resultNames()).toEqual(['report-draft.txt']);
    });
  });

  it('says in the status bar that a delete is under way until it is done', async () => {
    let finish = (): void => undefined;
    await browse(ROOT, {
      'entries.search': () => FOUND,
      'entries.remove': () =>
        new Promise((resolve) => {
          finish = () => {
            resolve({ removed: 3 });
          };
        }),
    });
    await deleteFoundFolder();
    const working = screen.getByRole('status', { name: 'Work under way' });
    await waitFor(() => {
      expect(working.textContent).toBe(' Deleting “Reports”…');
    });
    finish();
    await waitFor(() => {
      expect(working.textContent).toBe('');
    });
  });

  it('says a delete waits while a job that ran before it has not ended, and not for one started after it', async () => {
    await browse(ROOT, {
      'entries.search': () => FOUND,
      'entries.remove': () => new Promise(() => undefined),
    });
    const job = (jobId: string, event: { type: 'started' } | { type: 'ended'; status: 'cancelled' }) => {
      act(() => {
        jobEvent({ jobId, vaultId: VAULT.vaultId, kind: 'add', ...event });
      });
    };
    job('before', { type: 'started' });
    await deleteFoundFolder();
    const working = screen.getByRole('status', { name: 'Work under way' });
    await waitFor(() => {
      expect(working.textContent).toBe(' Deleting “Reports” · waiting for another job on this vault to end…');
    });
    job('after', { type: 'started' });
    job('before', { type: 'ended', status: 'cancelled' });
    await waitFor(() => {
      expect(working.textContent).toBe(' Deleting “Reports”…');
    });
  });

  /** Presses F2 on the selected row and, once its field has the keyboard, types over the name's stem. */
  const renameTo = async (name: string, stem: string) => {
    await userEvent.keyboard('{F2}');
    const field = screen.getByRole('textbox', { name: `New name for ${name}` });
    await waitFor(() => {
      expect(document.activeElement).toBe(field);
    });
    await userEvent.keyboard(`${stem}{Enter}`);
  };

  it('keeps a renamed result in the results, with the words searched, and results inside a renamed folder follow it', async () => {
    const { requests } = await browse(ROOT, {
      // The folder's rows come after the results have changed, as from a back end that takes its time.
      'entries.list': (request) =>
        new Promise((resolve) => {
          setTimeout(() => {
            resolve(list(request));
          }, 20);
        }),
      'entries.search': () => FOUND,
      'entries.rename': ({ path, newName }) =>
        path === '/Reports' ? folder(`/${newName}`) : file(`/${newName}`, 200),
    });
    await userEvent.type(searchField(), 'rep');
    await screen.findByRole('grid', { name: 'Search results' });
    await userEvent.click(row('report-draft.txt'));
    await renameTo('report-draft.txt', 'summary');
    await waitFor(() => {
      expect(resultNames()).toEqual(['Reports', 'report.pdf', 'summary.txt']);
    });
    expect(searchField()).toHaveProperty('value', 'rep');
    await waitFor(() => {
      expect(row('summary.txt').getAttribute('aria-selected')).toBe('true');
    });
    await settle();
    // The keyboard's place follows it to where it sorts now.
    const results = screen.getByRole('grid', { name: 'Search results' });
    expect(results.getAttribute('aria-activedescendant')).toBe(row('summary.txt').id);

    await userEvent.click(row('Reports'));
    await renameTo('Reports', 'Papers');
    await waitFor(() => {
      expect(resultNames()).toEqual(['Papers', 'report.pdf', 'summary.txt']);
    });
    expect(cellsOf(row('report.pdf')).slice(0, 2)).toEqual(['report.pdf', 'Personal/Papers']);
    expect(requests('entries.rename')).toEqual([
      { vaultId: 'v1', path: '/report-draft.txt', newName: 'summary.txt' },
      { vaultId: 'v1', path: '/Reports', newName: 'Papers' },
    ]);
    expect(screen.getByRole('grid', { name: 'Search results' })).toBeTruthy();
  });

  it('shows a moved result in its new folder', async () => {
    let moved = false;
    const { requests } = await browse(
      ROOT,
      {
        'entries.search': () =>
          moved ? [folder('/Reports'), file('/Reports/report-draft.txt', 200)] : FOUND,
        'entries.move': ({ paths, destination }) => {
          moved = true;
          return paths.map((path) => file(`${destination}${path.slice(path.lastIndexOf('/'))}`, 200));
        },
      },
      tree('/', [tree('/Reports')]),
    );
    await userEvent.type(searchField(), 'rep');
    await screen.findByRole('grid', { name: 'Search results' });
    await userEvent.pointer({ keys: '[MouseRight]', target: row('report-draft.txt') });
    await userEvent.click(await screen.findByRole('menuitem', { name: 'Move to…' }));
    await userEvent.click(await screen.findByRole('option', { name: 'Reports' }));
    await userEvent.click(screen.getByRole('button', { name: 'Move here' }));
    expect(requests('entries.move')).toEqual([
      { vaultId: 'v1', paths: ['/report-draft.txt'], destination: '/Reports' },
    ]);
    await waitFor(() => {
      expect(cellsOf(row('report-draft.txt')).slice(0, 2)).toEqual(['report-draft.txt', 'Personal/Reports']);
    });
  });

  it('shows the folder above the one shown when that one is deleted from the results', async () => {
    const { requests } = await browse(ROOT, {
      'entries.list': list,
      'entries.search': () => FOUND,
      'entries.remove': () => ({ removed: 2 }),
    });
    screen.getByRole('grid', { name: 'Files' }).focus();
    await userEvent.keyboard('{Enter}');
    await screen.findByText(/^2 items/);
    expect(crumbs()).toEqual(['Personal', 'Reports']);
    const crumb = (name: string) =>
      within(screen.getByRole('navigation', { name: 'Folder path' })).getByRole('button', { name });
    // The folder shown is the current one of the path, for a screen reader.
    expect(crumb('Reports').getAttribute('aria-current')).toBe('page');
    expect(crumb('Personal').getAttribute('aria-current')).toBeNull();
    await deleteFoundFolder();
    await waitFor(() => {
      expect(crumbs()).toEqual(['Personal']);
    });
    expect(requests('entries.list').at(-1)).toEqual({ vaultId: 'v1', path: '/' });
  });

  it('follows the folder shown when it is moved from the results', async () => {
    const { requests } = await browse(
      ROOT,
      {
        'entries.list': list,
        'entries.search': () => FOUND,
        'entries.move': () => [folder('/Archive/Reports')],
      },
      tree('/', [tree('/Archive'), tree('/Reports')]),
    );
    screen.getByRole('grid', { name: 'Files' }).focus();
    await userEvent.keyboard('{Enter}');
    await screen.findByText(/^2 items/);
    await userEvent.type(searchField(), 'rep');
    await screen.findByRole('grid', { name: 'Search results' });
    await userEvent.pointer({ keys: '[MouseRight]', target: row('Reports') });
    await userEvent.click(await screen.findByRole('menuitem', { name: 'Move to…' }));
    await userEvent.click(await screen.findByRole('option', { name: 'Archive' }));
    await userEvent.click(screen.getByRole('button', { name: 'Move here' }));
    await waitFor(() => {
      expect(requests('entries.list').at(-1)).toEqual({ vaultId: 'v1', path: '/Archive/Reports' });
    });
  });
});

describe('a refused move', () => {
  const alertText = async () => (await screen.findByRole('alert')).textContent;
  const moveTo = async (target: HTMLElement, destination: string) => {
    await userEvent.pointer({ keys: '[MouseRight]', target });
    await userEvent.click(await screen.findByRole('menuitem', { name: 'Move to…' }));
    await userEvent.click(await screen.findByRole('option', { name: destination }));
    await userEvent.click(screen.getByRole('button', { name: 'Move here' }));
  };

  it('names the item the folder chosen already holds, matched ignoring case as the vault does', async () => {
    await browse(
      ROOT,
      {
        'entries.list': ({ path }) => (path === '/Reports' ? [file('/Reports/NOTES.TXT', 3)] : ROOT),
        'entries.move': () => new Refusal('ALREADY_EXISTS'),
      },
      tree('/', [tree('/Reports')]),
    );
    await moveTo(row('notes.txt'), 'Reports');
    expect(await alertText()).toBe(
      'Nothing was moved: “Personal/Reports” already holds “NOTES.TXT”, which counts as the same name as “notes.txt” (a ' +
        'folder cannot hold two names that differ only in case). Rename one of them, or choose another folder.',
    );
  });

  it('names the name two of the items moved share', async () => {
    const { requests } = await browse(
      ROOT,
      {
        'entries.search': () => [file('/Reports/q1.pdf', 10), file('/Reports/2024/q1.pdf', 10)],
        'entries.list': ({ path }) => (path === '/Archive' ? [] : ROOT),
        'entries.move': () => new Refusal('ALREADY_EXISTS'),
      },
      tree('/', [tree('/Reports', [tree('/Reports/2024')]), tree('/Archive')]),
    );
    await userEvent.type(searchField(), 'q1');
    await screen.findByRole('grid', { name: 'Search results' });
    const [first, second] = drawnRows();
    if (first === undefined || second === undefined) throw new Error('two results expected');
    await userEvent.click(first);
    await userEvent.keyboard('{Shift>}{ArrowDown}{/Shift}');
    await moveTo(second, 'Archive');
    expect(requests('entries.move')[0]?.paths).toHaveLength(2);
    expect(await alertText()).toBe(
      'Nothing was moved: two of the items are called “q1.pdf”, and one folder cannot hold both. Rename one of them first.',
    );
  });

  it('takes its words away once the person goes on to search', async () => {
    await browse(
      ROOT,
      {
        'entries.list': ({ path }) => (path === '/Reports' ? [file('/Reports/notes.txt', 3)] : ROOT),
        'entries.move': () => new Refusal('ALREADY_EXISTS'),
        'entries.search': () => [],
      },
      tree('/', [tree('/Reports')]),
    );
    await moveTo(row('notes.txt'), 'Reports');
    await alertText();
    await userEvent.type(searchField(), 'q');
    await waitFor(() => {
      expect(screen.queryByRole('alert')).toBeNull();
    });
  });

  it.each([
    ['finds no such name (the folder changed meanwhile)', []],
    ['cannot look (the folder went meanwhile)', new Refusal('NOT_FOUND')],
  ] as const)('says the refusal’s words when it %s', async (_, destinationListing) => {
    await browse(
      ROOT,
      {
        'entries.list': ({ path }) => (path === '/Reports' ? destinationListing : ROOT),
        'entries.move': () => new Refusal('ALREADY_EXISTS'),
      },
      tree('/', [tree('/Reports')]),
    );
    await moveTo(row('notes.txt'), 'Reports');
    expect(await alertText()).toMatch(/^Something with that name already exists there\./);
  });
});

describe('New folder', () => {
  it('takes a name no entry has, ignoring case as the vault does', async () => {
    // The vault holds one of "NEW FOLDER" and "New folder", and creating the one gives back the other.
    const { requests } = await browse([folder('/NEW FOLDER'), file('/new folder (2)')], {
      'entries.mkdir': ({ path }) => folder(path),
    });
    await userEvent.click(screen.getByRole('button', { name: 'New folder' }));
    await waitFor(() => {
      expect(requests('entries.mkdir')).toEqual([{ vaultId: 'v1', path: '/New folder (3)' }]);
    });
  });
});

describe('what unlocking found', () => {
  it('is shown above the browser, each notice in its own words, until dismissed', async () => {
    await browse(ROOT);
    expect(screen.queryByRole('alert')).toBeNull();
    act(() => {
      showNotices(['2 files are damaged.', 'The vault went back to an older copy.']);
    });
    const notices = screen.getByRole('alert');
    expect(
      within(notices)
        .getAllByRole('paragraph')
        .map((notice) => notice.textContent),
    ).toEqual(['2 files are damaged.', 'The vault went back to an older copy.']);
    await userEvent.click(within(notices).getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByRole('alert')).toBeNull();
  });
});

describe('a vault whose header is older than its data', () => {
  it('says, past any dismissal, that nothing can be changed and how to restore the newer header', async () => {
    await browse(ROOT);
    act(() => {
      showNotices(['1 entry of this vault could not be read.']);
      showVault({ ...VAULT, headerOlderThanData: true });
    });
    // One alert: two at once are not all read out.
    const alert = screen.getByRole('alert');
    const said = () =>
      within(alert)
        .getAllByRole('paragraph')
        .map((paragraph) => paragraph.textContent);
    expect(said()).toEqual([
      expect.stringMatching(/^Nothing in this vault can be changed for now\. Its header/u),
      expect.stringMatching(
        /^To put it back, lock the vault and restore “coffer\.header\.bak” from the vault folder \(show all files\)/u,
      ),
      '1 entry of this vault could not be read.',
    ]);
    await userEvent.click(within(alert).getByRole('button', { name: 'Dismiss' }));
    expect(said()).toHaveLength(2);
    expect(
      within(alert)
        .getAllByRole('button')
        .map((button) => button.textContent),
    ).toEqual(['Lock and restore the header…']);
    // A lock clears it with everything else the unlock found.
    act(() => {
      vaultLocked(VAULT.vaultId);
    });
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('locks on “Lock and restore the header…”, and has the unlock screen ask for the header backup', async () => {
    let locked = (): void => undefined;
    const { requests } = await browse(ROOT, {
      'vault.lock': () =>
        new Promise<null>((resolve) => {
          locked = () => {
            resolve(null);
          };
        }),
    });
    act(() => {
      showVault({ ...VAULT, headerOlderThanData: true });
    });
    const button = screen.getByRole('button', { name: 'Lock and restore the header…' });
    await userEvent.click(button);
    // Pressed again while the lock runs: nothing more is asked.
    expect(button).toHaveProperty('disabled', true);
    await userEvent.click(button);
    locked();
    await waitFor(() => {
      expect(useCoffer.getState().headerRestoreAsked).toBe(VAULT.vaultId);
    });
    expect(requests('vault.lock')).toEqual([{ vaultId: VAULT.vaultId }]);
    expect(useCoffer.getState().vault).toMatchObject({ locked: true, headerOlderThanData: false });
  });

  it('asks nothing more when the lock fails: the vault stays shown, with the failure in words', async () => {
    await browse(ROOT, { 'vault.lock': () => new Refusal('IO') });
    act(() => {
      useCoffer.setState({ headerRestoreAsked: null });
      showVault({ ...VAULT, headerOlderThanData: true });
    });
    await userEvent.click(screen.getByRole('button', { name: 'Lock and restore the header…' }));
    expect(await screen.findByText(errorSentence('IO'))).toBeTruthy();
    expect(useCoffer.getState().headerRestoreAsked).toBeNull();
    expect(useCoffer.getState().vault?.locked).toBe(false);
  });

  /** Renames notes.txt, which the back end refuses with INTEGRITY; the words shown. */
  async function refusedRename(headerOlderThanData: boolean): Promise<string | null> {
    await browse(ROOT, { 'entries.rename': () => new Refusal('INTEGRITY') });
    act(() => {
      showVault({ ...VAULT, headerOlderThanData });
    });
    const user = userEvent.setup();
    await user.click(row('notes.txt'));
    await user.keyboard('{F2}');
    // The field takes the keyboard in the next frame; keys sent before would go to the table.
    const field = screen.getByRole('textbox', { name: 'New name for notes.txt' });
    await waitFor(() => {
      expect(document.activeElement).toBe(field);
    });
    await user.keyboard('{Control>}a{/Control}kept.txt{Enter}');
    return (await screen.findByText(/^(Part of the vault|The vault header in use)/u)).textContent;
  }

  it('words a refused change as that refusal, where it would otherwise speak of damage', async () => {
    expect(await refusedRename(true)).toBe(errorSentence('INTEGRITY', CHANGE_REFUSED_FOR_OLDER_HEADER));
    cleanup();
    expect(await refusedRename(false)).toBe(errorSentence('INTEGRITY'));
  });
});

describe('an empty folder from the keyboard', () => {
  it('keeps the keyboard: opened with Enter it takes the focus, and Backspace or Alt+Up goes back up', async () => {
    await browse(ROOT, { 'entries.list': ({ path }) => (path === '/Reports' ? [] : ROOT) });
    const user = userEvent.setup();
    screen.getByRole('grid', { name: 'Files' }).focus();
    await user.keyboard('{Home}{Enter}');
    const empty = await screen.findByRole('group', { name: 'Empty folder' });
    expect(document.activeElement).toBe(empty);
    expect(empty.textContent).toBe('This folder is empty.Drop files here or use “Add files…”.');
    expect(empty.getAttribute('aria-keyshortcuts')).toBe('Backspace Alt+ArrowUp Shift+F10');
    await user.keyboard('{Backspace}');
    await waitFor(() => {
      expect(document.activeElement).toBe(screen.getByRole('grid', { name: 'Files' }));
    });
    expect(row('Reports').getAttribute('aria-selected')).toBe('true');
    await user.keyboard('{Enter}');
    await screen.findByRole('group', { name: 'Empty folder' });
    await user.keyboard('{Alt>}{ArrowUp}{/Alt}');
    await screen.findByRole('grid', { name: 'Files' });
  });

  it('opens the folder’s menu on Shift+F10', async () => {
    await browse([]);
    // At the top of the vault there is no folder to go up to.
    expect(screen.getByRole('group', { name: 'Empty folder' }).getAttribute('aria-keyshortcuts')).toBe(
      'Shift+F10',
    );
    screen.getByRole('group', { name: 'Empty folder' }).focus();
    await userEvent.keyboard('{Shift>}{F10}{/Shift}');
    expect(await screen.findByRole('menuitem', { name: 'New folder' })).toBeTruthy();
  });
});

describe('landmarks', () => {
  it('puts the folders and the files in the main region, headed by the vault’s name', async () => {
    await browse(ROOT);
    const main = screen.getByRole('main');
    expect(within(main).getByRole('heading', { level: 1 }).textContent).toBe(VAULT.name);
    expect(within(main).getByRole('navigation', { name: 'Folders' })).toBeTruthy();
    expect(within(main).getByRole('grid', { name: 'Files' })).toBeTruthy();
  });
});

describe('while an add brings files in', () => {
  const committed = (filesFinished: number) => {
    act(() => {
      jobEvent({ jobId: 'j1', vaultId: VAULT.vaultId, kind: 'add', type: 'committed', filesFinished });
    });
  };

  it('keeps the selection made while a refresh’s rows were on their way', async () => {
    let answer: (() => void) | undefined;
    let held = false;
    await browse(ROOT, {
      'entries.list': () =>
        held
          ? new Promise<readonly VaultEntry[]>((resolve) => {
              answer = () => {
                resolve([...ROOT, file('/scan.pdf', 9)]);
              };
            })
          : ROOT,
    });
    const user = userEvent.setup();
    await user.click(row('notes.txt'));
    held = true;
    committed(1);
    await waitFor(() => {
      expect(answer).toBeDefined();
    });
    await user.keyboard('{ArrowDown}');
    expect(status()).toMatch(/^3 items · 1 selected \(200 B\)/);
    await act(async () => {
      answer?.();
      await Promise.resolve();
    });
    await waitFor(() => {
      expect(status()).toMatch(/^4 items · 1 selected \(200 B\)/);
    });
    expect(row('report-draft.txt').getAttribute('aria-selected')).toBe('true');
  });

  it('follows the folder an add puts its files into when that folder is renamed while the add runs', async () => {
    await browse(ROOT, {
      'entries.list': list,
      'dialog.pickFiles': () => ({ handle: 'files-1', label: '1 file', count: 1 }),
      'job.add': () => ({ jobId: 'add-1' }),
      'entries.rename': () => folder('/Old reports'),
    });
    const user = userEvent.setup();
    await user.dblClick(row('Reports'));
    await waitFor(() => {
      expect(crumbs()).toEqual(['Personal', 'Reports']);
    });
    await user.click(screen.getByRole('button', { name: 'Add files…' }));
    act(() => {
      jobEvent({ jobId: 'add-1', vaultId: 'v1', kind: 'add', type: 'started' });
    });
    // Shown once it has run a while (SHOW_RUNNING_AFTER_MS, on real timers here).
    const job = await screen.findByRole('listitem', { name: 'Add job' }, { timeout: 3000 });
    await waitFor(() => {
      expect(within(job).getByText('Into Personal/Reports')).toBeTruthy();
    });

    await user.click(screen.getByRole('button', { name: 'Personal' }));
    await waitFor(() => {
      expect(status()).toMatch(/^3 items/);
    });
    await user.click(row('Reports'));
    await user.keyboard('{F2}');
    const field = await screen.findByRole('textbox', { name: 'New name for Reports' });
    await user.clear(field);
    await user.type(field, 'Old reports{Enter}');
    await waitFor(() => {
      expect(within(job).getByText('Into Personal/Old reports')).toBeTruthy();
    });
  });

  it('leaves a refusal’s words up, and a refused rename’s name in its field, through the refreshes', async () => {
    await browse(ROOT, {
      'entries.list': () => ROOT,
      'entries.rename': () => new Refusal('BUSY'),
    });
    const user = userEvent.setup();
    await user.click(row('notes.txt'));
    await user.keyboard('{F2}');
    const editing = await screen.findByRole('textbox', { name: 'New name for notes.txt' });
    await waitFor(() => {
      expect(document.activeElement).toBe(editing);
    });
    await user.keyboard('ideas{Enter}');
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('The vault is busy with another task.');
    committed(1);
    committed(2);
    await settle();
    expect(screen.getByRole('alert').textContent).toContain('The vault is busy with another task.');
    const field = screen.getByRole<HTMLInputElement>('textbox', { name: 'New name for notes.txt' });
    expect(field.value).toBe('ideas.txt');
  });

  it('shows a slow search’s answer though a refresh asked again meanwhile, and says it is searching', async () => {
    const answers: ((found: readonly VaultEntry[]) => void)[] = [];
    await browse(ROOT, {
      'entries.search': () =>
        new Promise((resolve) => {
          answers.push(resolve);
        }),
    });
    await userEvent.type(searchField(), 'notes');
    await waitFor(() => {
      expect(answers.length).toBeGreaterThan(0);
    });
    const typed = answers.length;
    expect(status()).toMatch(/^Searching…/);
    committed(1);
    await waitFor(() => {
      expect(answers.length).toBe(typed + 1);
    });
    await act(async () => {
      answers[typed - 1]?.([file('/notes.txt', 1500)]);
      await Promise.resolve();
    });
    await screen.findByRole('grid', { name: 'Search results' });
    expect(status()).toMatch(/^1 result/);
  });
});
