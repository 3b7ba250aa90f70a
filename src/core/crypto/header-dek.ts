import { IntegrityError, InvalidArgumentError } from '../errors.js';
import type { SecretKey } from './keys.js';
import type { SodiumBackend } from './sodium.js';
import {
  parseVaultHeader,
  serializeVaultHeader,
  verifyHeaderMac,
  wrapDek,
  type UnlockedKeys,
  type VaultHeader,
} from './vault-header.js';

/*
 * Key rotation's changes to the vault header (FORMAT.md 4.3, 11): one more wrapped DEK at the end, which makes it
 * the active one; after a re-encryption, only that one kept. Kept apart from vault-header.ts's slot operations for
 * now; it belongs beside them.
 */

const MAX_KEY_ID = 0xffffffff;
const MAX_DEKS = 0xffff;

/**
 * The header in use, parsed, once it is known to be this vault's and its MAC verifies with the unlocked KEK.
 * @throws {@link IntegrityError} otherwise.
 */
function verifiedHeader(sodium: SodiumBackend, keys: UnlockedKeys, headerBytes: Buffer): VaultHeader {
  const header = parseVaultHeader(sodium, headerBytes);
  if (!header.vaultId.equals(keys.vaultId))
    throw new IntegrityError('wrong-file', { subject: 'vault header' });
  // Re-MACing an unverified header would bless whatever an attacker slipped into it.
  verifyHeaderMac(sodium, keys.kek, headerBytes);
  return header;
}

/**
 * The key id a new DEK gets: one more than the largest in the header, so ids are never reused.
 * @throws {@link InvalidArgumentError} when the ids are used up (4,294,967,295 rotations).
 */
export function nextKeyId(keyIds: readonly number[]): number {
  const next = Math.max(0, ...keyIds) + 1;
  if (next > MAX_KEY_ID)
    throw new InvalidArgumentError('This vault has used every key id; it cannot rotate again.');
  return next;
}

/**
 * Adds a DEK to an unlocked vault's header, as the last (active) one. Costs no key derivation; nothing stored is
 * re-encrypted.
 * @returns the new header bytes, to be written atomically in place of the old.
 * @throws {@link IntegrityError} if `headerBytes` is not this vault's header or its MAC fails.
 * @throws {@link InvalidArgumentError} when `keyId` is already in the header or the header holds 65,535 DEKs.
 */
export function addDekToHeader(
  sodium: SodiumBackend,
  keys: UnlockedKeys,
  headerBytes: Buffer,
  keyId: number,
  dek: SecretKey,
): Buffer {
  const header = verifiedHeader(sodium, keys, headerBytes);
  if (header.deks.some((wrapped) => wrapped.keyId === keyId))
    throw new InvalidArgumentError(`The vault header already has a key ${keyId}.`);
  if (header.deks.length >= MAX_DEKS)
    throw new InvalidArgumentError(`A vault header holds at most ${MAX_DEKS} data keys.`);
  const wrapped = wrapDek(sodium, header.vaultId, keys.kek, keyId, dek);
  return serializeVaultHeader(sodium, { ...header, deks: [...header.deks, wrapped] }, keys.kek);
}

/**
 * Removes every DEK but the active (last) one from an unlocked vault's header, once nothing stored names them any
 * more (FORMAT.md section 11). Costs no key derivation.
 * @returns the new header bytes, to be written atomically in place of the old.
 * @throws {@link IntegrityError} if `headerBytes` is not this vault's header or its MAC fails.
 * @throws {@link InvalidArgumentError} when the header's last DEK is not `activeKeyId` (a header that changed
 * since the caller decided what to keep).
 */
export function keepOnlyActiveDek(
  sodium: SodiumBackend,
  keys: UnlockedKeys,
  headerBytes: Buffer,
  activeKeyId: number,
): Buffer {
  const header = verifiedHeader(sodium, keys, headerBytes);
  const active = header.deks.at(-1);
  if (active?.keyId !== activeKeyId)
    throw new InvalidArgumentError(`The vault header's active data key is not key ${activeKeyId}.`);
  return serializeVaultHeader(sodium, { ...header, deks: [active] }, keys.kek);
}
