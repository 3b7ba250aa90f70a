import { LockKeyhole } from 'lucide-react';
import { useEffect, useRef, useState, type SyntheticEvent } from 'react';

import type { VaultSummary } from '../../shared/contract.js';
import { ApiError, call, describeError } from '../api.js';
import { showVault } from '../store.js';
import { ErrorText } from './ErrorText.js';
import { TextField } from './TextField.js';

const WRONG_PASSPHRASE = 'Wrong passphrase. Check Caps Lock and the keyboard layout.';

/** A locked vault: the passphrase field, Unlock, and the way back to the start screen. */
export function UnlockScreen({ vault }: { vault: VaultSummary }) {
  const [passphrase, setPassphrase] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);

  const submit = async (event: SyntheticEvent): Promise<void> => {
    event.preventDefault();
    if (passphrase === '') return;
    setBusy(true);
    setError(null);
    try {
      await call('vault.unlock', { vaultId: vault.vaultId, passphrase });
      setPassphrase('');
      showVault({ ...vault, locked: false });
    } catch (cause) {
      setError(
        cause instanceof ApiError && cause.code === 'WRONG_PASSPHRASE'
          ? WRONG_PASSPHRASE
          : describeError(cause),
      );
      setBusy(false);
    }
  };

  // Keep the person typing: after a failed try the field is focused again with its text selected, ready to be
  // retyped. In an effect, so it runs once the field is enabled again (focusing a disabled field does nothing).
  useEffect(() => {
    if (!busy && error !== null) {
      input.current?.focus();
      input.current?.select();
    }
  }, [busy, error]);

  const close = async (): Promise<void> => {
    try {
      await call('vault.close', { vaultId: vault.vaultId });
      showVault(null);
    } catch (cause) {
      setError(describeError(cause));
    }
  };

  return (
    <main className="centered">
      <form className="card unlock" aria-labelledby="unlock-title" onSubmit={(event) => void submit(event)}>
        <header className="card-header">
          <LockKeyhole size={28} aria-hidden="true" className="brand-icon" />
          <div>
            <h1 id="unlock-title">{vault.name}</h1>
            <p className="muted location">{vault.location}</p>
          </div>
        </header>
        <TextField
          label="Passphrase"
          inputRef={input}
          type="password"
          value={passphrase}
          onValue={setPassphrase}
          autoFocus
          disabled={busy}
          aria-invalid={error !== null}
          aria-describedby={error === null ? undefined : 'unlock-error'}
          autoComplete="current-password"
        />
        <ErrorText message={error} id="unlock-error" />
        <div className="actions">
          <button type="button" className="link" onClick={() => void close()}>
            Choose another vault
          </button>
          <button type="submit" className="primary" disabled={busy || passphrase === ''}>
            {busy ? 'Unlocking…' : 'Unlock'}
          </button>
        </div>
      </form>
    </main>
  );
}
