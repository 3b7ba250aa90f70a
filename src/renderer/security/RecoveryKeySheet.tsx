import { Copy, Printer, ShieldAlert } from 'lucide-react';
import { useId, useState } from 'react';
import { createPortal } from 'react-dom';
import { Dialog, Heading, Modal, ModalOverlay } from 'react-aria-components';

import { formatDate } from '../format.js';
import { recoveryKeyGroups } from './recovery-key-groups.js';

const PURPOSE =
  'This key opens the vault if every passphrase is forgotten. Anyone who has it can open the vault: keep it ' +
  'as safe as the vault itself, away from this computer. Making a new recovery key stops this one working.';

/** The key's groups, four to a line, as on screen and on paper. */
function KeyGroups({ groups, id }: { groups: readonly string[]; id?: string }) {
  return (
    <p className="recovery-key" id={id} translate="no">
      {groups.map((group, index) => (
        <span key={`${index}-${group}`} className="recovery-key-group">
          {group}
        </span>
      ))}
    </p>
  );
}

/**
 * The one page `window.print()` prints (see security.css's print rules): the vault's name, the date, the key in
 * groups and what it is for. In the document only while the key is shown.
 */
function PrintSheet({ vaultName, groups, madeAt }: { vaultName: string; groups: string[]; madeAt: number }) {
  return createPortal(
    <section className="print-sheet" aria-hidden="true">
      <h1>Coffer recovery key</h1>
      <p>
        Vault: <strong>{vaultName}</strong>
      </p>
      <p>Made: {formatDate(madeAt)}</p>
      <KeyGroups groups={groups} />
      <p>{PURPOSE}</p>
      <p>
        To use it: open the vault in Coffer, choose “Use the recovery key instead” and type the key (any
        case).
      </p>
    </section>,
    document.body,
  );
}

/**
 * Shows a new recovery key once, with Print and Copy, and will not leave the screen (no Esc, no click outside)
 * until the user says it is saved; then the caller drops it.
 */
export function RecoveryKeySheet({
  vaultName,
  recoveryKey,
  onSaved,
}: {
  vaultName: string;
  recoveryKey: string;
  onSaved: () => void;
}) {
  const [saved, setSaved] = useState(false);
  const [copyStatus, setCopyStatus] = useState<string | null>(null);
  const [madeAt] = useState(() => Date.now());
  const keyId = useId();
  const groups = recoveryKeyGroups(recoveryKey);

  const copy = (): void => {
    navigator.clipboard.writeText(recoveryKey).then(
      () => {
        setCopyStatus(
          'Copied. Paste it where you keep it, then copy something else so it leaves the clipboard.',
        );
      },
      () => {
        setCopyStatus('Coffer could not copy it here. Write the key down, or print it.');
      },
    );
  };

  return (
    <ModalOverlay isOpen isDismissable={false} isKeyboardDismissDisabled className="modal-backdrop">
      <Modal className="modal">
        <Dialog className="dialog recovery-sheet" role="alertdialog">
          <Heading slot="title">Your new recovery key</Heading>
          <p className="warning">
            <ShieldAlert size={16} aria-hidden="true" />
            <span>
              <strong>Coffer shows it once and keeps no copy.</strong> Print it or write it down now.
            </span>
          </p>
          <div className="field">
            <span className="label" id={`${keyId}-label`}>
              Recovery key for “{vaultName}”
            </span>
            <div role="group" aria-labelledby={`${keyId}-label`}>
              <KeyGroups groups={groups} id={keyId} />
            </div>
          </div>
          <p className="muted">{PURPOSE}</p>
          <div className="actions recovery-actions">
            <button
              type="button"
              onClick={() => {
                window.print();
              }}
            >
              <Printer size={16} aria-hidden="true" />
              Print
            </button>
            <button type="button" onClick={copy}>
              <Copy size={16} aria-hidden="true" />
              Copy
            </button>
          </div>
          <p className="hint muted" role="status">
            {copyStatus}
          </p>
          <label className="checkbox">
            <input
              type="checkbox"
              checked={saved}
              onChange={(event) => {
                setSaved(event.target.checked);
              }}
            />
            I have printed or written down this key and put it somewhere safe
          </label>
          <div className="actions">
            <button type="button" className="primary" disabled={!saved} onClick={onSaved}>
              I have saved it
            </button>
          </div>
        </Dialog>
      </Modal>
      <PrintSheet vaultName={vaultName} groups={groups} madeAt={madeAt} />
    </ModalOverlay>
  );
}
