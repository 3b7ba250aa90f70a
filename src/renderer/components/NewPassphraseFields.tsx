import { useId } from 'react';

import { PassphraseField } from './PassphraseField.js';
import { PassphraseStrength } from './PassphraseStrength.js';

/**
 * A new passphrase typed twice, with how hard it is to guess between the two fields (creating a vault, changing or
 * adding a passphrase).
 */
export function NewPassphraseFields({
  label,
  passphrase,
  repeat,
  onPassphrase,
  onRepeat,
  userInputs,
  disabled,
}: {
  /** "Passphrase", "New passphrase"…; the second field is "Repeat" and this in lower case. */
  label: string;
  passphrase: string;
  repeat: string;
  onPassphrase: (value: string) => void;
  onRepeat: (value: string) => void;
  /** Words the user chose nearby (the vault's name), which make a passphrase easier to guess. */
  userInputs: readonly string[];
  disabled: boolean;
}) {
  const strengthId = `${useId()}-strength`;
  return (
    <>
      <PassphraseField
        label={label}
        value={passphrase}
        onValue={onPassphrase}
        autoComplete="new-password"
        disabled={disabled}
        describedBy={[strengthId]}
      />
      <PassphraseStrength id={strengthId} passphrase={passphrase} userInputs={userInputs} />
      <PassphraseField
        label={`Repeat ${label.toLowerCase()}`}
        value={repeat}
        onValue={onRepeat}
        autoComplete="new-password"
        disabled={disabled}
      />
    </>
  );
}
