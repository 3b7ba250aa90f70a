import {
  DEFAULT_CONTENT_PADDING,
  DEFAULT_KDF_PRESET,
  type ContentPadding,
  type KdfPreset,
} from '../../core/index.js';
import type { Context } from '../context.js';
import { EXIT } from '../errors.js';

/** `coffer init <vault-dir> [--kdf preset] [--padding padme|none]` */
export async function init(ctx: Context): Promise<number> {
  const [dir = ''] = ctx.args;
  // args.ts has already checked the values against the engine's names.
  const kdf = (ctx.string('kdf') as KdfPreset | undefined) ?? DEFAULT_KDF_PRESET;
  const contentPadding = (ctx.string('padding') as ContentPadding | undefined) ?? DEFAULT_CONTENT_PADDING;
  await ctx.createVault(dir, { kdf, contentPadding });
  ctx.print(
    `Created the vault "${dir}" (key derivation: ${kdf}; size padding: ${contentPadding}). Keep the passphrase ` +
      'safe: it cannot be recovered.',
  );
  return EXIT.ok;
}
