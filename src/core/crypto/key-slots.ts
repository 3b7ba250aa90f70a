import { InvalidArgumentError } from '../errors.js';
import type { KeySlotInfo } from '../types.js';
import { KDF_PRESETS, type KdfParams, type KdfPreset } from './kdf.js';
import { RecoveryKey } from './recovery-key.js';
import type { SodiumBackend } from './sodium.js';
import {
  checkSlotBudget,
  MAX_SLOTS,
  rewriteVaultHeader,
  sealSlot,
  type KeySlot,
  type UnlockedKeys,
  type VaultHeader,
} from './vault-header.js';

/** The slots of a header, for display; `opened` names the slot that unlocked the session, if any. */
export function describeSlots(header: VaultHeader, opened?: Buffer): KeySlotInfo[] {
  return header.slots.map((slot, index) => {
    const kdf =
      slot.kind === 'passphrase'
        ? {
            opslimit: slot.kdf.opslimit,
            memlimitKiB: slot.kdf.memlimitKiB,
            ...presetOf(slot.kdf),
          }
        : undefined;
    return {
      index,
      kind: slot.kind,
      ...(kdf ? { kdf } : {}),
      ...(opened ? { unlockedWith: slot.salt.equals(opened) } : {}),
    };
  });
}

function presetOf(kdf: KdfParams): { preset?: KdfPreset } {
  const entry = Object.entries(KDF_PRESETS).find(
    ([, params]) => params.opslimit === kdf.opslimit && params.memlimitKiB === kdf.memlimitKiB,
  );
  return entry ? { preset: entry[0] as KdfPreset } : {};
}

function openedIndex(header: VaultHeader, keys: UnlockedKeys): number {
  return header.slots.findIndex((slot) => slot.salt.equals(keys.openedSlotSalt));
}

/** A new header and the salt of its slot that now stands for the session's way in. */
export interface HeaderChange {
  readonly headerBytes: Buffer;
  readonly openedSlotSalt: Buffer;
}

/**
 * Replaces the passphrase slot this session was unlocked with by one for `passphrase` (new salt, nonce and `kdf`),
 * in its place; nothing else changes (FORMAT.md 4.6). One key derivation.
 * @throws {@link InvalidArgumentError} when the session was unlocked with the recovery key, or for an empty
 * passphrase; {@link KdfLimitError} when `kdf` breaks the limits or the budget; as {@link rewriteVaultHeader}.
 */
export async function changePassphraseSlot(
  sodium: SodiumBackend,
  keys: UnlockedKeys,
  headerBytes: Buffer,
  passphrase: Uint8Array,
  kdf: KdfParams,
): Promise<HeaderChange> {
  let replaced: KeySlot | undefined;
  const bytes = await rewriteVaultHeader(sodium, keys, headerBytes, async (header) => {
    const index = openedIndex(header, keys);
    if (header.slots[index]?.kind !== 'passphrase') {
      throw new InvalidArgumentError(
        'This vault was unlocked with its recovery key, which has no passphrase to change. Add a passphrase ' +
          '(coffer keys add) instead, and remove a forgotten one (coffer keys remove).',
      );
    }
    const slots = [...header.slots];
    // The budget is checked on the new set before the derivation runs, so an over-budget preset costs nothing.
    checkSlotBudget(
      slots.flatMap((slot, at) => (at === index ? [kdf] : slot.kind === 'passphrase' ? [slot.kdf] : [])),
    );
    replaced = await sealSlot(sodium, header.vaultId, keys.kek, passphrase, kdf);
    slots[index] = replaced;
    return { ...header, slots };
  });
  return { headerBytes: bytes, openedSlotSalt: replaced?.salt ?? keys.openedSlotSalt };
}

/**
 * Removes slot `index` (0-based, stored order). Refuses the last slot and the slot this session was unlocked with,
 * so the secret just used always still opens the vault (FORMAT.md 4.6).
 * @throws {@link InvalidArgumentError} for those, and for an index that names no slot.
 */
export async function removeKeySlot(
  sodium: SodiumBackend,
  keys: UnlockedKeys,
  headerBytes: Buffer,
  index: number,
): Promise<Buffer> {
  return rewriteVaultHeader(sodium, keys, headerBytes, (header) => {
    if (!Number.isInteger(index) || index < 0 || index >= header.slots.length) {
      throw new InvalidArgumentError(
        `There is no key slot ${index}: this vault has slots 0 to ${header.slots.length - 1}.`,
      );
    }
    if (header.slots.length === 1) {
      throw new InvalidArgumentError(
        "This is the vault's only key slot, its last way in: it cannot be removed. Add another first.",
      );
    }
    if (index === openedIndex(header, keys)) {
      throw new InvalidArgumentError(
        `Slot ${index} is the one this vault was just unlocked with, so it is not removed (that way the vault ` +
          'always still opens with what was just typed). Unlock with another passphrase or the recovery key to ' +
          'remove it, or change it instead.',
      );
    }
    return { ...header, slots: header.slots.filter((_, at) => at !== index) };
  });
}

/**
 * Makes a new recovery key: a new recovery slot in place of the old one (which no longer opens anything), or
 * appended when there was none. No Argon2id runs.
 * @returns the new header and the key, which the caller shows once and wipes.
 * @throws {@link InvalidArgumentError} when the header has {@link MAX_SLOTS} slots and none is a recovery slot.
 */
export async function replaceRecoverySlot(
  sodium: SodiumBackend,
  keys: UnlockedKeys,
  headerBytes: Buffer,
): Promise<HeaderChange & { recoveryKey: RecoveryKey }> {
  const recoveryKey = RecoveryKey.generate(sodium);
  // Set inside the change: the new slot's salt, when the slot it replaces is the one this session came in through.
  const moved: { salt?: Buffer } = {};
  try {
    const bytes = await rewriteVaultHeader(sodium, keys, headerBytes, async (header) => {
      const index = header.slots.findIndex((slot) => slot.kind === 'recovery-key');
      if (index < 0 && header.slots.length >= MAX_SLOTS) {
        throw new InvalidArgumentError(
          `This vault has ${MAX_SLOTS} passphrase slots, the most a vault holds, and no room for a recovery key. ` +
            'Remove a passphrase first (coffer keys remove).',
        );
      }
      const sealed = await sealSlot(sodium, header.vaultId, keys.kek, recoveryKey);
      if (header.slots[index]?.salt.equals(keys.openedSlotSalt) === true) moved.salt = sealed.salt;
      const slots = [...header.slots];
      slots.splice(index < 0 ? slots.length : index, index < 0 ? 0 : 1, sealed);
      return { ...header, slots };
    });
    // Replacing the recovery slot this session came in through moves the session to the new one.
    return {
      headerBytes: bytes,
      openedSlotSalt: moved.salt ?? keys.openedSlotSalt,
      recoveryKey,
    };
  } catch (error) {
    recoveryKey.wipe(sodium);
    throw error;
  }
}
