import { KEY_BYTES, SALT_BYTES } from '../core/crypto/constants.js';
import { KDF_PRESETS, type KdfPreset } from '../core/crypto/kdf.js';
import type { SodiumBackend } from '../core/crypto/sodium.js';

/** Milliseconds one Argon2id derivation of each preset is expected to take on this machine. */
export type KdfEstimate = Readonly<Record<KdfPreset, number>>;

/**
 * Times two derivations of the cheapest preset (64 MiB, about a tenth of a second each) and scales the faster to
 * the others by their work, memory × passes: Argon2id's time is linear in both. The first run of a process pays for
 * mapping its memory, which an unlock does not, hence the faster of two. Measuring each preset would cost seconds
 * and a GiB of memory just to fill a form.
 */
export async function estimateKdf(
  sodium: SodiumBackend,
  now: () => number = performance.now.bind(performance),
): Promise<KdfEstimate> {
  const base = KDF_PRESETS.interactive;
  // Throwaway inputs: the derived key protects nothing and is wiped.
  const passphrase = new Uint8Array(16);
  const salt = new Uint8Array(SALT_BYTES);
  const derive = async (): Promise<number> => {
    const started = now();
    const key = await sodium.argon2id(KEY_BYTES, passphrase, salt, base.opslimit, base.memlimitKiB * 1024);
    const elapsed = now() - started;
    sodium.memzero(key);
    return elapsed;
  };
  const elapsed = Math.min(await derive(), await derive());
  const work = (preset: KdfPreset): number => KDF_PRESETS[preset].opslimit * KDF_PRESETS[preset].memlimitKiB;
  const scaled = (preset: KdfPreset): number =>
    Math.max(1, Math.round((elapsed * work(preset)) / work('interactive')));
  return { interactive: scaled('interactive'), moderate: scaled('moderate'), sensitive: scaled('sensitive') };
}
