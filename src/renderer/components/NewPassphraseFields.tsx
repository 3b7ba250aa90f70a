import { useId, type Ref } from 'react';

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
  fault,
  passphraseRef,
  repeatRef,
  onScore,
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
  /** The field an error is about, and the error's id, which describes it. */
  fault?: { field: 'passphrase' | 'repeat'; errorId: string } | undefined;
  passphraseRef?: Ref<HTMLInputElement>;
  repeatRef?: Ref<HTMLInputElement>;
  /** Hears how hard the passphrase is to guess (zxcvbn's 0–4; null while unknown). */
  onScore?: (score: number | null) => void;
}) {
  const strengthId = `${useId()}-strength`;
  const errorOf = (field: 'passphrase' | 'repeat'): string[] =>
    fault?.field === field ? [fault.errorId] : [];
  return (
    <>
      <PassphraseField
        label={label}
        value={passphrase}
        onValue={onPassphrase}
        autoComplete="new-password"
        disabled={disabled}
        inputRef={passphraseRef}
        invalid={fault?.field === 'passphrase'}
        describedBy={[strengthId, ...errorOf('passphrase')]}
      />
      <PassphraseStrength id={strengthId} passphrase={passphrase} userInputs={userInputs} onScore={onScore} />
      <PassphraseField
        label={`Repeat ${label.toLowerCase()}`}
        value={repeat}
        onValue={onRepeat}
        autoComplete="new-password"
        disabled={disabled}
        inputRef={repeatRef}
        invalid={fault?.field === 'repeat'}
        describedBy={errorOf('repeat')}
      />
    </>
  );
}
