import { FolderOpen, ShieldAlert } from 'lucide-react';
import { useEffect, useId, useState, type SyntheticEvent } from 'react';

import { KDF_PRESET_NAMES, type PickedHandle, type ResponseOf } from '../../shared/contract.js';
import { call, describeError } from '../api.js';
import { formatDuration } from '../format.js';
import { showVault } from '../store.js';
import { ErrorText } from './ErrorText.js';
import { PassphraseField } from './PassphraseField.js';
import { PassphraseStrength } from './PassphraseStrength.js';
import { TextField } from './TextField.js';

type KdfPresetName = (typeof KDF_PRESET_NAMES)[number];
type KdfEstimate = ResponseOf<'app.kdfEstimate'>;

const KDF_LABELS: Readonly<Record<KdfPresetName, string>> = {
  interactive: 'Fast (64 MiB) — for older computers',
  moderate: 'Standard (256 MiB) — recommended',
  sensitive: 'Strong (1 GiB) — slower to unlock',
};

function presetLabel(preset: KdfPresetName, estimate: KdfEstimate | null): string {
  if (estimate === null) return KDF_LABELS[preset];
  return `${KDF_LABELS[preset]} · about ${formatDuration(estimate[preset])}`;
}

/** The create-vault form: where, its name, the passphrase twice and how hard the passphrase is to guess. */
export function CreateVault({ onCancel }: { onCancel: () => void }) {
  const [folder, setFolder] = useState<PickedHandle | null>(null);
  const [name, setName] = useState('');
  const [passphrase, setPassphrase] = useState('');
  const [repeat, setRepeat] = useState('');
  const [kdf, setKdf] = useState<KdfPresetName>('moderate');
  const [estimate, setEstimate] = useState<KdfEstimate | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const ids = useId();
  const strengthId = `${ids}-strength`;
  const kdfHintId = `${ids}-kdf-hint`;
  const warningId = `${ids}-warning`;

  useEffect(() => {
    let live = true;
    // Measured by the back end on this machine; the form is usable before the figure arrives.
    call('app.kdfEstimate', {}).then(
      (measured) => {
        if (live) setEstimate(measured);
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, []);

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
        <PassphraseField
          label="Passphrase"
          value={passphrase}
          onValue={setPassphrase}
          autoComplete="new-password"
          disabled={busy}
          describedBy={[strengthId]}
        />
        <PassphraseStrength id={strengthId} passphrase={passphrase} userInputs={[name]} />
        <PassphraseField
          label="Repeat passphrase"
          value={repeat}
          onValue={setRepeat}
          autoComplete="new-password"
          disabled={busy}
        />
        <div className="field">
          <label className="label" htmlFor={`${ids}-kdf`}>
            Key strength
          </label>
          <select
            id={`${ids}-kdf`}
            value={kdf}
            disabled={busy}
            aria-describedby={kdfHintId}
            onChange={(event) => {
              setKdf(event.target.value as KdfPresetName);
            }}
          >
            {KDF_PRESET_NAMES.map((preset) => (
              <option key={preset} value={preset}>
                {presetLabel(preset, estimate)}
              </option>
            ))}
          </select>
          <p className="hint muted" id={kdfHintId}>
            {estimate === null
              ? 'Measuring how long unlocking takes on this computer…'
              : `Unlocking will take about ${formatDuration(estimate[kdf])} on this computer. Stronger settings make guessing the passphrase slower too.`}
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
