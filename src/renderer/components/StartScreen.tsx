import { FolderOpen, Plus, Vault } from 'lucide-react';
import { useEffect, useState } from 'react';

import type { RecentVault } from '../../shared/contract.js';
import { call, describeError } from '../api.js';
import { showVault } from '../store.js';
import { CreateVault } from './CreateVault.js';
import { ErrorText } from './ErrorText.js';

/** No vault open: recent vaults, and the way to create or open one. */
export function StartScreen() {
  const [recent, setRecent] = useState<readonly RecentVault[]>([]);
  const [creating, setCreating] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    call('recent.list', {}).then(setRecent, (cause: unknown) => {
      setError(describeError(cause));
    });
  }, []);

  const open = async (request: { folder: string } | { recentId: string }): Promise<void> => {
    setError(null);
    try {
      showVault(await call('vault.open', request));
    } catch (cause) {
      setError(describeError(cause));
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
      <section className="card start" aria-labelledby="start-title">
        <header className="card-header">
          <Vault size={28} aria-hidden="true" className="brand-icon" />
          <div>
            <h1 id="start-title">Coffer</h1>
            <p className="muted">Files kept in encrypted vaults on this computer.</p>
          </div>
        </header>
        {recent.length > 0 && (
          <>
            <h2 className="section-title">Recent vaults</h2>
            <ul className="recent-list">
              {recent.map((vault) => (
                <li key={vault.recentId}>
                  <button
                    type="button"
                    className="recent-item"
                    disabled={vault.missing}
                    onClick={() => void open({ recentId: vault.recentId })}
                  >
                    <Vault size={18} aria-hidden="true" />
                    <span className="recent-name">{vault.name}</span>
                    <span className="recent-location muted">
                      {vault.missing ? 'Not found' : vault.location}
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          </>
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
