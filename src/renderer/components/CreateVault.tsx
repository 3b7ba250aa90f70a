import { FolderOpen, ShieldAlert } from 'lucide-react';
import { useId, useState, type SyntheticEvent } from 'react';

import type { PickedHandle } from '../../shared/contract.js';
import { call, describeError } from '../api.js';
import { showVault } from '../store.js';
import { ErrorText } from './ErrorText.js';
import { KdfPresetField, type KdfPresetName } from './KdfPresetField.js';
import { NewPassphraseFields } from './NewPassphraseFields.js';
import { TextField } from './TextField.js';

/**
 * The create-vault form: where, its name, the passphrase twice and how hard the passphrase is to guess, the key
 * derivation's strength, and whether stored sizes are padded.
 */
export function CreateVault({ onCancel }: { onCancel: () => void }) {
  const [folder, setFolder] = useState<PickedHandle | null>(null);
  const [name, setName] = useState('');
  const [passphrase, setPassphrase] = useState('');
  const [repeat, setRepeat] = useState('');
  const [kdf, setKdf] = useState<KdfPresetName>('moderate');
  const [padSizes, setPadSizes] = useState(true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const ids = useId();
  const warningId = `${ids}-warning`;
  const paddingHintId = `${ids}-padding-hint`;

  const chooseFolder = async (): Promise<void> => {
    setError(null);
    try {
      const picked = await call('dialog.pickFolder', { purpose: 'create-vault' });
      if (picked !== null) setFolder(picked);
    } catch (cause) {
      setError(describeError(cause));
    }
  };

  const submit = async (event: SyntheticEvent): Promise<void> => {
    event.preventDefault();
    const problem =
      folder === null
        ? 'Choose the folder to create the vault in.'
        : name.trim() === ''
          ? 'Give the vault a name.'
          : passphrase === ''
            ? 'Choose a passphrase.'
            : passphrase !== repeat
              ? 'The two passphrases differ. Type them again.'
              : null;
    if (problem !== null || folder === null) {
      setError(problem);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const vault = await call('vault.create', {
        folder: folder.handle,
        name: name.trim(),
        passphrase,
        kdf,
        contentPadding: padSizes ? 'padme' : 'none',
      });
      setPassphrase('');
      setRepeat('');
      showVault(vault);
    } catch (cause) {
      setError(describeError(cause));
      setBusy(false);
    }
  };

  return (
    <main className="centered">
      <form
        className="card"
        aria-labelledby="create-title"
        aria-busy={busy}
        onSubmit={(event) => void submit(event)}
      >
        <h1 id="create-title">Create a vault</h1>
        <div className="field">
          <span className="label" id="folder-label">
            Location
          </span>
          <div className="folder-pick">
            <span className={folder ? 'folder-label' : 'folder-label muted'} aria-labelledby="folder-label">
              {folder ? folder.label : 'No folder chosen'}
            </span>
            <button type="button" onClick={() => void chooseFolder()} disabled={busy}>
              <FolderOpen size={16} aria-hidden="true" />
              Choose…
            </button>
          </div>
        </div>
        <TextField
          label="Name"
          value={name}
          onValue={setName}
          placeholder="Personal"
          autoComplete="off"
          disabled={busy}
        />
        <NewPassphraseFields
          label="Passphrase"
          passphrase={passphrase}
          repeat={repeat}
          onPassphrase={setPassphrase}
          onRepeat={setRepeat}
          userInputs={[name]}
          disabled={busy}
        />
        <KdfPresetField value={kdf} onValue={setKdf} disabled={busy} />
        <div className="field">
          <label className="checkbox">
            <input
              type="checkbox"
              checked={padSizes}
              disabled={busy}
              aria-describedby={paddingHintId}
              onChange={(event) => {
                setPadSizes(event.target.checked);
              }}
            />
            Hide each file&apos;s exact size
          </label>
          <p className="hint muted" id={paddingHintId}>
            Stored files are padded, so the vault folder shows their sizes only roughly (to within about 12
            %). This takes about 1.3 % more space on a typical mix of files. Chosen once, for the vault&apos;s
            life.
          </p>
        </div>
        <p className="warning" id={warningId}>
          <ShieldAlert size={16} aria-hidden="true" />
          <span>
            <strong>A lost passphrase cannot be recovered.</strong> Nobody — not you, not Coffer — can open
            this vault without it. Write it down and keep it somewhere safe.
          </span>
        </p>
        <ErrorText message={error} />
        <div className="actions">
          <button type="button" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={busy} aria-describedby={warningId}>
            {busy ? 'Creating…' : 'Create vault'}
          </button>
        </div>
      </form>
    </main>
  );
}
