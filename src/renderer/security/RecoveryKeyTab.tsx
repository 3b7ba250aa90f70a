import { useRef, useState, type SyntheticEvent } from 'react';

import type { Problem } from '../../shared/contract.js';
import { call } from '../api.js';
import { ErrorText } from '../components/ErrorText.js';
import { useRetypeAfterFailure } from '../focus.js';
import { CurrentSecretField } from './CurrentSecretField.js';
import type { SecurityTabProps } from './PassphrasesTab.js';
import { RecoveryKeySheet } from './RecoveryKeySheet.js';
import { useSecurityAction } from './use-security-action.js';

/**
 * The recovery key: whether the vault has one, and "Make a recovery key" (after the current secret), which shows
 * the new key once. The key lives in this component's state only until "I have saved it" (or the vault locks,
 * which unmounts it).
 */
export function RecoveryKeyTab({ vaultId, vaultName, info, onChanged }: SecurityTabProps) {
  const [asking, setAsking] = useState(false);
  const [current, setCurrent] = useState('');
  const [made, setMade] = useState<{ key: string; logProblems: readonly Problem[] } | null>(null);
  const withRecoveryKey = info.slots.some(
    (slot) => slot.unlockedWith === true && slot.kind === 'recovery-key',
  );
  const { busy, error, setError, run } = useSecurityAction('recovery-key', withRecoveryKey);
  const hasOne = info.slots.some((slot) => slot.kind === 'recovery-key');
  const field = useRef<HTMLInputElement>(null);
  useRetypeAfterFailure(field, busy, error !== null);

  const submit = async (event: SyntheticEvent): Promise<void> => {
    event.preventDefault();
    if (current === '') {
      setError(withRecoveryKey ? 'Type the recovery key you unlocked with.' : 'Type the current passphrase.');
      return;
    }
    await run(async () => {
      const { recoveryKey, logProblems } = await call('security.makeRecoveryKey', { vaultId, current });
      setMade({ key: recoveryKey, logProblems });
      setAsking(false);
    });
    setCurrent('');
  };

  return (
    <div className="security-section">
      <p>
        A recovery key opens the vault when every passphrase is forgotten. It is 40 letters and digits, shown
        once when it is made; Coffer keeps no copy.
      </p>
      <p className="facts-line">
        <strong>{hasOne ? 'This vault has a recovery key.' : 'This vault has no recovery key.'}</strong>
      </p>
      {asking ? (
        <form
          className="security-form"
          aria-label="Make a recovery key"
          aria-busy={busy}
          onSubmit={(event) => void submit(event)}
        >
          {hasOne && (
            <p className="warning">
              <span>
                Making a new recovery key <strong>revokes the previous one</strong>: it will no longer open
                the vault.
              </span>
            </p>
          )}
          <CurrentSecretField
            withRecoveryKey={withRecoveryKey}
            value={current}
            onValue={setCurrent}
            disabled={busy}
            inputRef={field}
          />
          <ErrorText message={error} />
          <div className="actions">
            <button
              type="button"
              disabled={busy}
              onClick={() => {
                setAsking(false);
                setCurrent('');
              }}
            >
              Cancel
            </button>
            <button type="submit" className="primary" disabled={busy}>
              {busy ? 'Making…' : hasOne ? 'Make a new key and revoke the old' : 'Make recovery key'}
            </button>
          </div>
        </form>
      ) : (
        <div className="actions">
          <button
            type="button"
            onClick={() => {
              setAsking(true);
            }}
          >
            Make a recovery key…
          </button>
        </div>
      )}
      {made && (
        <RecoveryKeySheet
          vaultName={vaultName}
          recoveryKey={made.key}
          onSaved={() => {
            const { logProblems } = made;
            setMade(null);
            onChanged(
              hasOne
                ? 'Recovery key made. The previous one no longer opens the vault.'
                : 'Recovery key made. Keep it apart from this computer.',
              logProblems,
            );
          }}
        />
      )}
    </div>
  );
}
