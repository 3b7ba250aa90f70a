import { LoaderCircle, LockKeyhole, TriangleAlert } from 'lucide-react';
import { useEffect, useRef, useState, type SyntheticEvent } from 'react';

import type { VaultSummary } from '../../shared/contract.js';
import { ApiError, call, describeError } from '../api.js';
import { useFocusWhenNowhere, useRetypeAfterFailure } from '../focus.js';
import { formatDuration } from '../format.js';
import { askHeaderRestore, showFolder, showNotices, showVault, useCoffer } from '../store.js';
import { stoppedByLockNotice } from '../stopped-jobs.js';
import { unlockNotices } from '../unlock-notices.js';
import { unlockDelayMs } from '../../shared/unlock-delay.js';
import { logProblemNotice } from '../security/activity-words.js';
import { ErrorText } from './ErrorText.js';
import { HeaderImportDialog } from './HeaderImportDialog.js';
import { PassphraseField } from './PassphraseField.js';

const WRONG_PASSPHRASE = 'Wrong passphrase. Check Caps Lock and the keyboard layout.';
const WRONG_RECOVERY_KEY =
  'This recovery key does not open this vault: it may be an older one (making a new key revokes the old) or ' +
  'another vault’s.';

/** What unlocks: the passphrase, or the recovery key printed when it was made. */
type Secret = 'passphrase' | 'recovery-key';

/** The seconds left until `until` (a Date.now() time), ticking once a second; 0 once it has passed. */
function useSecondsLeft(until: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    setNow(Date.now());
    if (until <= Date.now()) return;
    const timer = setInterval(() => {
      setNow(Date.now());
    }, 1000);
    return () => {
      clearInterval(timer);
    };
  }, [until]);
  return Math.max(0, Math.ceil((until - now) / 1000));
}

/** A locked vault: the passphrase field, Unlock, and the way back to the start screen. */
export function UnlockScreen({ vault }: { vault: VaultSummary }) {
  const [passphrase, setPassphrase] = useState('');
  const [secret, setSecret] = useState<Secret>('passphrase');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [failures, setFailures] = useState(0);
  const [waitUntil, setWaitUntil] = useState(0);
  const secondsLeft = useSecondsLeft(waitUntil);
  const input = useRef<HTMLInputElement>(null);
  useFocusWhenNowhere(input);
  const [backup, setBackup] = useState<{ handle: string; label: string } | null>(null);
  const [restored, setRestored] = useState<readonly string[]>([]);
  const stoppedByLock = stoppedByLockNotice(useCoffer((state) => state.stoppedByLock));

  const chooseBackup = async (): Promise<void> => {
    setError(null);
    try {
      const picked = await call('dialog.pickFiles', { purpose: 'header-restore', vaultId: vault.vaultId });
      if (picked !== null) setBackup({ handle: picked.handle, label: picked.label });
    } catch (cause) {
      setError(describeError(cause));
    }
  };
  // Locked to restore the header backup (the browser's notice): the file dialog is the next step, so it opens.
  const headerRestoreAsked = useCoffer((state) => state.headerRestoreAsked === vault.vaultId);
  const latestChooseBackup = useRef(chooseBackup);
  useEffect(() => {
    latestChooseBackup.current = chooseBackup;
  });
  useEffect(() => {
    if (!headerRestoreAsked) return;
    askHeaderRestore(null);
    void latestChooseBackup.current();
  }, [headerRestoreAsked]);

  const submit = async (event: SyntheticEvent): Promise<void> => {
    event.preventDefault();
    if (passphrase === '' || secondsLeft > 0) return;
    setBusy(true);
    setError(null);
    try {
      const unlocked =
        secret === 'passphrase'
          ? await call('vault.unlock', { vaultId: vault.vaultId, passphrase })
          : await call('vault.unlockWithRecoveryKey', { vaultId: vault.vaultId, recoveryKey: passphrase });
      setPassphrase('');
      showFolder('/', unlocked.root);
      showVault({ ...vault, locked: false, headerOlderThanData: unlocked.headerOlderThanData });
      showNotices(unlockNotices(unlocked));
    } catch (cause) {
      if (secret === 'recovery-key' && cause instanceof ApiError) {
        // A typo is told apart from a wrong key by the key's checksum: the engine's words say which group.
        setError(
          cause.code === 'WRONG_PASSPHRASE'
            ? WRONG_RECOVERY_KEY
            : cause.code === 'INVALID_ARGUMENT'
              ? cause.message
              : describeError(cause),
        );
      } else if (cause instanceof ApiError && cause.code === 'WRONG_PASSPHRASE') {
        const failed = failures + 1;
        const delay = unlockDelayMs(failed);
        setFailures(failed);
        if (delay > 0) setWaitUntil(Date.now() + delay);
        setError(
          delay === 0
            ? WRONG_PASSPHRASE
            : `${WRONG_PASSPHRASE} After ${failed} wrong tries, wait ${formatDuration(delay)} before the next.`,
        );
      } else {
        setError(describeError(cause));
      }
      setBusy(false);
    }
  };

  useRetypeAfterFailure(input, busy, error !== null);

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
      <form
        className="card unlock"
        aria-labelledby="unlock-title"
        aria-busy={busy}
        onSubmit={(event) => void submit(event)}
      >
        <header className="card-header">
          <LockKeyhole size={28} aria-hidden="true" className="brand-icon" />
          <div>
            <h1 id="unlock-title">{vault.name}</h1>
            <p className="muted location">{vault.location}</p>
          </div>
        </header>
        {stoppedByLock !== null && (
          <p className="warning" role="status" id="unlock-stopped-jobs">
            <TriangleAlert size={16} aria-hidden="true" />
            <span>{stoppedByLock}</span>
          </p>
        )}
        <PassphraseField
          key={secret}
          label={secret === 'passphrase' ? 'Passphrase' : 'Recovery key'}
          inputRef={input}
          value={passphrase}
          onValue={setPassphrase}
          autoFocus
          disabled={busy}
          invalid={error !== null}
          // The field has the focus from the start: read with it, the notice of stopped jobs is heard, which a
          // live region present from the start is not.
          describedBy={[
            ...(stoppedByLock === null ? [] : ['unlock-stopped-jobs']),
            ...(error === null ? [] : ['unlock-error']),
          ]}
          autoComplete="current-password"
        />
        <ErrorText message={error} id="unlock-error" />
        {restored.length > 0 && (
          <div role="status" className="hint">
            {restored.map((line) => (
              <p key={line}>{line}</p>
            ))}
          </div>
        )}
        {busy && (
          <p className="busy hint muted" role="status">
            <LoaderCircle size={14} aria-hidden="true" className="spin" />
            {secret === 'passphrase'
              ? 'Deriving the key from the passphrase. This takes a moment by design.'
              : 'Opening the vault with the recovery key.'}
          </p>
        )}
        <button
          type="button"
          className="link"
          disabled={busy}
          onClick={() => {
            setSecret(secret === 'passphrase' ? 'recovery-key' : 'passphrase');
            setPassphrase('');
            setError(null);
          }}
        >
          {secret === 'passphrase' ? 'Use the recovery key instead' : 'Use the passphrase instead'}
        </button>
        <button type="button" className="link" disabled={busy} onClick={() => void chooseBackup()}>
          Restore a header backup…
        </button>
        <div className="actions">
          <button type="button" className="link" onClick={() => void close()} disabled={busy}>
            Choose another vault
          </button>
          <button type="submit" className="primary" disabled={busy || passphrase === '' || secondsLeft > 0}>
            {busy ? (
              <>
                <LoaderCircle size={16} aria-hidden="true" className="spin" />
                Unlocking…
              </>
            ) : secondsLeft > 0 ? (
              `Unlock (wait ${secondsLeft} s)`
            ) : (
              'Unlock'
            )}
          </button>
        </div>
      </form>
      {backup && (
        <HeaderImportDialog
          vaultId={vault.vaultId}
          file={backup.handle}
          fileLabel={backup.label}
          onClose={() => {
            setBackup(null);
          }}
          onRestored={(logProblems) => {
            setRestored([
              `The header backup “${backup.label}” is restored. Unlock with a passphrase or the recovery key it holds.`,
              ...logProblems.map(logProblemNotice),
            ]);
            setBackup(null);
            setPassphrase('');
            setError(null);
          }}
        />
      )}
    </main>
  );
}
