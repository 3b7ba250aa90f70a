import { FolderOpen, FolderX, Plus, Vault, X } from 'lucide-react';
import { useCallback, useEffect, useRef, useState } from 'react';

import type { RecentVault } from '../../shared/contract.js';
import { ApiError, call, describeError } from '../api.js';
import { useFocusWhenNowhere } from '../focus.js';
import { formatDate } from '../format.js';
import { showVault } from '../store.js';
import { CreateVault } from './CreateVault.js';
import { ErrorText } from './ErrorText.js';

/** One recent vault: open it with a click, or forget it (the folder on disk is left alone). */
function RecentRow({
  vault,
  onOpen,
  onForget,
}: {
  vault: RecentVault;
  onOpen: () => void;
  onForget: () => void;
}) {
  return (
    <li className={vault.missing ? 'recent-row missing' : 'recent-row'}>
      <button
        type="button"
        className="recent-item"
        disabled={vault.missing}
        onClick={onOpen}
        aria-describedby={`recent-${vault.recentId}-state`}
      >
        {vault.missing ? <FolderX size={18} aria-hidden="true" /> : <Vault size={18} aria-hidden="true" />}
        <span className="recent-name">{vault.name}</span>
        <span className="recent-location muted" title={vault.location}>
          {vault.location}
        </span>
        <span className="recent-state" id={`recent-${vault.recentId}-state`}>
          {vault.missing ? (
            <span className="missing-badge">Folder not found</span>
          ) : (
            <span className="muted">Last opened {formatDate(vault.lastOpenedAt)}</span>
          )}
        </span>
      </button>
      <button
        type="button"
        className="icon-button forget"
        aria-label={`Forget ${vault.name}`}
        title="Remove from this list (the vault folder is not touched)"
        onClick={onForget}
      >
        <X size={16} aria-hidden="true" />
      </button>
    </li>
  );
}

/** No vault open: recent vaults, and the way to create or open one. */
export function StartScreen() {
  const [recent, setRecent] = useState<readonly RecentVault[]>([]);
  const [creating, setCreating] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const card = useRef<HTMLElement>(null);
  useFocusWhenNowhere(card, creating);

  const refresh = useCallback(async (): Promise<void> => {
    try {
      setRecent(await call('recent.list', {}));
    } catch (cause) {
      setError(describeError(cause));
    }
  }, []);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  const open = async (request: { folder: string } | { recentId: string }): Promise<void> => {
    setError(null);
    try {
      showVault(await call('vault.open', request));
    } catch (cause) {
      setError(describeError(cause));
      // A recent vault whose folder went away is marked missing by the back end: show it so.
      if (cause instanceof ApiError && cause.code === 'NOT_FOUND') await refresh();
    }
  };
  const pickAndOpen = async (): Promise<void> => {
    setError(null);
    try {
      const picked = await call('dialog.pickFolder', { purpose: 'open-vault' });
      if (picked !== null) await open({ folder: picked.handle });
    } catch (cause) {
      setError(describeError(cause));
    }
  };
  const forget = async (recentId: string): Promise<void> => {
    setError(null);
    try {
      await call('recent.forget', { recentId });
      setRecent((list) => list.filter((vault) => vault.recentId !== recentId));
    } catch (cause) {
      setError(describeError(cause));
    }
  };

  if (creating)
    return (
      <CreateVault
        onCancel={() => {
          setCreating(false);
        }}
      />
    );

  return (
    <main className="centered">
      {/* Takes the keyboard when the screen comes back (Cancel, another vault): Tab goes on from the top. */}
      <section className="card start" aria-labelledby="start-title" ref={card} tabIndex={-1}>
        <header className="card-header">
          <Vault size={28} aria-hidden="true" className="brand-icon" />
          <div>
            <h1 id="start-title">Coffer</h1>
            <p className="muted">Files kept in encrypted vaults on this computer.</p>
          </div>
        </header>
        {recent.length > 0 ? (
          <>
            <h2 className="section-title" id="recent-title">
              Recent vaults
            </h2>
            <ul className="recent-list" aria-labelledby="recent-title">
              {recent.map((vault) => (
                <RecentRow
                  key={vault.recentId}
                  vault={vault}
                  onOpen={() => void open({ recentId: vault.recentId })}
                  onForget={() => void forget(vault.recentId)}
                />
              ))}
            </ul>
          </>
        ) : (
          <p className="muted">No vault opened yet. Create one, or open a vault folder you already have.</p>
        )}
        <ErrorText message={error} />
        <div className="actions">
          <button type="button" onClick={() => void pickAndOpen()}>
            <FolderOpen size={16} aria-hidden="true" />
            Open vault…
          </button>
          <button
            type="button"
            className="primary"
            onClick={() => {
              setCreating(true);
            }}
          >
            <Plus size={16} aria-hidden="true" />
            Create vault…
          </button>
        </div>
      </section>
    </main>
  );
}
