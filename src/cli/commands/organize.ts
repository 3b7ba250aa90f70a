import type { Context } from '../context.js';
import { toVaultPath } from '../context.js';
import { EXIT, UsageError } from '../errors.js';

/** `coffer mkdir <vault-dir> <vault-folder>...` */
export async function mkdir(ctx: Context): Promise<number> {
  const [dir = '', ...folders] = ctx.args;
  await ctx.withVault(dir, (vault) => {
    for (const folder of folders) {
      const entry = vault.mkdir(toVaultPath(folder));
      if (ctx.flags.verbose) ctx.print(`created ${entry.path}`);
    }
  });
  return EXIT.ok;
}

/**
 * `coffer mv <vault-dir> <vault-path>... <vault-folder>` moves into a folder (all or nothing);
 * `coffer mv <vault-dir> <vault-path> <new-name> --rename` renames in place.
 */
export async function mv(ctx: Context): Promise<number> {
  const [dir = '', ...rest] = ctx.args;
  const last = rest.pop() ?? '';
  if (ctx.flag('rename')) {
    const [path] = rest;
    if (rest.length !== 1 || path === undefined) {
      throw new UsageError(
        'mv --rename takes one vault path and a new name: coffer mv <vault-dir> <vault-path> <new-name> --rename.',
      );
    }
    await ctx.withVault(dir, (vault) => {
      const entry = vault.rename(toVaultPath(path), last);
      if (ctx.flags.verbose) ctx.print(`renamed ${toVaultPath(path)} to ${entry.path}`);
    });
    return EXIT.ok;
  }
  await ctx.withVault(dir, (vault) => {
    const moved = vault.move(rest.map(toVaultPath), toVaultPath(last));
    if (ctx.flags.verbose) for (const entry of moved) ctx.print(`moved ${entry.path}`);
  });
  return EXIT.ok;
}

/** `coffer rm <vault-dir> <vault-path>...` */
export async function rm(ctx: Context): Promise<number> {
  const [dir = '', ...paths] = ctx.args;
  const removed = await ctx.withVault(dir, (vault) => vault.remove(paths.map(toVaultPath)));
  if (ctx.flags.verbose) ctx.print(`removed ${removed} entr${removed === 1 ? 'y' : 'ies'}`);
  return EXIT.ok;
}
