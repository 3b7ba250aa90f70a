import { FolderOpen } from 'lucide-react';
import { useState, type SyntheticEvent } from 'react';

import { KDF_PRESET_NAMES, type PickedHandle } from '../../shared/contract.js';
import { call, describeError } from '../api.js';
import { showVault } from '../store.js';
import { ErrorText } from './ErrorText.js';
import { TextField } from './TextField.js';

type KdfPresetName = (typeof KDF_PRESET_NAMES)[number];

const KDF_LABELS: Readonly<Record<KdfPresetName, string>> = {
  interactive: 'Fast (64 MiB) — for older computers',
  moderate: 'Standard (256 MiB) — recommended',
  sensitive: 'Strong (1 GiB) — slower to unlock',
};

/** The create-vault form: where, its name, the passphrase twice and how hard the passphrase is to guess. */
export function CreateVault({ onCancel }: { onCancel: () => void }) {
  const [folder, setFolder] = useState<PickedHandle | null>(null);
  const [name, setName] = useState('');
  const [passphrase, setPassphrase] = useState('');
  const [repeat, setRepeat] = useState('');
  const [kdf, setKdf] = useState<KdfPresetName>('moderate');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

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
      const vault = await call('vault.create', { folder: folder.handle, name: name.trim(), passphrase, kdf });
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
      <form className="card" aria-labelledby="create-title" onSubmit={(event) => void submit(event)}>
        <h1 id="create-title">Create a vault</h1>
        <div className="field">
          <span className="label" id="folder-label">
            Location
          </span>
          <div className="folder-pick">
            <span className={folder ? 'folder-label' : 'folder-label muted'} aria-labelledby="folder-label">
              {folder ? folder.label : 'No folder chosen'}
            </span>
            <button type="button" onClick={() => void chooseFolder()}>
              <FolderOpen size={16} aria-hidden="true" />
              Choose…
            </button>
          </div>
        </div>
        <TextField label="Name" value={name} onValue={setName} placeholder="Personal" autoComplete="off" />
        <TextField
          label="Passphrase"
          type="password"
          value={passphrase}
          onValue={setPassphrase}
          autoComplete="new-password"
        />
        <TextField
          label="Repeat passphrase"
          type="password"
          value={repeat}
          onValue={setRepeat}
          autoComplete="new-password"
        />
        <label className="field">
          <span className="label">Key strength</span>
          <select
            value={kdf}
            onChange={(event) => {
              setKdf(event.target.value as KdfPresetName);
            }}
          >
            {KDF_PRESET_NAMES.map((preset) => (
              <option key={preset} value={preset}>
                {KDF_LABELS[preset]}
              </option>
            ))}
          </select>
        </label>
        <p className="hint muted">
          Nobody can recover the files without the passphrase. Keep it somewhere safe.
        </p>
        <ErrorText message={error} />
        <div className="actions">
          <button type="button" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create vault'}
          </button>
        </div>
      </form>
    </main>
  );
}
