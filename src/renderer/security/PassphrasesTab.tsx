import { KeyRound, LifeBuoy } from 'lucide-react';
import { useId, useRef, useState, type SyntheticEvent } from 'react';

import type { Problem, VaultInfo } from '../../shared/contract.js';
import { call } from '../api.js';
import { Actions, Frame } from '../browser/dialogs.js';
import { ErrorText } from '../components/ErrorText.js';
import { KdfPresetField, kdfPresetLabel, type KdfPresetName } from '../components/KdfPresetField.js';
import { NewPassphraseFields } from '../components/NewPassphraseFields.js';
import { useFieldFault } from '../components/field-fault.js';
import { useRetypeAfterFailure } from '../focus.js';
import { useWeakPassphraseAsk } from '../components/weak-passphrase.js';
import { CurrentSecretField } from './CurrentSecretField.js';
import { HeaderBackup } from './HeaderBackup.js';
import { slotName, whyNotRemovable, type Slot } from './slots.js';
import { useSecurityAction } from './use-security-action.js';

export type Changed = (status: string, logProblems: readonly Problem[]) => void;

/** What a tab of the Security page is given: the vault, its facts, and what to call after a change. */
export interface SecurityTabProps {
  readonly vaultId: string;
  readonly vaultName: string;
  readonly info: VaultInfo;
  readonly onChanged: Changed;
}

function SlotList({ slots, onRemove }: { slots: readonly Slot[]; onRemove: (slot: Slot) => void }) {
  return (
    <table className="slot-table">
      <caption className="visually-hidden">Ways into this vault</caption>
      <thead>
        <tr>
          <th scope="col">Way in</th>
          <th scope="col">Key strength</th>
          <th scope="col">
            <span className="visually-hidden">State and actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {slots.map((slot) => {
          const name = slotName(slots, slot);
          const reason = whyNotRemovable(slots, slot);
          return (
            <tr key={slot.index}>
              <th scope="row">
                <span className="slot-name">
                  {slot.kind === 'recovery-key' ? (
                    <LifeBuoy size={16} aria-hidden="true" />
                  ) : (
                    <KeyRound size={16} aria-hidden="true" />
                  )}
                  {name}
                </span>
              </th>
              <td>{slot.kind === 'passphrase' ? kdfPresetLabel(slot.kdf?.preset) : 'No key derivation'}</td>
              <td className="slot-actions">
                {slot.unlockedWith === true && <span className="badge">Used for this unlock</span>}
                {reason === null ? (
                  <button
                    type="button"
                    className="small"
                    onClick={() => {
                      onRemove(slot);
                    }}
                  >
                    Remove {name.toLowerCase()}…
                  </button>
                ) : (
                  <span className="muted hint">{reason}</span>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** A field of the change or add form that an error can be about. */
type Field = 'current' | 'passphrase' | 'repeat';

/**
 * Changing the passphrase this window used, or adding another: the current secret, the new passphrase twice with
 * its strength, its key strength. The typed secrets are cleared from this form once sent.
 */
function PassphraseForm({
  mode,
  vaultId,
  vaultName,
  withRecoveryKey,
  currentPreset,
  onDone,
  onCancel,
}: {
  mode: 'change' | 'add';
  vaultId: string;
  vaultName: string;
  withRecoveryKey: boolean;
  currentPreset: KdfPresetName;
  onDone: Changed;
  onCancel: () => void;
}) {
  const [current, setCurrent] = useState('');
  const [passphrase, setPassphrase] = useState('');
  const [repeat, setRepeat] = useState('');
  const [kdf, setKdf] = useState<KdfPresetName>(currentPreset);
  const { busy, error, setError, run } = useSecurityAction(mode, withRecoveryKey);
  const title = mode === 'change' ? 'Change passphrase' : 'Add a passphrase';
  const weak = useWeakPassphraseAsk();
  /** The field the error is about, which takes the keyboard (null: the error is the back end's). */
  const { fault, setFault, edited } = useFieldFault<Field>(() => {
    setError(null);
  });
  const fields = {
    current: useRef<HTMLInputElement>(null),
    passphrase: useRef<HTMLInputElement>(null),
    repeat: useRef<HTMLInputElement>(null),
  };
  const errorId = `${useId()}-error`;
  // Any refusal by the back end (a wrong current secret, a busy vault) empties the current secret's field, which
  // takes the keyboard once the form is enabled again, to be typed in again. A fault in the new passphrase does not.
  useRetypeAfterFailure(fields.current, busy, error !== null && (fault === null || fault === 'current'));

  const submit = async (event: SyntheticEvent): Promise<void> => {
    event.preventDefault();
    const problem: { field: Field; words: string | null } =
      current === ''
        ? {
            field: 'current',
            words: withRecoveryKey
              ? 'Type the recovery key you unlocked with.'
              : 'Type the current passphrase.',
          }
        : passphrase === ''
          ? { field: 'passphrase', words: 'Choose the new passphrase.' }
          : passphrase !== repeat
            ? { field: 'repeat', words: 'The two new passphrases differ. Type them again.' }
            : { field: 'passphrase', words: weak.ask(passphrase, title) };
    if (problem.words !== null) {
      setError(problem.words);
      setFault(problem.field);
      fields[problem.field].current?.focus();
      return;
    }
    setFault(null);
    let logProblems: readonly Problem[] = [];
    const worked = await run(
      async () => {
        ({ logProblems } =
          mode === 'change'
            ? await call('security.changePassphrase', { vaultId, current, passphrase, kdf })
            : await call('security.addPassphrase', { vaultId, current, passphrase, kdf }));
      },
      (code) => {
        // The secret typed first was not the one this window unlocked with (or a recovery key with a typo).
        if (code === 'WRONG_PASSPHRASE' || (withRecoveryKey && code === 'INVALID_ARGUMENT'))
          setFault('current');
      },
    );
    // Cleared whatever happened: a failed try is typed again, never kept.
    setCurrent('');
    if (!worked) return;
    setPassphrase('');
    setRepeat('');
    onDone(
      mode === 'change'
        ? 'Passphrase changed. From now on, only the new one opens the vault in its place.'
        : 'Passphrase added. It opens the vault from the next unlock.',
      logProblems,
    );
  };

  return (
    <form
      className="security-form"
      aria-label={title}
      aria-busy={busy}
      onSubmit={(event) => void submit(event)}
    >
      <h3>{title}</h3>
      <CurrentSecretField
        withRecoveryKey={withRecoveryKey}
        value={current}
        onValue={edited('current', setCurrent)}
        disabled={busy}
        inputRef={fields.current}
        errorId={fault === 'current' ? errorId : undefined}
      />
      <NewPassphraseFields
        label="New passphrase"
        passphrase={passphrase}
        repeat={repeat}
        onPassphrase={edited('passphrase', setPassphrase)}
        onRepeat={edited('repeat', setRepeat)}
        userInputs={[vaultName]}
        disabled={busy}
        fault={fault === 'passphrase' || fault === 'repeat' ? { field: fault, errorId } : undefined}
        passphraseRef={fields.passphrase}
        repeatRef={fields.repeat}
        onScore={weak.onScore}
      />
      <KdfPresetField value={kdf} onValue={setKdf} disabled={busy} />
      <ErrorText message={error} id={errorId} />
      <div className="actions">
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? (mode === 'change' ? 'Changing…' : 'Adding…') : title}
        </button>
      </div>
      {busy && (
        <p className="muted hint" role="status">
          Deriving the key from the passphrase (Argon2id); this takes a moment.
        </p>
      )}
    </form>
  );
}

/** Removes a slot after asking, naming what stops working. */
function RemoveDialog({
  vaultId,
  name,
  slot,
  onDone,
  onCancel,
}: {
  vaultId: string;
  name: string;
  slot: Slot;
  onDone: Changed;
  onCancel: () => void;
}) {
  const { busy, error, run } = useSecurityAction('remove');
  const remove = async (): Promise<void> => {
    let logProblems: readonly Problem[] = [];
    const worked = await run(async () => {
      ({ logProblems } = await call('security.removeSlot', { vaultId, index: slot.index }));
    });
    if (worked) onDone(`${name} removed: it no longer opens the vault.`, logProblems);
  };
  return (
    <Frame title={`Remove ${name.toLowerCase()}?`} onCancel={onCancel} role="alertdialog">
      <p>
        {slot.kind === 'recovery-key' ? 'The recovery key' : 'This passphrase'} will no longer open the vault.
        A header backup exported before now still opens with it: delete old header backups you no longer
        trust.
      </p>
      <ErrorText message={error} />
      <Actions
        label={`Remove ${name.toLowerCase()}`}
        kind="danger"
        disabled={busy}
        onConfirm={() => void remove()}
        onCancel={onCancel}
      />
    </Frame>
  );
}

/** The vault's ways in (passphrases and the recovery key), with change, add and remove. */
export function PassphrasesTab({ vaultId, vaultName, info, onChanged }: SecurityTabProps) {
  const [view, setView] = useState<'list' | 'change' | 'add'>('list');
  const [removing, setRemoving] = useState<Slot | null>(null);
  const { slots } = info;
  const inUse = slots.find((slot) => slot.unlockedWith === true);
  const withRecoveryKey = inUse?.kind === 'recovery-key';
  const preset = (inUse?.kdf?.preset ?? 'moderate') as KdfPresetName;
  const done: Changed = (status, logProblems) => {
    setView('list');
    setRemoving(null);
    onChanged(status, logProblems);
  };

  if (view !== 'list')
    return (
      <PassphraseForm
        mode={view}
        vaultId={vaultId}
        vaultName={vaultName}
        withRecoveryKey={withRecoveryKey}
        currentPreset={view === 'change' ? preset : 'moderate'}
        onDone={done}
        onCancel={() => {
          setView('list');
        }}
      />
    );
  return (
    <div className="security-section">
      <p className="muted">
        Each passphrase opens the vault on its own. A vault holds at most 8 ways in, the recovery key
        included.
      </p>
      <SlotList slots={slots} onRemove={setRemoving} />
      {withRecoveryKey && (
        <p className="hint muted">
          This window was unlocked with the recovery key. If you forgot a passphrase, add a new one, then
          remove the forgotten one.
        </p>
      )}
      <div className="actions">
        {!withRecoveryKey && (
          <button
            type="button"
            onClick={() => {
              setView('change');
            }}
          >
            Change passphrase…
          </button>
        )}
        <button
          type="button"
          disabled={slots.length >= 8}
          onClick={() => {
            setView('add');
          }}
        >
          Add a passphrase…
        </button>
      </div>
      {slots.length >= 8 && (
        <p className="hint muted">This vault holds 8 ways in, the most it can: remove one to add another.</p>
      )}
      <HeaderBackup vaultId={vaultId} onChanged={onChanged} />
      {removing && (
        <RemoveDialog
          vaultId={vaultId}
          name={slotName(slots, removing)}
          slot={removing}
          onDone={done}
          onCancel={() => {
            setRemoving(null);
          }}
        />
      )}
    </div>
  );
}
