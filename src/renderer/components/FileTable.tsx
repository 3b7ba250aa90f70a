import { File, Folder } from 'lucide-react';
import type { KeyboardEvent, MouseEvent } from 'react';

import type { VaultEntry } from '../../shared/contract.js';
import { formatDate, formatSize } from '../format.js';

interface FileTableProps {
  readonly entries: readonly VaultEntry[];
  readonly selection: ReadonlySet<string>;
  readonly onSelect: (selection: ReadonlySet<string>) => void;
  readonly onOpenFolder: (path: string) => void;
}

/** The current folder as a table: folders first, then files, each by name. */
export function FileTable({ entries, selection, onSelect, onOpenFolder }: FileTableProps) {
  const sorted = [...entries].sort(
    (a, b) => Number(a.type === 'file') - Number(b.type === 'file') || a.name.localeCompare(b.name),
  );

  const select = (entry: VaultEntry, event: MouseEvent | KeyboardEvent): void => {
    if (event.ctrlKey || event.metaKey) {
      const next = new Set(selection);
      if (next.has(entry.path)) next.delete(entry.path);
      else next.add(entry.path);
      onSelect(next);
    } else {
      onSelect(new Set([entry.path]));
    }
  };
  const open = (entry: VaultEntry): void => {
    if (entry.type === 'folder') onOpenFolder(entry.path);
  };

  return (
    <table className="files" aria-label="Files">
      <thead>
        <tr>
          <th scope="col" className="col-name">
            Name
          </th>
          <th scope="col" className="col-size">
            Size
          </th>
          <th scope="col" className="col-date">
            Modified
          </th>
        </tr>
      </thead>
      <tbody>
        {sorted.map((entry) => {
          const selected = selection.has(entry.path);
          return (
            <tr
              key={entry.path}
              aria-selected={selected}
              tabIndex={0}
              className={selected ? 'selected' : undefined}
              onClick={(event) => {
                select(entry, event);
              }}
              onDoubleClick={() => {
                open(entry);
              }}
              onKeyDown={(event) => {
                if (event.key === 'Enter') open(entry);
                else if (event.key === ' ') {
                  event.preventDefault();
                  select(entry, event);
                }
              }}
            >
              <td className="col-name">
                <span className="cell-name">
                  {entry.type === 'folder' ? (
                    <Folder size={16} aria-hidden="true" className="icon-folder" />
                  ) : (
                    <File size={16} aria-hidden="true" className="icon-file" />
                  )}
                  <span className="name">{entry.name}</span>
                </span>
              </td>
              <td
                className="col-size"
                title={entry.type === 'file' ? `${entry.size.toLocaleString()} bytes` : undefined}
              >
                {entry.type === 'file' ? formatSize(entry.size) : '—'}
              </td>
              <td className="col-date">{formatDate(entry.mtime)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
