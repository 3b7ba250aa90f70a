import {
  ArrowDownToLine,
  ChevronRight,
  Eye,
  FilePlus,
  FolderInput,
  Info,
  Lock,
  Settings,
} from 'lucide-react';
import { useCallback, useEffect, useRef, useState, type DragEvent } from 'react';

import type { VaultEntry, VaultSummary } from '../../shared/contract.js';
import { call, describeError, registerDroppedFiles } from '../api.js';
import { crumbs, formatSize } from '../format.js';
import { lockVault, useLockShortcut } from '../lock.js';
import { plural, setSelection, showFolder, useCoffer } from '../store.js';
import { ErrorText } from './ErrorText.js';
import { FileTable } from './FileTable.js';
import { JobsPanel } from './JobsPanel.js';
import { PreviewDialog } from './PreviewDialog.js';
import { SettingsDialog } from './SettingsDialog.js';
import { VaultDetails } from './VaultDetails.js';

const PANELS = [
  { panel: 'details', label: 'Vault details', Icon: Info },
  { panel: 'settings', label: 'Settings', Icon: Settings },
] as const;

/** An unlocked vault: a toolbar, the current folder's table (a drop target) and the jobs. */
export function Browser({ vault }: { vault: VaultSummary }) {
  const folder = useCoffer((state) => state.folder);
  const entries = useCoffer((state) => state.entries);
  const selection = useCoffer((state) => state.selection);
  const jobs = useCoffer((state) => state.jobs);
  const [error, setError] = useState<string | null>(null);
  const [dragging, setDragging] = useState(false);
  const [previewing, setPreviewing] = useState<VaultEntry | null>(null);
  const [panel, setPanel] = useState<(typeof PANELS)[number]['panel'] | null>(null);
  const dragDepth = useRef(0);

  const load = useCallback(
    async (path: string): Promise<void> => {
      try {
        showFolder(path, await call('entries.list', { vaultId: vault.vaultId, path }));
      } catch (cause) {
        setError(describeError(cause));
      }
    },
    [vault.vaultId],
  );

  useEffect(() => {
    void load(useCoffer.getState().folder);
  }, [load]);

  // A finished job may have changed the folder: show it again.
  const finished = jobs.filter((job) => job.status !== 'running').length;
  useEffect(() => {
    if (finished > 0) void load(useCoffer.getState().folder);
  }, [finished, load]);

  const run = async (action: () => Promise<unknown>): Promise<void> => {
    setError(null);
    try {
      await action();
    } catch (cause) {
      setError(describeError(cause));
    }
  };

  const addPicked = (): Promise<void> =>
    run(async () => {
      const picked = await call('dialog.pickFiles', { purpose: 'add-files', vaultId: vault.vaultId });
      if (picked !== null)
        await call('job.add', { vaultId: vault.vaultId, source: picked.handle, destination: folder });
    });

  const restoreSelection = (): Promise<void> =>
    run(async () => {
      const paths = [...selection];
      const picked = await call('dialog.pickFolder', {
        purpose: 'restore-destination',
        vaultId: vault.vaultId,
      });
      if (picked !== null)
        await call('job.restore', { vaultId: vault.vaultId, paths, destination: picked.handle });
    });

  const lock = (): Promise<void> => run(() => lockVault(vault.vaultId));
  useLockShortcut(
    useCallback((cause: unknown) => {
      setError(describeError(cause));
    }, []),
  );

  const onDrop = (event: DragEvent): void => {
    event.preventDefault();
    dragDepth.current = 0;
    setDragging(false);
    const files = [...event.dataTransfer.files];
    if (files.length === 0) return;
    void run(async () => {
      const { handle } = await registerDroppedFiles(files);
      await call('job.add', { vaultId: vault.vaultId, source: handle, destination: folder });
    });
  };

  const selectedFiles = entries.filter((entry) => entry.type === 'file' && selection.has(entry.path));
  const previewable = selection.size === 1 && selectedFiles.length === 1 ? selectedFiles[0] : undefined;

  const selectedBytes = entries
    .filter((entry) => selection.has(entry.path))
    .reduce((sum, entry) => sum + entry.size, 0);

  return (
    <div className="browser">
      <header className="toolbar">
        <nav className="breadcrumb" aria-label="Folder">
          <button type="button" className="crumb" onClick={() => void load('/')}>
            {vault.name}
          </button>
          {crumbs(folder).map((crumb) => (
            <span key={crumb.path} className="crumb-part">
              <ChevronRight size={14} aria-hidden="true" className="muted" />
              <button type="button" className="crumb" onClick={() => void load(crumb.path)}>
                {crumb.name}
              </button>
            </span>
          ))}
        </nav>
        <div className="toolbar-actions">
          <button type="button" onClick={() => void addPicked()}>
            <FilePlus size={16} aria-hidden="true" />
            Add files…
          </button>
          <button
            type="button"
            disabled={previewable === undefined}
            onClick={() => {
              setPreviewing(previewable ?? null);
            }}
          >
            <Eye size={16} aria-hidden="true" />
            Preview
          </button>
          <button type="button" disabled={selection.size === 0} onClick={() => void restoreSelection()}>
            <ArrowDownToLine size={16} aria-hidden="true" />
            Restore…
          </button>
          {PANELS.map(({ panel: which, label, Icon }) => (
            <button
              key={which}
              type="button"
              className="icon-button"
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
            Lock
          </button>
        </div>
      </header>
      <ErrorText message={error} />
      <section
        className={dragging ? 'drop-zone dragging' : 'drop-zone'}
        aria-label="Vault contents"
        data-testid="drop-zone"
        onDragEnter={(event) => {
          event.preventDefault();
          dragDepth.current += 1;
          setDragging(true);
        }}
        onDragOver={(event) => {
          event.preventDefault();
        }}
        onDragLeave={() => {
          dragDepth.current -= 1;
          if (dragDepth.current <= 0) setDragging(false);
        }}
        onDrop={onDrop}
      >
        {entries.length === 0 ? (
          <div className="empty">
            <FolderInput size={40} aria-hidden="true" className="muted" />
            <p>This folder is empty.</p>
            <p className="muted">Drop files here or use Add files.</p>
          </div>
        ) : (
          <FileTable
            entries={entries}
            selection={selection}
            onSelect={setSelection}
            onOpenFolder={(path) => void load(path)}
          />
        )}
        {dragging && <div className="drop-label">Add to {folder === '/' ? vault.name : folder}</div>}
      </section>
      <footer className="status-bar">
        <span>
          {plural(entries.length, 'item')}
          {selection.size > 0 &&
            ` · ${selection.size.toLocaleString()} selected (${formatSize(selectedBytes)})`}
        </span>
      </footer>
      <JobsPanel jobs={jobs} />
      {previewing && (
        <PreviewDialog
          vaultId={vault.vaultId}
          entry={previewing}
          onClose={() => {
            setPreviewing(null);
          }}
        />
      )}
      {panel === 'details' && (
        <VaultDetails
          vaultId={vault.vaultId}
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
    </div>
  );
}
