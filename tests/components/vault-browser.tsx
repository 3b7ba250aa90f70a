/**
 * The browser of an unlocked vault as App mounts it, over a fake back end, for the tests of the file table, the
 * folder tree and the browser around them; and the one piece of layout those need from jsdom, which does none.
 */
import { render, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, vi } from 'vitest';

import { installApi } from '../../src/renderer/api.js';
import { Browser } from '../../src/renderer/components/Browser.js';
import { clearVaultContents, showVault } from '../../src/renderer/store.js';
import { ROW_HEIGHT } from '../../src/renderer/virtual-rows.js';
import type { Channel, FolderTree, RequestOf, VaultEntry } from '../../src/shared/contract.js';
import { fakeApi, type FakeApi, type Handlers } from './fake-api.js';
import { NO_CAPABILITIES, requests, SETTINGS, tree, VAULT } from './fixtures.js';

/** The body's height in the tests: ten rows in view. */
const VIEWPORT_ROWS = 10;

/**
 * Gives the file table's scrolling body a height, and elements a working `scrollTo`, for each test of the file
 * calling it. \@tanstack/react-virtual draws the rows that fit the scroll element's `clientHeight`, scrolls it by
 * `scrollTo` (up to `scrollHeight`) and reads `scrollTop` on its 'scroll' event; jsdom lays nothing out, so it
 * reports heights of 0 (and no rows are drawn), and has no `Element.scrollTo`.
 */
export function withViewport(): void {
  const isBody = (element: Element): element is HTMLElement =>
    element instanceof HTMLElement && element.dataset.testid === 'grid-body';
  /** The body holds one element as tall as all the rows. */
  const contentHeight = (element: HTMLElement): number =>
    parseFloat((element.firstElementChild as HTMLElement | null)?.style.height ?? '') || 0;
  beforeEach(() => {
    vi.spyOn(Element.prototype, 'clientHeight', 'get').mockImplementation(function (this: Element) {
      return isBody(this) ? VIEWPORT_ROWS * ROW_HEIGHT : 0;
    });
    vi.spyOn(Element.prototype, 'scrollHeight', 'get').mockImplementation(function (this: Element) {
      return isBody(this) ? Math.max(contentHeight(this), VIEWPORT_ROWS * ROW_HEIGHT) : 0;
    });
    Element.prototype.scrollTo = function (this: Element, options?: ScrollToOptions | number) {
      if (typeof options !== 'object' || options.top === undefined) return;
      this.scrollTop = Math.max(0, Math.min(options.top, this.scrollHeight - this.clientHeight));
      // As a browser does, the 'scroll' event comes with the next frame.
      requestAnimationFrame(() => this.dispatchEvent(new Event('scroll')));
    };
  });
  afterEach(() => {
    vi.restoreAllMocks();
    // @ts-expect-error -- jsdom has none; the tests gave it one.
    delete Element.prototype.scrollTo;
  });
}

/**
 * The rows of the file table now in the DOM (the header row is not one). Found even while a menu or dialog hides
 * the rest of the window from assistive technology, as it stays in sight.
 */
export function drawnRows(): HTMLElement[] {
  const grid = screen.getByRole('grid', { hidden: true });
  return within(grid)
    .queryAllByRole('row', { hidden: true })
    .filter((row) => row.hasAttribute('aria-selected'));
}

/** The status bar's words. */
export function statusBar(): string {
  return screen.getByRole('status', { name: 'Status' }).textContent;
}

/** The status bar's words before the vault's size, which most tests do not look at. */
export function itemsStatus(): string {
  return statusBar().replace(/ · vault [^·]+$/u, '');
}

export interface Browsed {
  readonly api: FakeApi;
  /** The requests sent on `channel`, in order. */
  readonly requests: <C extends Channel>(channel: C) => RequestOf<C>[];
}

/**
 * Renders the browser of VAULT whose root holds `root`, with `folders` in the sidebar, answering what it asks on
 * opening and whatever `handlers` add; resolves once the rows and the folder tree are shown.
 */
export async function browse(
  root: readonly VaultEntry[],
  handlers: Handlers = {},
  folders: FolderTree = tree('/'),
): Promise<Browsed> {
  const api = fakeApi({
    'entries.list': () => root,
    'entries.tree': () => folders,
    // As if the root held all there is.
    'vault.totals': () => ({
      files: root.filter((entry) => entry.type === 'file').length,
      folders: root.filter((entry) => entry.type === 'folder').length,
      totalBytes: root.reduce((sum, entry) => sum + (entry.type === 'file' ? entry.size : 0), 0),
    }),
    'app.capabilities': () => NO_CAPABILITIES,
    'security.logProblems': () => [],
    'settings.get': () => SETTINGS,
    ...handlers,
  });
  installApi(api);
  clearVaultContents();
  showVault(VAULT);
  render(<Browser vault={VAULT} />);
  await screen.findByRole('navigation', { name: 'Folders' });
  return { api, requests: (channel) => requests(api, channel) };
}
