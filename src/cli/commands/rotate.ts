import type { Context } from '../context.js';
import { EXIT } from '../errors.js';

/** `coffer rotate <vault-dir>` */
export async function rotate(ctx: Context): Promise<number> {
  const [dir = ''] = ctx.args;
  const { keyId, previousKeyId } = await ctx.withVault(dir, (vault) => vault.rotateKey());
  ctx.print(
    `New data key ${keyId}: new data is written under it. Data written under key ${previousKeyId} and older ` +
      'keeps its key and still reads; nothing was re-encrypted.',
  );
  return EXIT.ok;
}
