import { defaultRangeExtractor, useVirtualizer } from '@tanstack/react-virtual';
import { ArrowDown, ArrowUp, File, Folder } from 'lucide-react';
import { useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent, type MouseEvent } from 'react';

import type { VaultEntry } from '../../shared/contract.js';
import { focusIsNowhere } from '../focus.js';
import { formatDate, formatSize, parentOf } from '../format.js';
import { OVERSCAN, ROW_HEIGHT } from '../virtual-rows.js';
import { endMoveDrag, startMoveDrag, useFolderDrop, type FolderDropHandlers } from './drag.js';
import { folderLabel, pathsBetween, type SortColumn, type SortOrder } from './entries.js';

export interface FileTableProps extends FolderDropHandlers {
  /** The rows in the order shown. */
  readonly rows: readonly VaultEntry[];
  readonly sort: SortOrder;
  readonly onSort: (order: SortOrder) => void;
  /** Search results: the vault's name, each row shown with its folder named from it down (as Move to… names them). */
  readonly searchedVault: string | null;
  readonly selection: ReadonlySet<string>;
  readonly onSelect: (selection: ReadonlySet<string>) => void;
  /** The row whose name is being edited, if any. */
  readonly renaming: string | null;
  /** What the rename field starts with instead of the row's name (a refused name, to mend). */
  readonly renameDraft?: string | undefined;
  readonly onRenameStart: (path: string) => void;
  /** `newName` null: the edit was cancelled. */
  readonly onRenameEnd: (entry: VaultEntry, newName: string | null) => void;
  readonly onOpen: (entry: VaultEntry) => void;
  readonly onUp: () => void;
  readonly onDelete: () => void;
  /** Open the context menu for the selection at this point of the window. */
  readonly onMenu: (x: number, y: number) => void;
}

const COLUMNS: readonly { column: SortColumn; label: string }[] = [
  { column: 'name', label: 'Name' },
  { column: 'size', label: 'Size' },
  { column: 'mtime', label: 'Modified' },
];

const rowId = (index: number): string => `file-row-${index}`;

/**
 * The rows of a folder or of a search as an ARIA grid, virtualised: only the rows in view (and a few around) are
 * in the DOM, so 100,000 entries scroll as smoothly as 10. Hand-made on \@tanstack/react-virtual rather than React
 * Aria's Table because a grid whose focus stays on the container (aria-activedescendant) survives rows leaving
 * the DOM, and because rows must be native drag sources and drop targets for moving.
 */
export function FileTable(props: FileTableProps) {
  const { rows, selection, onSelect } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const grid = useRef<HTMLDivElement>(null);
  // Start on the first selected row (the folder just left, a renamed entry), else the first row.
  const [focused, setFocused] = useState(() =>
    Math.max(
      0,
      rows.findIndex((row) => selection.has(row.path)),
    ),
  );
  const anchor = useRef(focused);
  const focusIndex = Math.min(focused, rows.length - 1);
  const renamingIndex = props.renaming === null ? -1 : rows.findIndex((row) => row.path === props.renaming);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: OVERSCAN,
    // The focused row and the one being renamed stay in the DOM though rows coming in above push them out of
    // view: the grid's aria-activedescendant must name a row that is there, and a rename field drawn again would
    // start over from the old name, the keys being typed replacing what was typed.
    rangeExtractor: (range) => {
      const kept = [focusIndex, renamingIndex].filter((index) => index >= 0);
      return [...new Set([...defaultRangeExtractor(range), ...kept])].sort((a, b) => a - b);
    },
  });
  // Only on mount: afterwards the keyboard handler scrolls.
  useEffect(() => {
    if (focused > 0) virtualizer.scrollToIndex(focused);
    // A new folder opened from the keyboard: the old grid took the focus with it, so the keyboard goes on here.
    if (focusIsNowhere()) grid.current?.focus();
  }, []);

  // The rows changed under the focus (files came in above it, a sort, a rename): the focus and the anchor of a
  // Shift selection stay on their entries; one that went (a renamed entry) gives the focus to the selection.
  // Before the rows are painted, so no frame (nor a key pressed in it) has the focus on another entry.
  const shownRows = useRef(rows);
  useLayoutEffect(() => {
    const before = shownRows.current;
    if (before === rows) return;
    shownRows.current = rows;
    const now = (index: number): number => {
      const path = before[index]?.path;
      return path === undefined ? -1 : rows.findIndex((row) => row.path === path);
    };
    const anchored = now(anchor.current);
    if (anchored >= 0) anchor.current = anchored;
    const kept = now(Math.min(focused, before.length - 1));
    if (kept >= 0) {
      setFocused(kept);
      return;
    }
    const first = rows.findIndex((row) => selection.has(row.path));
    if (first < 0) return;
    setFocused(first);
    anchor.current = first;
    virtualizer.scrollToIndex(first);
  }, [rows, selection, focused, virtualizer]);

  const moveFocus = (index: number, event: { shiftKey: boolean; ctrlKey: boolean; metaKey: boolean }) => {
    const target = Math.max(0, Math.min(rows.length - 1, index));
    setFocused(target);
    virtualizer.scrollToIndex(target);
    if (event.shiftKey) onSelect(pathsBetween(rows, anchor.current, target));
    else if (!(event.ctrlKey || event.metaKey)) {
      anchor.current = target;
      onSelect(pathsBetween(rows, target, target));
    }
  };

  const click = (index: number, event: MouseEvent) => {
    grid.current?.focus();
    setFocused(index);
    const entry = rows[index];
    if (entry === undefined) return;
    if (event.shiftKey) {
      onSelect(pathsBetween(rows, anchor.current, index));
      return;
    }
    anchor.current = index;
    if (event.ctrlKey || event.metaKey) {
      const next = new Set(selection);
      if (next.has(entry.path)) next.delete(entry.path);
      else next.add(entry.path);
      onSelect(next);
    } else onSelect(new Set([entry.path]));
  };

  const openMenuAtFocus = () => {
    const row = document.getElementById(rowId(focusIndex));
    const box = (row ?? grid.current)?.getBoundingClientRect();
    if (box) props.onMenu(box.left + 48, box.bottom);
  };

  const pageRows = Math.max(
    1,
    Math.floor((scroller.current?.clientHeight ?? ROW_HEIGHT * 10) / ROW_HEIGHT) - 1,
  );

  const onKeyDown = (event: KeyboardEvent) => {
    // Keys pressed on a sort button are that button's.
    if (props.renaming !== null || event.target !== event.currentTarget) return;
    const ctrl = event.ctrlKey || event.metaKey;
    const entry = rows[focusIndex];
    const handled = (() => {
      switch (event.key) {
        case 'ArrowDown':
          if (event.altKey) return false;
          moveFocus(focusIndex + 1, event);
          return true;
        case 'ArrowUp':
          if (event.altKey) props.onUp();
          else moveFocus(focusIndex - 1, event);
          return true;
        case 'PageDown':
          moveFocus(focusIndex + pageRows, event);
          return true;
        case 'PageUp':
          moveFocus(focusIndex - pageRows, event);
          return true;
        case 'Home':
          moveFocus(0, event);
          return true;
        case 'End':
          moveFocus(rows.length - 1, event);
          return true;
        case ' ':
          if (entry === undefined) return false;
          if (ctrl) {
            const next = new Set(selection);
            if (next.has(entry.path)) next.delete(entry.path);
            else next.add(entry.path);
            onSelect(next);
          } else onSelect(new Set([entry.path]));
          return true;
        case 'a':
        case 'A':
          if (!ctrl) return false;
          onSelect(new Set(rows.map((row) => row.path)));
          return true;
        case 'Escape':
          if (selection.size === 0) return false;
          onSelect(new Set());
          return true;
        case 'Enter':
          if (entry !== undefined) props.onOpen(entry);
          return entry !== undefined;
        case 'Backspace':
          props.onUp();
          return true;
        case 'Delete':
          if (selection.size > 0) props.onDelete();
          return true;
        case 'F2':
          if (entry !== undefined) props.onRenameStart(entry.path);
          return entry !== undefined;
        case 'F10':
          if (!event.shiftKey) return false;
          openMenuAtFocus();
          return true;
        case 'ContextMenu':
          openMenuAtFocus();
          return true;
        default:
          return false;
      }
    })();
    if (handled) {
      event.preventDefault();
      event.stopPropagation();
    }
  };

  const header = (
    <div role="row" className="grid-row grid-head" aria-rowindex={1}>
      {COLUMNS.flatMap(({ column, label }) => {
        const active = props.sort.column === column;
        const cell = (
          <div
            key={column}
            role="columnheader"
            className={`cell col-${column}`}
            aria-sort={active ? (props.sort.ascending ? 'ascending' : 'descending') : 'none'}
          >
            <button
              type="button"
              className="sort-button"
              onClick={() => {
                props.onSort({ column, ascending: active ? !props.sort.ascending : true });
              }}
            >
              {label}
              {active &&
                (props.sort.ascending ? (
                  <ArrowUp size={12} aria-hidden="true" />
                ) : (
                  <ArrowDown size={12} aria-hidden="true" />
                ))}
            </button>
          </div>
        );
        return column === 'name' && props.searchedVault !== null
          ? [
              cell,
              <div key="folder" role="columnheader" className="cell col-folder">
                Folder
              </div>,
            ]
          : [cell];
      })}
    </div>
  );

  return (
    <div
      ref={grid}
      role="grid"
      aria-label={props.searchedVault !== null ? 'Search results' : 'Files'}
      aria-multiselectable="true"
      aria-rowcount={rows.length + 1}
      aria-colcount={props.searchedVault !== null ? 4 : 3}
      aria-activedescendant={rows.length > 0 ? rowId(focusIndex) : undefined}
      tabIndex={0}
      className={props.searchedVault !== null ? 'file-grid with-folder' : 'file-grid'}
      onKeyDown={onKeyDown}
    >
      <div role="rowgroup">{header}</div>
      {/* Not a Tab stop of its own (Chromium makes a scroller without focusable children one), and a click on it
          (below the rows, a drag's start, a right-click) gives the keyboard to the grid, which names the focused
          row to screen readers, draws its ring and scrolls the rows. */}
      <div
        role="rowgroup"
        ref={scroller}
        className="grid-body"
        data-testid="grid-body"
        tabIndex={-1}
        onFocus={(event) => {
          // After the mousedown that focused it: moving the focus during that press would stop a row's drag.
          if (event.target === event.currentTarget)
            setTimeout(() => {
              if (document.activeElement === scroller.current) grid.current?.focus({ preventScroll: true });
            });
        }}
      >
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const entry = rows[item.index];
            if (entry === undefined) return null;
            return (
              <FileRow
                key={entry.path}
                index={item.index}
                top={item.start}
                entry={entry}
                table={props}
                focused={item.index === focusIndex}
                onClick={(event) => {
                  click(item.index, event);
                }}
              />
            );
          })}
        </div>
      </div>
    </div>
  );
}

interface FileRowProps {
  readonly index: number;
  readonly top: number;
  readonly entry: VaultEntry;
  readonly table: FileTableProps;
  readonly focused: boolean;
  readonly onClick: (event: MouseEvent) => void;
}

function FileRow({ index, top, entry, table, focused, onClick }: FileRowProps) {
  const selected = table.selection.has(entry.path);
  const drop = useFolderDrop(entry.path, table);
  const isFolder = entry.type === 'folder';
  const folder = table.searchedVault === null ? null : folderLabel(table.searchedVault, parentOf(entry.path));
  const classes = ['grid-row'];
  if (selected) classes.push('selected');
  if (focused) classes.push('focused');
  if (drop.over) classes.push('drop-target');
  return (
    <div
      role="row"
      id={rowId(index)}
      aria-rowindex={index + 2}
      aria-selected={selected}
      className={classes.join(' ')}
      style={{ transform: `translateY(${top}px)` }}
      draggable={table.renaming !== entry.path}
      onClick={onClick}
      onDoubleClick={() => {
        table.onOpen(entry);
      }}
      onContextMenu={(event) => {
        event.preventDefault();
        // The folder's background has a menu of its own.
        event.stopPropagation();
        if (!selected) onClick({ ...event, ctrlKey: false, metaKey: false, shiftKey: false });
        table.onMenu(event.clientX, event.clientY);
      }}
      onDragStart={(event) => {
        const paths = selected ? [...table.selection] : [entry.path];
        if (!selected) table.onSelect(new Set(paths));
        startMoveDrag(event, paths);
      }}
      onDragEnd={endMoveDrag}
      {...(isFolder ? drop.props : {})}
    >
      <div role="gridcell" className="cell col-name">
        {isFolder ? (
          <Folder size={16} aria-hidden="true" className="icon-folder" />
        ) : (
          <File size={16} aria-hidden="true" className="icon-file" />
        )}
        {table.renaming === entry.path ? (
          <RenameField entry={entry} draft={table.renameDraft} onEnd={table.onRenameEnd} />
        ) : (
          <span className="name" title={entry.name}>
            {entry.name}
          </span>
        )}
      </div>
      {folder !== null && (
        <div role="gridcell" className="cell col-folder muted">
          <bdi dir="ltr" title={folder}>
            {folder}
          </bdi>
        </div>
      )}
      <div
        role="gridcell"
        className="cell col-size"
        title={isFolder ? undefined : `${entry.size.toLocaleString()} bytes`}
      >
        {isFolder ? '—' : formatSize(entry.size)}
      </div>
      <div role="gridcell" className="cell col-mtime">
        {formatDate(entry.mtime)}
      </div>
    </div>
  );
}

/** The name being edited in place: Enter keeps it, Esc cancels, leaving the field keeps it too. */
function RenameField({
  entry,
  draft,
  onEnd,
}: {
  entry: VaultEntry;
  draft: string | undefined;
  onEnd: (entry: VaultEntry, newName: string | null) => void;
}) {
  const ended = useRef(false);
  const field = useRef<HTMLInputElement>(null);
  // Focused in the next frame: a menu that started the edit gives focus back to the grid in this one.
  useEffect(() => {
    const frame = requestAnimationFrame(() => {
      field.current?.focus();
    });
    return () => {
      cancelAnimationFrame(frame);
    };
  }, []);
  const end = (newName: string | null) => {
    if (ended.current) return;
    ended.current = true;
    onEnd(entry, newName === entry.name ? null : newName);
  };
  return (
    <input
      className="rename-field"
      aria-label={`New name for ${entry.name}`}
      ref={field}
      defaultValue={draft ?? entry.name}
      onFocus={(event) => {
        // Select the name without its extension, as file managers do.
        const name = event.currentTarget.value;
        const dot = entry.type === 'file' ? name.lastIndexOf('.') : -1;
        event.currentTarget.setSelectionRange(0, dot > 0 ? dot : name.length);
      }}
      onClick={(event) => {
        event.stopPropagation();
      }}
      onKeyDown={(event) => {
        event.stopPropagation();
        if (event.key !== 'Enter' && event.key !== 'Escape') return;
        event.preventDefault();
        const field = event.currentTarget;
        end(event.key === 'Enter' ? field.value.trim() || null : null);
        // Back to the grid, so the keyboard goes on where it was.
        field.closest<HTMLElement>('[role=grid]')?.focus();
      }}
      onBlur={(event) => {
        // Another window took the keyboard: the field gets it back on return, with what was typed.
        if (!document.hasFocus()) return;
        // Leaving a refused name as it was refused cancels, rather than asking again (and taking the focus back).
        const value = event.currentTarget.value.trim();
        end(value === '' || value === draft ? null : value);
      }}
    />
  );
}
