import type { VaultInfo } from '../../core/index.js';
import { HEADER_BACKUP_FILE } from '../../core/vault/layout.js';
import type { Context } from '../context.js';
import { EXIT } from '../errors.js';
import { formatBytes } from '../format.js';
import { describeSlot } from './keys.js';

/** `coffer info <vault-dir> [--json]` */
export async function info(ctx: Context): Promise<number> {
  const [dir = ''] = ctx.args;
  const details = await ctx.withVault(dir, (vault) => vault.info());
  if (ctx.flag('json')) ctx.printJson(details);
  else for (const line of describe(dir, details)) ctx.print(line);
  return EXIT.ok;
}

function readOnly(details: VaultInfo): string {
  if (details.readOnly) return 'yes';
  return details.headerOlderThanData
    ? `yes, until ${HEADER_BACKUP_FILE} is imported (the header in use is older than the data)`
    : 'no';
}

function describe(dir: string, details: VaultInfo): string[] {
  const lines = [
    `Vault:            ${dir}`,
    `Format version:   ${details.format}`,
    `Vault id:         ${details.vaultId}`,
    `Read-only:        ${readOnly(details)}`,
    `Size padding:     ${details.contentPadding}`,
  ];
  for (const slot of details.slots) {
    lines.push(
      `Key slot ${slot.index}:       ${describeSlot(slot)}${slot.unlockedWith ? ' (unlocked with)' : ''}`,
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
