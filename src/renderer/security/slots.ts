/** The vault's key slots as the Security page names them. */
import type { VaultInfo } from '../../shared/contract.js';

export type Slot = VaultInfo['slots'][number];

/** A slot's name in the list: passphrases numbered in stored order, the recovery key by its kind. */
export function slotName(slots: readonly Slot[], slot: Slot): string {
  if (slot.kind === 'recovery-key') return 'Recovery key';
  return `Passphrase ${slots.filter((other) => other.kind === 'passphrase' && other.index <= slot.index).length}`;
}

/** Why a slot cannot be removed, said before the user tries (the engine refuses the same), or null. */
export function whyNotRemovable(slots: readonly Slot[], slot: Slot): string | null {
  if (slots.length === 1) return 'The only way in: cannot be removed';
  if (slot.unlockedWith === true) return 'Cannot be removed while this window uses it';
  return null;
}
