import { CryptoBackendError, KdfLimitError } from '../errors.js';
import { KEY_BYTES, SALT_BYTES } from './constants.js';
import { SecretKey } from './keys.js';
import type { SodiumBackend } from './sodium.js';

/** Argon2id v1.3 cost parameters, as stored in a key slot. Memory is in KiB, Argon2's own unit. */
export interface KdfParams {
  readonly opslimit: number;
  readonly memlimitKiB: number;
}

/**
 * Strength presets. interactive and sensitive are libsodium's; moderate is libsodium's MODERATE memory (256 MiB)
 * with a fourth pass, because three passes measured 0.42 s here and the target for the default is 0.5–1 s
 * (FORMAT.md "Key derivation" has the figures and the command that measured them).
 */
export const KDF_PRESETS = {
  interactive: { opslimit: 2, memlimitKiB: 64 * 1024 },
  moderate: { opslimit: 4, memlimitKiB: 256 * 1024 },
  sensitive: { opslimit: 4, memlimitKiB: 1024 * 1024 },
} as const satisfies Record<string, KdfParams>;

export type KdfPreset = keyof typeof KDF_PRESETS;

/** About half a second here with the native backend; see FORMAT.md "Key derivation". */
export const DEFAULT_KDF_PRESET: KdfPreset = 'moderate';

/** Nothing weaker than libsodium's INTERACTIVE preset is accepted, on create or on unlock. */
export const KDF_FLOOR: KdfParams = KDF_PRESETS.interactive;

/**
 * No single slot costlier than this is run, so a crafted vault cannot make unlock allocate more than 1 GiB
 * (libsodium's SENSITIVE memory); ten passes over it take about 8.5 s here. The header also caps the summed work
 * of all slots (KDF_TOTAL_BUDGET in vault-header.ts).
 */
export const KDF_CEILING: KdfParams = { opslimit: 10, memlimitKiB: 1024 * 1024 };

/**
 * Checks parameters against the floor and the ceiling.
 * @throws {@link KdfLimitError} when any parameter is out of range.
 */
export function checkKdfParams(params: KdfParams): void {
  const { opslimit, memlimitKiB } = params;
  if (!Number.isInteger(opslimit) || !Number.isInteger(memlimitKiB)) {
    throw new KdfLimitError('Key-derivation parameters must be whole numbers.');
  }
  if (opslimit < KDF_FLOOR.opslimit || memlimitKiB < KDF_FLOOR.memlimitKiB) {
    throw new KdfLimitError(
      `Key-derivation parameters are too weak (${opslimit} passes, ${memlimitKiB} KiB): the minimum is ` +
        `${KDF_FLOOR.opslimit} passes and ${KDF_FLOOR.memlimitKiB} KiB. The vault header may have been tampered with.`,
    );
  }
  if (opslimit > KDF_CEILING.opslimit || memlimitKiB > KDF_CEILING.memlimitKiB) {
    throw new KdfLimitError(
      `Key-derivation parameters are too costly (${opslimit} passes, ${memlimitKiB} KiB): the maximum is ` +
        `${KDF_CEILING.opslimit} passes and ${KDF_CEILING.memlimitKiB} KiB. Refusing to run them; the vault ` +
        'header may have been crafted to exhaust memory.',
    );
  }
}

/**
 * Derives a passphrase key with Argon2id. Limits are checked before any memory is allocated.
 * @param passphrase - UTF-8 bytes, NFC-normalised by the caller ({@link encodePassphrase}).
 * @throws {@link KdfLimitError} when the parameters are outside the floor/ceiling, or the salt is malformed.
 * @throws {@link CryptoBackendError} if the derivation yields an all-zero key (a known failure of memory-starved
 * builds).
 */
export async function derivePassphraseKey(
  sodium: SodiumBackend,
  passphrase: Uint8Array,
  salt: Uint8Array,
  params: KdfParams,
): Promise<SecretKey> {
  checkKdfParams(params);
  if (salt.byteLength !== SALT_BYTES)
    throw new KdfLimitError(`The key-derivation salt must be ${SALT_BYTES} bytes.`);
  const out = await sodium.argon2id(KEY_BYTES, passphrase, salt, params.opslimit, params.memlimitKiB * 1024);
  if (out.every((byte) => byte === 0)) {
    sodium.memzero(out);
    throw new CryptoBackendError(
      'The crypto library returned an all-zero key, so it is not working correctly on this system; nothing was ' +
        'unlocked or changed. Reinstall Coffer or report this.',
    );
  }
  return new SecretKey(sodium, out);
}

/**
 * The passphrase as NFC-normalised UTF-8, so the same passphrase typed on macOS (NFD input) and elsewhere unlocks.
 * JavaScript strings cannot be wiped; keep the returned buffer and wipe it when done.
 */
export function encodePassphrase(sodium: SodiumBackend, passphrase: string): Buffer {
  const encoded = Buffer.from(passphrase.normalize('NFC'), 'utf8');
  const owned = Buffer.alloc(encoded.length);
  owned.set(encoded);
  // Buffer.from may have placed the bytes in Node's shared pool; clear them there.
  sodium.memzero(encoded);
  return owned;
}
