import { readFile, rm, writeFile } from 'node:fs/promises';

import {
  AlreadyExistsError,
  NotFoundError,
  type KdfPreset,
  type KeySlotInfo,
  type Vault,
} from '../../core/index.js';
import type { Context } from '../context.js';
import { EXIT, UsageError } from '../errors.js';
import { formatBytes } from '../format.js';

/** A key slot in words: "passphrase, Argon2id, 2 passes, 64 MiB (interactive)". */
export function describeSlot(slot: KeySlotInfo): string {
  if (!slot.kdf) return 'recovery key';
  const preset = slot.kdf.preset === undefined ? '' : ` (${slot.kdf.preset})`;
  return `passphrase, Argon2id, ${slot.kdf.opslimit} passes, ${formatBytes(slot.kdf.memlimitKiB * 1024)}${preset}`;
}

/** Reads a new passphrase (COFFER_NEW_PASSPHRASE or asked twice) once the vault is unlocked, and wipes it after. */
async function withNewPassphrase(
  ctx: Context,
  dir: string,
  change: (vault: Vault, passphrase: Buffer) => Promise<string>,
): Promise<number> {
  // Checked before the vault is touched, so a missing source is reported before anyone types.
  const source = ctx.newPassphraseSource();
  const done = await ctx.withVault(dir, async (vault) => {
    const passphrase = await ctx.readNewPassphrase(source);
    try {
      return await change(vault, passphrase);
    } finally {
      passphrase.fill(0);
    }
  });
  ctx.print(done);
  return EXIT.ok;
}

/** `coffer passwd <vault-dir> [--kdf preset]` */
export async function passwd(ctx: Context): Promise<number> {
  const [dir = ''] = ctx.args;
  const kdf = ctx.string('kdf') as KdfPreset | undefined;
  return withNewPassphrase(ctx, dir, async (vault, passphrase) => {
    await vault.changePassphrase(passphrase, kdf === undefined ? {} : { kdf });
    const slot = vault.keySlots().find((each) => each.unlockedWith);
    return (
      `Changed the passphrase of key slot ${slot?.index ?? '?'}; the old one no longer opens the vault. Header ` +
      'copies exported before still open with it: export the header again and destroy the old copies.'
    );
  });
}

/** `coffer keys <vault-dir> list|add|remove [<slot>] [--kdf preset] [--json]` */
export async function keys(ctx: Context): Promise<number> {
  const [dir = '', action = '', slot] = ctx.args;
  const usage = 'See "coffer keys --help".';
  if (action !== 'remove' && slot !== undefined)
    throw new UsageError(`"coffer keys ${action}" takes no slot number. ${usage}`);
  switch (action) {
    case 'list':
      return ctx.withVault(dir, (vault) => {
        const slots = vault.keySlots();
        if (ctx.flag('json')) ctx.printJson(slots);
        else {
          for (const each of slots) {
            ctx.print(
              `Slot ${each.index}: ${describeSlot(each)}${each.unlockedWith ? ' (unlocked with)' : ''}`,
            );
          }
        }
        return EXIT.ok;
      });
    case 'add': {
      const kdf = ctx.string('kdf') as KdfPreset | undefined;
      return withNewPassphrase(ctx, dir, async (vault, passphrase) => {
        const index = await vault.addPassphrase(passphrase, kdf === undefined ? {} : { kdf });
        return `Added key slot ${index}: ${describeSlot(vault.keySlots()[index] ?? { index, kind: 'passphrase' })}.`;
      });
    }
    case 'remove': {
      if (slot === undefined || !/^\d+$/u.test(slot))
        throw new UsageError(
          `"coffer keys remove" needs the slot's number, as "coffer keys list" shows it. ${usage}`,
        );
      const index = Number(slot);
      await ctx.withVault(dir, (vault) => vault.removeKeySlot(index));
      ctx.print(`Removed key slot ${index}; what it opened with no longer opens the vault.`);
      return EXIT.ok;
    }
    default:
      throw new UsageError(`Unknown action "${action}" for "coffer keys": use list, add or remove. ${usage}`);
  }
}

/** `coffer recovery-key <vault-dir> [--json]` */
export async function recoveryKey(ctx: Context): Promise<number> {
  const [dir = ''] = ctx.args;
  const key = await ctx.withVault(dir, (vault) => vault.createRecoveryKey());
  if (ctx.flag('json')) ctx.printJson({ recoveryKey: key });
  else {
    ctx.print(key);
    ctx.print(
      "This is the vault's new recovery key; any earlier one no longer works. Write it down now and keep it " +
        'apart from the vault: it is not shown again, and it opens the vault like a passphrase.',
    );
  }
  return EXIT.ok;
}

/** `coffer header <vault-dir> export|import <file>` */
export async function header(ctx: Context): Promise<number> {
  const [dir = '', action = '', file = ''] = ctx.args;
  switch (action) {
    case 'export': {
      const bytes = await ctx.withVault(dir, (vault) => vault.exportHeader());
      await writeNew(file, bytes);
      ctx.print(
        `Exported the vault header to "${file}". It opens the vault with today's passphrases and recovery key ` +
          'even after they are changed: keep it as safe as they are.',
      );
      return EXIT.ok;
    }
    case 'import': {
      const bytes = await readFile(file).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT')
          throw new NotFoundError(`"${file}" does not exist. Give the file "coffer header export" wrote.`);
        throw error;
      });
      await ctx.importHeader(dir, bytes);
      ctx.print(`Imported the vault header from "${file}"; the vault opens with the passphrases it holds.`);
      return EXIT.ok;
    }
    default:
      throw new UsageError(`Unknown action "${action}" for "coffer header": use export or import.`);
  }
}

/** Writes a new file (never over an existing one), private to its owner; a partial one is removed. */
async function writeNew(file: string, bytes: Buffer): Promise<void> {
  try {
    await writeFile(file, bytes, { flag: 'wx', mode: 0o600, flush: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new AlreadyExistsError(`"${file}" already exists; choose a new file name.`);
    await rm(file, { force: true });
    throw error;
  }
}
