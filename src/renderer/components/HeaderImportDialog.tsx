import './header-import.css';

import { LoaderCircle } from 'lucide-react';
import { useRef, useState, type SyntheticEvent } from 'react';

import type { Problem } from '../../shared/contract.js';
import { call } from '../api.js';
import { useRetypeAfterFailure } from '../focus.js';
import { useSecurityAction } from '../security/use-security-action.js';
import { ErrorText } from './ErrorText.js';
import { PanelDialog } from './PanelDialog.js';
import { PassphraseField } from './PassphraseField.js';

/** What opens the header backup: one of its passphrases, or the recovery key it held. */
type SecretKind = 'passphrase' | 'recovery-key';

/**
 * "Restore a header backup": puts a picked header backup file (`file`, a handle from the host's dialog) back into
 * the locked vault once a passphrase or recovery key of that backup opens it. Says first what that replaces.
 */
export function HeaderImportDialog({
  vaultId,
  file,
  fileLabel,
  onClose,
  onRestored,
}: {
  vaultId: string;
  file: string;
  fileLabel: string;
  onClose: () => void;
  onRestored: (logProblems: readonly Problem[]) => void;
}) {
  const [secretKind, setSecretKind] = useState<SecretKind>('passphrase');
  const [secret, setSecret] = useState('');
  const { busy, error, setError, run } = useSecurityAction('header-restore', secretKind === 'recovery-key');
  const field = useRef<HTMLInputElement>(null);
  useRetypeAfterFailure(field, busy, error !== null);

  const submit = (event: SyntheticEvent): void => {
    event.preventDefault();
    if (secret === '') return;
    void run(async () => {
      const { logProblems } = await call('security.importHeader', { vaultId, file, secretKind, secret });
      setSecret('');
      onRestored(logProblems);
    });
  };

  return (
    <PanelDialog title="Restore a header backup" onClose={onClose}>
      <form className="header-import" aria-busy={busy} onSubmit={submit}>
        <p>
          Restore <strong>{fileLabel}</strong> as this vault’s header?
        </p>
        <p className="muted">
          It replaces the vault header and its backup copy in the vault folder. Afterwards the passphrases and
          recovery key that the backup holds open the vault: ones added or changed since it was saved no
          longer do, and ones removed since then work again.
        </p>
        <PassphraseField
          key={secretKind}
          label={
            secretKind === 'passphrase' ? 'A passphrase of the backup' : 'The recovery key of the backup'
          }
          value={secret}
          onValue={setSecret}
          autoFocus
          inputRef={field}
          disabled={busy}
          invalid={error !== null}
          describedBy={error === null ? [] : ['header-import-error']}
          autoComplete="current-password"
        />
        <ErrorText message={error} id="header-import-error" />
        <button
          type="button"
          className="link"
          disabled={busy}
          onClick={() => {
            setSecretKind(secretKind === 'passphrase' ? 'recovery-key' : 'passphrase');
            setSecret('');
            setError(null);
          }}
        >
          {secretKind === 'passphrase' ? 'Use the recovery key instead' : 'Use a passphrase instead'}
        </button>
        <div className="actions">
          <button type="button" onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={busy || secret === ''}>
            {busy && <LoaderCircle size={16} aria-hidden="true" className="spin" />}
            {busy ? 'Restoring…' : 'Restore header'}
          </button>
        </div>
      </form>
    </PanelDialog>
  );
}
