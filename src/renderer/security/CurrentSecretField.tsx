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
}: {
  withRecoveryKey: boolean;
  value: string;
  onValue: (value: string) => void;
  disabled: boolean;
}) {
  return (
    <PassphraseField
      label={withRecoveryKey ? 'Recovery key you unlocked with' : 'Current passphrase'}
      value={value}
      onValue={onValue}
      autoComplete="current-password"
      disabled={disabled}
    />
  );
}
