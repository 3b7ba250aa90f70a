import { DEFAULT_KDF_PRESET, type KdfPreset } from '../../core/index.js';
import type { Context } from '../context.js';
import { EXIT } from '../errors.js';

/** `coffer init <vault-dir> [--kdf preset]` */
export async function init(ctx: Context): Promise<number> {
  const [dir = ''] = ctx.args;
  // args.ts has already checked the value against the engine's preset names.
  const kdf = ctx.string('kdf') as KdfPreset | undefined;
  await ctx.createVault(dir, kdf);
  ctx.print(
    `Created the vault "${dir}" (key derivation: ${kdf ?? DEFAULT_KDF_PRESET}). Keep the passphrase safe: ` +
      'it cannot be recovered.',
  );
  return EXIT.ok;
}
