import type { Ref } from 'react';

import { PassphraseField } from '../components/PassphraseField.js';

/**
 * The secret this window was unlocked with, asked again before a change of the vault's keys: someone at an
 * unlocked, unattended computer must not be able to lock the owner out or add a way in for later. After an unlock
 * with the recovery key, that key is what is asked.
 */
export function CurrentSecretField({
  withRecoveryKey,
  value,
  onValue,
  disabled,
  inputRef,
  errorId,
}: {
  withRecoveryKey: boolean;
  value: string;
  onValue: (value: string) => void;
  disabled: boolean;
  /** The field itself, for the form to give it the keyboard. */
  inputRef?: Ref<HTMLInputElement>;
  /** The error this field is at fault for: it is then marked invalid and described by it. */
  errorId?: string | undefined;
}) {
  return (
    <PassphraseField
      label={withRecoveryKey ? 'Recovery key you unlocked with' : 'Current passphrase'}
      value={value}
      onValue={onValue}
      autoComplete="current-password"
      disabled={disabled}
      inputRef={inputRef}
      invalid={errorId !== undefined}
      describedBy={errorId === undefined ? [] : [errorId]}
    />
  );
}
