import { FolderOpen, ShieldAlert } from 'lucide-react';
import { useEffect, useId, useRef, useState, type SyntheticEvent } from 'react';

import type { PickedHandle } from '../../shared/contract.js';
import { call, describeError } from '../api.js';
import { focusIsNowhere, useFocusWhenNowhere } from '../focus.js';
import { showVault } from '../store.js';
import { ErrorText } from './ErrorText.js';
import { useFieldFault } from './field-fault.js';
import { KdfPresetField, type KdfPresetName } from './KdfPresetField.js';
import { NewPassphraseFields } from './NewPassphraseFields.js';
import { TextField } from './TextField.js';
import { useWeakPassphraseAsk } from './weak-passphrase.js';

/** A field of the form that an error can be about. */
type Field = 'folder' | 'name' | 'passphrase' | 'repeat';

/** What the form still lacks, with the field to mend first; null when it may be sent. */
function missing(form: { folder: PickedHandle | null; name: string; passphrase: string; repeat: string }): {
  field: Field;
  words: string;
} | null {
  if (form.folder === null) return { field: 'folder', words: 'Choose the folder to create the vault in.' };
  if (form.name.trim() === '') return { field: 'name', words: 'Give the vault a name.' };
  if (form.passphrase === '') return { field: 'passphrase', words: 'Choose a passphrase.' };
  if (form.passphrase !== form.repeat)
    return { field: 'repeat', words: 'The two passphrases differ. Type them again.' };
  return null;
}

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
  /** The field the error is about (null: the error is the back end's). */
  const { fault, setFault, edited } = useFieldFault<Field>(() => {
    setError(null);
  });
  const weak = useWeakPassphraseAsk();
  const ids = useId();
  const warningId = `${ids}-warning`;
  const paddingHintId = `${ids}-padding-hint`;
  const errorId = `${ids}-error`;
  const fields = {
    folder: useRef<HTMLButtonElement>(null),
    name: useRef<HTMLInputElement>(null),
    passphrase: useRef<HTMLInputElement>(null),
    repeat: useRef<HTMLInputElement>(null),
  };
  const submitButton = useRef<HTMLButtonElement>(null);
  useFocusWhenNowhere(fields.folder);
  // The fields are disabled while the vault is made: one that had the keyboard drops it to the page. When the back
  // end refused, Create takes it again, to try once more (the error is announced).
  useEffect(() => {
    if (!busy && error !== null && focusIsNowhere()) submitButton.current?.focus();
  }, [busy, error]);
  const describedIf = (field: Field) => (fault === field ? errorId : undefined);

  const chooseFolder = async (): Promise<void> => {
    setError(null);
    setFault(null);
    try {
      const picked = await call('dialog.pickFolder', { purpose: 'create-vault' });
      if (picked !== null) setFolder(picked);
    } catch (cause) {
      setError(describeError(cause));
    }
  };

  const submit = async (event: SyntheticEvent): Promise<void> => {
    event.preventDefault();
    if (busy) return;
    const problem = missing({ folder, name, passphrase, repeat });
    if (problem !== null || folder === null) {
      setError(problem?.words ?? null);
      setFault(problem?.field ?? null);
      // The keyboard goes where the mending is; the field names the error it is invalid for.
      if (problem !== null) fields[problem.field].current?.focus();
      return;
    }
    const asked = weak.ask(passphrase, 'Create vault');
    if (asked !== null) {
      setError(asked);
      setFault('passphrase');
      fields.passphrase.current?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    setFault(null);
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
            <button
              type="button"
              ref={fields.folder}
              onClick={() => void chooseFolder()}
              disabled={busy}
              aria-describedby={describedIf('folder')}
            >
              <FolderOpen size={16} aria-hidden="true" />
              Choose…
            </button>
          </div>
        </div>
        <TextField
          label="Name"
          value={name}
          onValue={edited('name', setName)}
          placeholder="e.g. Personal"
          autoComplete="off"
          disabled={busy}
          inputRef={fields.name}
          aria-invalid={fault === 'name' ? true : undefined}
          aria-describedby={describedIf('name')}
        />
        <NewPassphraseFields
          label="Passphrase"
          passphrase={passphrase}
          repeat={repeat}
          onPassphrase={edited('passphrase', setPassphrase)}
          onRepeat={edited('repeat', setRepeat)}
          userInputs={[name]}
          disabled={busy}
          fault={fault === 'passphrase' || fault === 'repeat' ? { field: fault, errorId } : undefined}
          passphraseRef={fields.passphrase}
          repeatRef={fields.repeat}
          onScore={weak.onScore}
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
            Hide each file’s exact size
          </label>
          <p className="hint muted" id={paddingHintId}>
            Stored files are padded, so the vault folder shows their sizes only roughly (to within about 12
            %). This takes about 1.3 % more space on a typical mix of files. Chosen once, for the vault’s
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
        <ErrorText message={error} id={errorId} />
        <div className="actions">
          <button type="button" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
          {/* aria-disabled, not disabled, while busy: a disabled button drops the keyboard's focus to the page. */}
          <button
            type="submit"
            ref={submitButton}
            className="primary"
            aria-disabled={busy}
            aria-describedby={warningId}
          >
            {busy ? 'Creating…' : 'Create vault'}
          </button>
        </div>
      </form>
    </main>
  );
}
