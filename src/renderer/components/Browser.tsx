import '../browser/browser.css';

import {
  ArrowDownToLine,
  ChevronRight,
  Eye,
  FilePlus,
  FolderInput,
  FolderPlus,
  Info,
  Lock,
  Search,
  SearchX,
  Settings,
  ShieldCheck,
} from 'lucide-react';
import { useCallback, useEffect, useMemo, useRef, useState, type DragEvent } from 'react';

import type { FolderTree as Tree, TakenNames, VaultEntry, VaultSummary } from '../../shared/contract.js';
import { childPath } from '../../shared/vault-path.js';
import { ApiError, call, describeError, registerDroppedFiles } from '../api.js';
import { CHANGE_REFUSED_FOR_OLDER_HEADER, type SpecificErrorWords } from '../error-messages.js';
import {
  fileDrop,
  isFileDrag,
  useFolderDrop,
  type FileDrop,
  type FolderDropHandlers,
} from '../browser/drag.js';
import {
  DeleteDialog,
  ExistingNamesDialog,
  MoveDialog,
  RestoreDialog,
  type ExistingChoice,
} from '../browser/dialogs.js';
import { EntryMenu, type EntryAction } from '../browser/EntryMenu.js';
import {
  describeItems,
  describeNameClash,
  folderLabel,
  findNameClash,
  type ChangeOfNames,
  freeName,
  isWithin,
  movedPath,
  sameFolders,
  sortEntries,
  type SortOrder,
} from '../browser/entries.js';
import { EmptyFolder } from '../browser/EmptyFolder.js';
import { FileTable } from '../browser/FileTable.js';
import { FolderTree } from '../browser/FolderTree.js';
import { WorkStatus, workThatRunsAlone, type WorkUnderWay } from '../browser/WorkStatus.js';
import { crumbs, formatSize, nameOf, parentOf } from '../format.js';
import { focusIsNowhere } from '../focus.js';
import { lockVault, useLockShortcut } from '../lock.js';
import { useCapabilities } from '../host.js';
import { useOpenWithApp } from '../open-with.js';
import { plural } from '../../shared/plural.js';
import {
  askHeaderRestore,
  followMovedFolders,
  placeJob,
  setSelection,
  showFolder,
  useCoffer,
} from '../store.js';
import { ErrorText } from './ErrorText.js';
import { JobsPanel } from './JobsPanel.js';
import { PreviewDialog } from './PreviewDialog.js';
import { SettingsDialog } from './SettingsDialog.js';
import { VaultDetails } from './VaultDetails.js';
import { VaultNotices } from './VaultNotices.js';
import { SecurityDialog } from '../security/SecurityDialog.js';
import { useLogProblemNotices } from '../security/log-problem-notices.js';

const PANELS = [
  { panel: 'details', label: 'Vault details', Icon: Info },
  { panel: 'security', label: 'Security', Icon: ShieldCheck },
  { panel: 'settings', label: 'Settings', Icon: Settings },
] as const;

/** Most search results asked for at once; the status bar says when there may be more. */
const SEARCH_LIMIT = 1000;

type DialogState =
  | { kind: 'delete'; entries: readonly VaultEntry[] }
  | { kind: 'move'; entries: readonly VaultEntry[] }
  | { kind: 'restore'; entries: readonly VaultEntry[]; handle: string; label: string }
  | ({ kind: 'existing'; source: string; destination: string } & TakenNames);

/**
 * Gives the keyboard to the file table: the search field's Down/Enter, and the focus back after a dialog or after
 * the jobs panel went with its last job.
 */
function focusFileTable(): void {
  document.querySelector<HTMLElement>('.file-grid, .empty-folder')?.focus();
}

/** What is selected now, of `rows`: a refresh keeps the selection as it is when its rows come. */
function keptSelection(rows: readonly VaultEntry[]): string[] {
  const { selection } = useCoffer.getState();
  return rows.filter((row) => selection.has(row.path)).map((row) => row.path);
}

/**
 * An unlocked vault: the folder tree, breadcrumbs and search, the current folder (or the search results) as a
 * table that is also a drop target, and a status bar with the jobs. Search results, the tree and dialogs live in
 * this component's state, so they go with it when the vault locks.
 */
export function Browser({ vault }: { vault: VaultSummary }) {
  const { vaultId } = vault;
  const folder = useCoffer((state) => state.folder);
  const entries = useCoffer((state) => state.entries);
  const selection = useCoffer((state) => state.selection);
  const jobsEnded = useCoffer((state) => state.jobsEnded);
  const addsCommitted = useCoffer((state) => state.addsCommitted);
  const headerOlderThanData = useCoffer((state) => state.vault?.headerOlderThanData === true);
  const adding = useCoffer((state) =>
    state.jobs.some((job) => job.kind === 'add' && job.status === 'running'),
  );
  const [error, setError] = useState<string | null>(null);
  const [tree, setTree] = useState<Tree | null>(null);
  const [vaultBytes, setVaultBytes] = useState<number | null>(null);
  const [sort, setSort] = useState<SortOrder>({ column: 'name', ascending: true });
  const [query, setQuery] = useState('');
  const [results, setResults] = useState<readonly VaultEntry[] | null>(null);
  /** The latest search failed (nothing was searched, so no results), until other words are searched. */
  const [searchFailed, setSearchFailed] = useState(false);
  /** Raised to ask for the search again, when a change may have moved what it found. */
  const [searchRound, setSearchRound] = useState(0);
  // The row being renamed in place, and the name to show in its field when a refused rename opens it again.
  const [renaming, setRenaming] = useState<{ path: string; draft?: string } | null>(null);
  const [menu, setMenu] = useState<{ x: number; y: number } | null>(null);
  const [dialog, setDialog] = useState<DialogState | null>(null);
  const [dragging, setDragging] = useState(false);
  const [working, setWorking] = useState<WorkUnderWay | null>(null);
  const [previewing, setPreviewing] = useState<VaultEntry | null>(null);
  const [panel, setPanel] = useState<(typeof PANELS)[number]['panel'] | null>(null);
  const dragDepth = useRef(0);
  /** How many loads of rows, and of the tree with the vault's size, were started: only the latest one's is shown. */
  const loaded = useRef({ rows: 0, tree: 0 });
  /** The folder the latest load asked for, and what it selects there, until its rows are shown. */
  const wanted = useRef<{ path: string; select: readonly string[] | 'kept' } | null>(null);
  /** The words searched for, how many searches were sent, and the number of the one whose answer is shown. */
  const searchAsked = useRef({ text: '', sent: 0, shown: 0 });
  const searchField = useRef<HTMLInputElement>(null);
  const searching = query.trim() !== '';
  useLogProblemNotices(vaultId, entries, jobsEnded);

  /**
   * Runs what the person asked for, showing its failure in words (`specific`'s for the codes it has); earlier words
   * go unless `keepError`.
   */
  const run = useCallback(
    async (
      action: () => Promise<unknown>,
      keepError = false,
      specific?: SpecificErrorWords,
    ): Promise<void> => {
      if (!keepError) setError(null);
      try {
        await action();
      } catch (cause) {
        setError(describeError(cause, specific));
      }
    },
    [],
  );
  /** Runs a change of the vault's as {@link run} does, saying a refusal for an older header as that. */
  const change = (action: () => Promise<unknown>): Promise<void> =>
    run(action, false, headerOlderThanData ? CHANGE_REFUSED_FOR_OLDER_HEADER : undefined);

  /**
   * Shows `path` (selecting `select`; 'kept': what is selected when its rows come, of those still there), and
   * unless `changed` is false refreshes the tree and the vault's size, which only a change moves (this window's
   * own: no other program can open the vault meanwhile). With `rowsShown`, the folder's entries are already in the
   * store (the root's come with the unlock's answer), so they are not asked for. A `refresh` (a job's work, not
   * the person's) leaves the words of an earlier failure, which the person may not have read yet.
   */
  const load = useCallback(
    (
      path: string,
      select: readonly string[] | 'kept' = [],
      { changed = true, rowsShown = false, refresh = false } = {},
    ): Promise<void> =>
      run(async () => {
        const round = { rows: ++loaded.current.rows, tree: changed ? ++loaded.current.tree : 0 };
        wanted.current = { path, select };
        const listed = rowsShown ? undefined : call('entries.list', { vaultId, path });
        // Asked together, but the rows are shown as soon as they come: the tree and the vault's size (walks of
        // every folder and of every entry) must not hold back the first rows after an unlock.
        const refreshing = changed
          ? { folders: call('entries.tree', { vaultId }), totals: call('vault.totals', { vaultId }) }
          : undefined;
        // Awaited below, unless the rows fail first: then their failures are the same news, already shown.
        refreshing?.folders.catch(() => undefined);
        refreshing?.totals.catch(() => undefined);
        let rows: readonly VaultEntry[] | undefined;
        try {
          rows = await listed;
        } catch (error) {
          // A later load's answer is the one that counts, whichever comes last, failed or not.
          if (round.rows === loaded.current.rows) {
            wanted.current = null;
            throw error;
          }
        }
        if (round.rows === loaded.current.rows) {
          wanted.current = null;
          const chosen = select === 'kept' ? keptSelection(rows ?? []) : select;
          if (rows) showFolder(path, rows);
          if (chosen.length > 0) setSelection(new Set(chosen));
        }
        // The tree and the size too come from the latest load that asked for them, which a later load of rows
        // alone (a folder opened) does not replace.
        if (!refreshing) return;
        const folders = await refreshing.folders;
        // The same object when no folder changed (most changes are to files): the sidebar is then not drawn
        // again, which for a vault of many folders took a React Aria tree about 0.2 s after each add. Its folders'
        // times are then the older ones; nothing here shows them.
        if (round.tree === loaded.current.tree)
          setTree((before) => (before !== null && sameFolders(before, folders) ? before : folders));
        const { totalBytes } = await refreshing.totals;
        if (round.tree === loaded.current.tree) setVaultBytes(totalBytes);
      }, refresh),
    [run, vaultId],
  );

  useEffect(() => {
    const { folder, listed } = useCoffer.getState();
    void load(folder, [], { rowsShown: listed });
  }, [load]);

  // A finished job, or an add's rows committed while it runs, may have changed the folder, or what a search finds:
  // show them again. The folder being opened, if one is: the one shown is about to go.
  useEffect(() => {
    if (jobsEnded === 0 && addsCommitted === 0) return;
    const shownFolder = useCoffer.getState().folder;
    const { path, select } = wanted.current ?? { path: shownFolder, select: 'kept' as const };
    void load(path, select, { refresh: true });
    setSearchRound((round) => round + 1);
  }, [jobsEnded, addsCommitted, load]);

  // Words of an earlier failure (a refused move, say) go once the person types a search: they are about something
  // else now.
  useEffect(() => {
    setError(null);
  }, [query]);

  // Search as you type: only the latest answer for the words in the field is shown. An answer to older words is
  // dropped; one still on its way when a change asks again is not (during an add that is each second, and a slow
  // search would otherwise never be answered).
  useEffect(() => {
    const text = query.trim();
    const asked = searchAsked.current;
    if (asked.text !== text) {
      asked.text = text;
      asked.shown = asked.sent;
    }
    if (text === '') {
      setResults(null);
      setSearchFailed(false);
      return;
    }
    const number = ++asked.sent;
    // A failure is old news once other words are searched: "Searching…" until they are answered.
    setSearchFailed(false);
    const latest = (): boolean => {
      if (asked.text !== text || number <= asked.shown) return false;
      asked.shown = number;
      return true;
    };
    call('entries.search', { vaultId, query: text, limit: SEARCH_LIMIT }).then(
      (found) => {
        if (!latest()) return;
        setSearchFailed(false);
        setResults(found);
      },
      (cause: unknown) => {
        if (!latest()) return;
        setError(describeError(cause));
        // Not "Searching…" beside the words saying it failed, nor "No names match": nothing was searched.
        setSearchFailed(true);
        setResults(null);
      },
    );
  }, [query, vaultId, searchRound]);

  // A dialog gives the focus back to what had it when it opened; from the context menu that was a menu item, gone
  // with the menu, so the focus would be nowhere and the keyboard lost. The table takes it then, after React Aria's
  // own attempt (in the next frame).
  useEffect(() => {
    if (dialog !== null) return;
    const frame = requestAnimationFrame(() => {
      if (focusIsNowhere()) focusFileTable();
    });
    return () => {
      cancelAnimationFrame(frame);
    };
  }, [dialog]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'f') {
        event.preventDefault();
        searchField.current?.focus();
        searchField.current?.select();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => {
      window.removeEventListener('keydown', onKey);
    };
  }, []);

  const shown = searching ? (results ?? []) : entries;
  const rows = useMemo(() => sortEntries(shown, sort), [shown, sort]);
  const selected = useMemo(() => rows.filter((row) => selection.has(row.path)), [rows, selection]);

  /** Goes to a folder; `changed` when something was changed there (the tree and the vault's size then too). */
  const open = (path: string, select: readonly string[] = [], changed = false): Promise<void> => {
    setQuery('');
    return load(path, select, { changed });
  };
  /** A folder is shown; a file is previewed (decrypted in memory only), as Enter or a double-click opens it. */
  const openEntry = (entry: VaultEntry): void => {
    if (entry.type === 'folder') void open(entry.path);
    else setPreviewing(entry);
  };
  const goUp = (): void => {
    if (!searching && folder !== '/') void open(parentOf(folder), [folder]);
  };

  const move = (paths: readonly string[], destination: string): Promise<void> =>
    change(async () => {
      setDialog(null);
      const movable = paths.filter((path) => parentOf(path) !== destination);
      if (movable.length === 0) return;
      let moved: readonly VaultEntry[];
      try {
        moved = await call('entries.move', { vaultId, paths: movable, destination });
      } catch (error) {
        if (error instanceof ApiError && error.code === 'ALREADY_EXISTS') {
          const clash = await nameClashIn(destination, movable.map(nameOf), 'move');
          if (clash !== undefined) {
            setError(clash);
            return;
          }
        }
        throw error;
      }
      followMovedFolders(
        movable.flatMap((from, index) => {
          const to = moved[index]?.path;
          return to === undefined ? [] : [{ from, to }];
        }),
      );
      // Moved from a search's results, the folder shown (or one above it) may have gone too: follow it there.
      let shown = folder;
      let holder = '';
      movable.forEach((path, index) => {
        const now = moved[index]?.path;
        // The deepest moved folder holding it is the one whose new place it is under.
        if (now === undefined || path.length <= holder.length || !isWithin(folder, path)) return;
        holder = path;
        shown = movedPath(folder, path, now);
      });
      setSearchRound((round) => round + 1);
      await load(shown);
    });

  /**
   * Which name a move or rename refused for a name clash met in `destination`, in words (the code's own words say
   * only that some name did); `names` are the names it brought, `leaving` the paths whose names go from there.
   */
  const nameClashIn = async (
    destination: string,
    names: readonly string[],
    change: ChangeOfNames,
    leaving: readonly string[] = [],
  ): Promise<string | undefined> => {
    let there: readonly VaultEntry[];
    try {
      there = await call('entries.list', { vaultId, path: destination });
    } catch {
      return undefined; // the refusal's own words then, rather than those of this look
    }
    const clash = findNameClash(
      names,
      there.filter((entry) => !leaving.includes(entry.path)).map((entry) => entry.name),
    );
    return clash && describeNameClash(clash, folderLabel(vault.name, destination), change);
  };

  const capabilities = useCapabilities();
  /**
   * Starts adding what `source` names; with `onExisting` 'ask' (the first time), asks what to do instead when names
   * it brings are taken.
   */
  const startAdd = async (
    source: string,
    destination: string,
    onExisting: ExistingChoice | 'ask' = 'ask',
  ): Promise<void> => {
    const started = await call('job.add', { vaultId, source, destination, onExisting });
    if ('taken' in started) setDialog({ kind: 'existing', source, destination, ...started.taken });
    else placeJob(vaultId, started.jobId, { into: destination });
  };

  const addAnyway = (source: string, destination: string, onExisting: ExistingChoice): Promise<void> =>
    change(async () => {
      setDialog(null);
      await startAdd(source, destination, onExisting);
    });

  const addFiles = ({ files, folders }: FileDrop, destination: string): Promise<void> => {
    if (folders > 0 && !capabilities.folderDrops) {
      // Nothing is added, rather than the files without the folders: a drop is taken whole or not at all.
      setError(
        'A dropped folder cannot be added in this window, which gets no path for it. Use “Add folder…”.',
      );
      return Promise.resolve();
    }
    return change(async () => {
      if (files.length === 0) return;
      // Refused here as the back end refuses the add, before the drop's bytes cross to it for nothing.
      if (vault.readOnly) throw new ApiError('READ_ONLY', 'The vault is read-only.');
      if (headerOlderThanData) throw new ApiError('INTEGRITY', 'The header in use is older than the data.');
      const { handle } = await registerDroppedFiles(files);
      await startAdd(handle, destination);
    });
  };

  const dropHandlers: FolderDropHandlers = {
    onMove: (paths, destination) => void move(paths, destination),
    onAddFiles: (files, destination) => void addFiles(files, destination),
  };
  // The sidebar's handlers stay the same objects from render to render, calling the latest functions, so the
  // memoised tree is not drawn again at each keystroke of a search.
  const latest = useRef({ open, move, addFiles });
  useEffect(() => {
    latest.current = { open, move, addFiles };
  });
  const treeHandlers = useMemo(
    () => ({
      onOpen: (path: string) => void latest.current.open(path),
      onMove: (paths: readonly string[], destination: string) => void latest.current.move(paths, destination),
      onAddFiles: (drop: FileDrop, destination: string) => void latest.current.addFiles(drop, destination),
    }),
    [],
  );

  const rename = (entry: VaultEntry, newName: string | null): Promise<void> =>
    change(async () => {
      setRenaming(null);
      if (newName === null) return;
      let renamed: VaultEntry;
      try {
        renamed = await call('entries.rename', { vaultId, path: entry.path, newName });
      } catch (error) {
        // As a file manager does: a refused name stays in its field, to be mended rather than typed again.
        // A vault busy with a delete, a check or an add being stopped refuses it too: the name waits in its field.
        if (error instanceof ApiError && ['ALREADY_EXISTS', 'INVALID_NAME', 'BUSY'].includes(error.code)) {
          setRenaming({ path: entry.path, draft: newName });
        }
        const clash =
          error instanceof ApiError && error.code === 'ALREADY_EXISTS'
            ? await nameClashIn(parentOf(entry.path), [newName], 'rename', [entry.path])
            : undefined;
        if (clash === undefined) throw error;
        setError(clash);
        return;
      }
      followMovedFolders([{ from: entry.path, to: renamed.path }]);
      if (!searching) return load(parentOf(renamed.path), [renamed.path]);
      // Stays in the results, renamed, until the search runs again (other words, or a change to the vault), as
      // results inside it do. Selected with the same change, so that the table's focus follows it to its new place
      // among the results.
      const moved = (path: string): string => movedPath(path, entry.path, renamed.path);
      setSelection(new Set([renamed.path]));
      setResults(
        (before) =>
          before?.map((row) =>
            row.path === entry.path
              ? renamed
              : isWithin(row.path, entry.path)
                ? { ...row, path: moved(row.path) }
                : row,
          ) ?? null,
      );
      await load(moved(folder), [renamed.path]);
    });

  const newFolder = (): Promise<void> =>
    change(async () => {
      const name = freeName(
        'New folder',
        entries.map((entry) => entry.name),
      );
      const created = await call('entries.mkdir', { vaultId, path: childPath(folder, name) });
      await open(folder, [created.path], true);
      setRenaming({ path: created.path });
    });

  const remove = (doomed: readonly VaultEntry[]): Promise<void> =>
    change(async () => {
      setDialog(null);
      // A large delete takes seconds (its packs are compacted): the status bar says it is under way.
      const deleting = workThatRunsAlone(`Deleting ${describeItems(doomed)}`);
      setWorking(deleting);
      try {
        await call('entries.remove', { vaultId, paths: doomed.map((entry) => entry.path) });
      } finally {
        // Unless another delete has said its own words since.
        setWorking((shown) => (shown === deleting ? null : shown));
      }
      const gone = (path: string): boolean => doomed.some((entry) => isWithin(path, entry.path));
      setResults((before) => before?.filter((entry) => !gone(entry.path)) ?? null);
      // Deleted from a search's results, the folder shown may be gone: the nearest folder above it is shown.
      let shown = folder;
      while (gone(shown)) shown = parentOf(shown);
      await load(shown);
    });

  const addPicked = (): Promise<void> =>
    change(async () => {
      const picked = await call('dialog.pickFiles', { purpose: 'add-files', vaultId });
      if (picked !== null) await startAdd(picked.handle, folder);
    });

  const addFolder = (): Promise<void> =>
    change(async () => {
      const picked = await call('dialog.pickFolder', { purpose: 'add-folder', vaultId });
      if (picked !== null) await startAdd(picked.handle, folder);
    });

  const restoreSelection = (): Promise<void> =>
    run(async () => {
      const chosen = selected;
      const picked = await call('dialog.pickFolder', { purpose: 'restore-destination', vaultId });
      if (picked !== null)
        setDialog({ kind: 'restore', entries: chosen, handle: picked.handle, label: picked.label });
    });

  const restore = (
    chosen: readonly VaultEntry[],
    destination: { handle: string; label: string },
    overwrite: boolean,
  ): Promise<void> =>
    run(async () => {
      setDialog(null);
      const paths = chosen.map((entry) => entry.path);
      const { jobId } = await call('job.restore', {
        vaultId,
        paths,
        destination: destination.handle,
        overwrite,
      });
      placeJob(vaultId, jobId, { to: destination.label });
    });

  const openWith = useOpenWithApp(vaultId, setError);
  const showInFolder = useMemo(
    () =>
      capabilities.showInFolder
        ? (jobId: string) => void run(() => call('job.showInFolder', { jobId }))
        : undefined,
    [capabilities.showInFolder, run],
  );

  const lock = (): Promise<void> => run(() => lockVault(vaultId));
  const [lockingToRestore, setLockingToRestore] = useState(false);
  const lockToRestoreHeader = (): Promise<void> =>
    run(async () => {
      // One lock and one file dialog, however often the button is pressed meanwhile.
      setLockingToRestore(true);
      try {
        await lockVault(vaultId);
      } finally {
        setLockingToRestore(false);
      }
      askHeaderRestore(vaultId);
    });
  useLockShortcut(
    useCallback((cause: unknown) => {
      setError(describeError(cause));
    }, []),
  );

  const onMenuAction = (action: EntryAction): void => {
    const [first] = selected;
    switch (action) {
      case 'open':
        if (first) openEntry(first);
        break;
      case 'open-with':
        if (first) openWith.open(first);
        break;
      case 'show-in-folder':
        if (first) void open(parentOf(first.path), [first.path]);
        break;
      case 'restore':
        void restoreSelection();
        break;
      case 'rename':
        if (first) setRenaming({ path: first.path });
        break;
      case 'move':
        if (tree) setDialog({ kind: 'move', entries: selected });
        break;
      case 'new-folder':
        void newFolder();
        break;
      case 'delete':
        setDialog({ kind: 'delete', entries: selected });
        break;
    }
  };

  /**
   * Files from outside dragged over this element itself, not over a dialog drawn elsewhere in the page (React
   * passes a dialog's events up here all the same).
   */
  const filesOverWindow = (event: DragEvent): boolean =>
    isFileDrag(event) && event.currentTarget.contains(event.target as Node);

  const onDrop = (event: DragEvent): void => {
    if (!filesOverWindow(event)) return;
    event.preventDefault();
    void addFiles(fileDrop(event.dataTransfer), folder);
  };

  const selectedBytes = selected.reduce((sum, entry) => sum + entry.size, 0);
  const previewable = selected.length === 1 && selected[0]?.type === 'file' ? selected[0] : undefined;
  const here = folder === '/' ? vault.name : (crumbs(folder).at(-1)?.name ?? folder);

  return (
    // Files dropped anywhere in the window but a folder go to the folder shown; the contents area says so.
    <div
      className="browser"
      onDragEnter={(event) => {
        if (!filesOverWindow(event)) return;
        event.preventDefault();
        dragDepth.current += 1;
        setDragging(true);
      }}
      onDragOver={(event) => {
        if (!filesOverWindow(event)) return;
        event.preventDefault();
        event.dataTransfer.dropEffect = 'copy';
      }}
      onDragLeave={(event) => {
        if (!filesOverWindow(event)) return;
        dragDepth.current = Math.max(0, dragDepth.current - 1);
        if (dragDepth.current === 0) setDragging(false);
      }}
      // Before a folder row or breadcrumb takes the drop (and stops it here): the highlight ends either way.
      onDropCapture={() => {
        dragDepth.current = 0;
        setDragging(false);
      }}
      onDrop={onDrop}
    >
      <VaultNotices restoring={lockingToRestore} onRestoreHeader={() => void lockToRestoreHeader()} />
      <header className="toolbar">
        <nav className="breadcrumb" aria-label="Folder path">
          <Crumb
            path="/"
            name={vault.name}
            current={folder === '/'}
            onOpen={(path) => void open(path)}
            handlers={dropHandlers}
          />
          {crumbs(folder).map((crumb) => (
            <span key={crumb.path} className="crumb-part">
              <ChevronRight size={14} aria-hidden="true" className="muted" />
              <Crumb
                {...crumb}
                current={crumb.path === folder}
                onOpen={(path) => void open(path)}
                handlers={dropHandlers}
              />
            </span>
          ))}
        </nav>
        <label className="search">
          <Search size={14} aria-hidden="true" className="muted" />
          <input
            ref={searchField}
            type="search"
            aria-label="Search this vault"
            placeholder="Search this vault…"
            value={query}
            onChange={(event) => {
              setQuery(event.target.value);
            }}
            onKeyDown={(event) => {
              if (event.key === 'Escape') setQuery('');
              else if (event.key === 'ArrowDown' || event.key === 'Enter') {
                event.preventDefault();
                focusFileTable();
              }
            }}
          />
        </label>
        <div className="toolbar-actions">
          <button type="button" onClick={() => void addPicked()} title="Add files…" aria-label="Add files…">
            <FilePlus size={16} aria-hidden="true" />
            <span className="toolbar-label">Add files…</span>
          </button>
          <button type="button" onClick={() => void addFolder()} title="Add folder…" aria-label="Add folder…">
            <FolderInput size={16} aria-hidden="true" />
            <span className="toolbar-label">Add folder…</span>
          </button>
          <button type="button" onClick={() => void newFolder()} aria-label="New folder" title="New folder">
            <FolderPlus size={16} aria-hidden="true" />
          </button>
          <button
            type="button"
            disabled={previewable === undefined}
            title="Preview"
            aria-label="Preview"
            onClick={() => {
              setPreviewing(previewable ?? null);
            }}
          >
            <Eye size={16} aria-hidden="true" />
            <span className="toolbar-label">Preview</span>
          </button>
          <button
            type="button"
            disabled={selected.length === 0}
            onClick={() => void restoreSelection()}
            title="Restore to…"
            aria-label="Restore to…"
          >
            <ArrowDownToLine size={16} aria-hidden="true" />
            <span className="toolbar-label">Restore to…</span>
          </button>
          {PANELS.map(({ panel: which, label, Icon }) => (
            <button
              key={which}
              type="button"
              aria-label={label}
              title={label}
              onClick={() => {
                setPanel(which);
              }}
            >
              <Icon size={16} aria-hidden="true" />
            </button>
          ))}
          <button
            type="button"
            onClick={() => void lock()}
            aria-label="Lock vault"
            title="Lock vault (Ctrl+L)"
          >
            <Lock size={16} aria-hidden="true" />
            <span className="toolbar-label">Lock</span>
          </button>
        </div>
      </header>
      <ErrorText message={error} />
      <main className="browser-main">
        {/* The vault's name heads the page for screen readers; the path shows it to everyone. */}
        <h1 className="visually-hidden">{vault.name}</h1>
        {tree && (
          <FolderTree
            tree={tree}
            vaultName={vault.name}
            current={searching ? '' : folder}
            {...treeHandlers}
          />
        )}
        <section
          className={dragging ? 'drop-zone dragging' : 'drop-zone'}
          aria-label="Vault contents"
          data-testid="drop-zone"
          onContextMenu={(event) => {
            event.preventDefault();
            setSelection(new Set());
            setMenu({ x: event.clientX, y: event.clientY });
          }}
        >
          {rows.length > 0 ? (
            <FileTable
              key={`${folder}\n${query}`}
              rows={rows}
              sort={sort}
              onSort={setSort}
              searchedVault={searching ? vault.name : null}
              selection={selection}
              onSelect={setSelection}
              renaming={renaming?.path ?? null}
              renameDraft={renaming?.draft}
              onRenameStart={(path) => {
                setRenaming({ path });
              }}
              onRenameEnd={(entry, newName) => void rename(entry, newName)}
              onOpen={openEntry}
              onUp={goUp}
              onDelete={() => {
                // The store's selection may still hold search results no longer shown: only rows in view go.
                if (selected.length > 0) setDialog({ kind: 'delete', entries: selected });
              }}
              onMenu={(x, y) => {
                setMenu({ x, y });
              }}
              {...dropHandlers}
            />
          ) : searching ? (
            results !== null && (
              <div className="empty" role="status">
                <SearchX size={40} aria-hidden="true" className="muted" />
                <p>No names match “{query.trim()}”.</p>
                <p className="muted">Search looks at the names of every file and folder in this vault.</p>
              </div>
            )
          ) : (
            <EmptyFolder
              onUp={folder === '/' ? null : goUp}
              onMenu={(x, y) => {
                setMenu({ x, y });
              }}
            />
          )}
          {dragging && <div className="drop-label">Add to {here}</div>}
        </section>
      </main>
      <footer className="status-bar">
        {/* Busy while an add runs: its rows come each second, and a screen reader would read the figures each time. */}
        <span role="status" aria-label="Status" aria-busy={adding}>
          {searching
            ? searchFailed
              ? 'Search failed'
              : results === null
                ? 'Searching…'
                : results.length >= SEARCH_LIMIT
                  ? `First ${plural(results.length, 'result')}`
                  : plural(results.length, 'result')
            : plural(entries.length, 'item')}
          {selected.length > 0 && ` · ${selected.length.toLocaleString()} selected`}
          {/* A folder's size is not known without walking it: a sum that left it out would read as its size. */}
          {selected.length > 0 &&
            selected.every(({ type }) => type === 'file') &&
            ` (${formatSize(selectedBytes)})`}
          {vaultBytes !== null && ` · vault ${formatSize(vaultBytes)}`}
        </span>
        <WorkStatus work={working} />
      </footer>
      <JobsPanel onShowInFolder={showInFolder} onEmptied={focusFileTable} />
      {previewing && (
        <PreviewDialog
          vaultId={vaultId}
          entry={previewing}
          onOpenWith={
            openWith.available
              ? () => {
                  openWith.open(previewing);
                }
              : undefined
          }
          onClose={() => {
            setPreviewing(null);
          }}
        />
      )}
      {panel === 'details' && (
        <VaultDetails
          vaultId={vaultId}
          onClose={() => {
            setPanel(null);
          }}
        />
      )}
      {panel === 'security' && (
        <SecurityDialog
          vault={vault}
          onClose={() => {
            setPanel(null);
          }}
        />
      )}
      {panel === 'settings' && (
        <SettingsDialog
          onClose={() => {
            setPanel(null);
          }}
        />
      )}
      {menu && (
        <EntryMenu
          x={menu.x}
          y={menu.y}
          count={selected.length}
          folder={selected[0]?.type === 'folder'}
          canOpenWith={openWith.available}
          inSearch={searching}
          onAction={onMenuAction}
          onClose={() => {
            setMenu(null);
          }}
        />
      )}
      {openWith.notice}
      {dialog?.kind === 'delete' && (
        <DeleteDialog
          entries={dialog.entries}
          onConfirm={() => void remove(dialog.entries)}
          onCancel={() => {
            setDialog(null);
          }}
        />
      )}
      {dialog?.kind === 'move' && tree && (
        <MoveDialog
          entries={dialog.entries}
          tree={tree}
          vaultName={vault.name}
          onConfirm={(destination) =>
            void move(
              dialog.entries.map((entry) => entry.path),
              destination,
            )
          }
          onCancel={() => {
            setDialog(null);
          }}
        />
      )}
      {dialog?.kind === 'existing' && (
        <ExistingNamesDialog
          count={dialog.count}
          paths={dialog.paths}
          folderLabel={folderLabel(vault.name, dialog.destination)}
          onConfirm={(choice) => void addAnyway(dialog.source, dialog.destination, choice)}
          onCancel={() => {
            setDialog(null);
          }}
        />
      )}
      {dialog?.kind === 'restore' && (
        <RestoreDialog
          entries={dialog.entries}
          destinationLabel={dialog.label}
          onConfirm={(overwrite) => void restore(dialog.entries, dialog, overwrite)}
          onCancel={() => {
            setDialog(null);
          }}
        />
      )}
    </div>
  );
}

/** One breadcrumb: opens its folder, and takes rows dropped on it. The folder shown is marked as the current one. */
function Crumb({
  path,
  name,
  current,
  onOpen,
  handlers,
}: {
  path: string;
  name: string;
  current: boolean;
  onOpen: (path: string) => void;
  handlers: FolderDropHandlers;
}) {
  const drop = useFolderDrop(path, handlers);
  return (
    <button
      type="button"
      className={drop.over ? 'crumb drop-target' : 'crumb'}
      title={name}
      aria-current={current ? 'page' : undefined}
      onClick={() => {
        onOpen(path);
      }}
      {...drop.props}
    >
      {name}
    </button>
  );
}
