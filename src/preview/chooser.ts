import { randomBytes } from 'node:crypto';
import { readdir, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, sep } from 'node:path';

import type { DialogProvider } from '../app/backend.js';
import type { FilesPurpose } from '../shared/contract.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { ChooserEntry, ChooserListing, ChooserRequest } from './wire.js';

/** Most entries one folder listing returns; the rest are counted, not listed. */
const LISTING_MAX = 5000;

interface Pending {
  readonly request: ChooserRequest;
  readonly settle: (paths: string[] | null) => void;
}

/**
 * The preview's stand-in for native dialogs: a dialog request goes to the page (over the event socket) as a
 * {@link ChooserRequest}; the page lists folders under the allowed roots and answers with paths, which are checked
 * again here. One chooser is open at a time; a new one cancels the previous.
 */
export class ChooserDialogs implements DialogProvider {
  readonly #roots: readonly string[];
  readonly #announce: (request: ChooserRequest) => void;
  #pending: Pending | undefined;

  /** @param roots - The folders (and everything below them) the page may list and choose from. */
  constructor(roots: readonly string[], announce: (request: ChooserRequest) => void) {
    this.#roots = roots;
    this.#announce = announce;
  }

  pickFolder(purpose: ChooserRequest['purpose']): Promise<string | null> {
    return this.#ask('folder', purpose).then((paths) => paths?.[0] ?? null);
  }

  pickFiles(purpose: FilesPurpose, startIn?: string): Promise<string[] | null> {
    return this.#ask('files', purpose, startIn);
  }

  #ask(
    kind: ChooserRequest['kind'],
    purpose: ChooserRequest['purpose'],
    startIn?: string,
  ): Promise<string[] | null> {
    this.#pending?.settle(null);
    return new Promise((settle) => {
      const request: ChooserRequest = {
        chooserId: `c-${randomBytes(12).toString('hex')}`,
        kind,
        purpose,
        roots: [...this.#roots],
        // Only a folder the page may list anyway (it is listed through the same check).
        ...(startIn !== undefined && this.#within(startIn) ? { startIn } : {}),
      };
      this.#pending = {
        request,
        settle: (paths) => {
          if (this.#pending?.request === request) this.#pending = undefined;
          settle(paths);
        },
      };
      this.#announce(request);
    });
  }

  /** The chooser waiting for an answer, for a page that (re)connects. */
  get pending(): ChooserRequest | undefined {
    return this.#pending?.request;
  }

  /**
   * A folder's entries, folders first.
   * @throws {@link InvalidArgumentError} for a path outside the roots (after resolving links) or not a folder.
   */
  async list(path: unknown): Promise<ChooserListing> {
    const folder = await this.#inside(path);
    if (!(await stat(folder)).isDirectory()) throw new InvalidArgumentError('That is not a folder.');
    const entries: ChooserEntry[] = [];
    const found = await readdir(folder, { withFileTypes: true });
    for (const entry of found.slice(0, LISTING_MAX)) {
      if (entry.isDirectory()) entries.push({ name: entry.name, type: 'folder' });
      else if (entry.isFile()) entries.push({ name: entry.name, type: 'file' });
    }
    entries.sort((a, b) => (a.type === b.type ? a.name.localeCompare(b.name) : a.type === 'folder' ? -1 : 1));
    const parent = dirname(folder);
    return {
      path: folder,
      parent: this.#roots.includes(folder) || !this.#within(parent) ? null : parent,
      entries,
      omitted: Math.max(0, found.length - LISTING_MAX),
    };
  }

  /**
   * Answers the pending chooser: `null` cancels it; otherwise one folder (for a folder chooser) or files.
   * @throws {@link InvalidArgumentError} for another chooser's id, or paths outside the roots or of the wrong kind.
   */
  async answer(chooserId: unknown, paths: unknown): Promise<void> {
    const pending = this.#pending;
    if (!pending || pending.request.chooserId !== chooserId) {
      throw new InvalidArgumentError('No such chooser is open.');
    }
    if (paths === null) {
      pending.settle(null);
      return;
    }
    if (!Array.isArray(paths) || paths.length === 0 || paths.length > LISTING_MAX) {
      throw new InvalidArgumentError('Choose at least one item.');
    }
    const folder = pending.request.kind === 'folder';
    if (folder && paths.length !== 1) throw new InvalidArgumentError('Choose one folder.');
    const checked: string[] = [];
    for (const path of paths) {
      const inside = await this.#inside(path);
      const info = await stat(inside);
      if (folder ? !info.isDirectory() : !info.isFile()) {
        throw new InvalidArgumentError(folder ? 'Choose a folder.' : 'Choose files, not folders.');
      }
      checked.push(inside);
    }
    pending.settle(checked);
  }

  /** Cancels the pending chooser (the server is closing). */
  cancel(): void {
    this.#pending?.settle(null);
  }

  #within(path: string): boolean {
    return this.#roots.some(
      (root) => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep),
    );
  }

  async #inside(path: unknown): Promise<string> {
    if (typeof path !== 'string' || !isAbsolute(path) || path.includes('\0')) {
      throw new InvalidArgumentError('A chooser path must be absolute.');
    }
    let real: string;
    try {
      real = await realpath(path);
    } catch {
      throw new InvalidArgumentError('That folder or file does not exist.');
    }
    if (!this.#within(real))
      throw new InvalidArgumentError('That is outside the folders the preview may show.');
    return real;
  }
}

/** The roots a person's preview may choose from: their home folder and the app's data folder. */
export async function defaultChooserRoots(home: string, dataDir: string): Promise<string[]> {
  const roots = await Promise.all([home, join(dataDir)].map((root) => realpath(root).catch(() => undefined)));
  return [...new Set(roots.filter((root): root is string => root !== undefined))];
}
