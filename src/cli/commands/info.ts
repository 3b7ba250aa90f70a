import { KDF_PRESETS, type VaultInfo } from '../../core/index.js';
import type { Context } from '../context.js';
import { EXIT } from '../errors.js';
import { formatBytes } from '../format.js';

/** `coffer info <vault-dir> [--json]` */
export async function info(ctx: Context): Promise<number> {
  const [dir = ''] = ctx.args;
  const details = await ctx.withVault(dir, (vault) => vault.info());
  if (ctx.flag('json')) ctx.printJson(details);
  else for (const line of describe(dir, details)) ctx.print(line);
  return EXIT.ok;
}

function describe(dir: string, details: VaultInfo): string[] {
  const lines = [
    `Vault:            ${dir}`,
    `Format version:   ${details.formatVersion}`,
    `Vault id:         ${details.vaultId}`,
    `Read-only:        ${details.readOnly ? 'yes' : 'no'}`,
  ];
  for (const [index, slot] of details.kdf.entries()) {
    const preset = Object.entries(KDF_PRESETS).find(
      ([, params]) => params.opslimit === slot.opslimit && params.memlimitKiB === slot.memlimitKiB,
    )?.[0];
    lines.push(
      `Key slot ${index + 1}:       Argon2id, ${slot.opslimit} passes, ${formatBytes(slot.memlimitKiB * 1024)}` +
        (preset === undefined ? '' : ` (${preset})`),
    );
  }
  const keyIds = details.keyIds ?? [];
  if (keyIds.length > 0)
    lines.push(`Data keys:        ${keyIds.join(', ')} (new data under ${keyIds.at(-1) ?? ''})`);
  if (details.files !== undefined) lines.push(`Files:            ${details.files}`);
  if (details.folders !== undefined) lines.push(`Folders:          ${details.folders}`);
  if (details.totalBytes !== undefined) lines.push(`Contents:         ${formatBytes(details.totalBytes)}`);
  lines.push(`Stored on disk:   ${formatBytes(details.storedBytes)}`);
  return lines;
}
