import type { Context } from '../context.js';
import { EXIT } from '../errors.js';
import { formatBytes } from '../format.js';
import { plural } from '../../shared/plural.js';

/** `coffer rotate <vault-dir> [--reencrypt] [--json]` */
export async function rotate(ctx: Context): Promise<number> {
  const [dir = ''] = ctx.args;
  if (ctx.flag('reencrypt')) return reencrypt(ctx, dir);
  const rotated = await ctx.withVault(dir, (vault) => vault.rotateKey());
  if (ctx.flag('json')) ctx.printJson(rotated);
  else
    ctx.print(
      `New data key ${rotated.keyId}: new data is written under it. Data written under key ` +
        `${rotated.previousKeyId} and older keeps its key and still reads; nothing was re-encrypted.`,
    );
  return EXIT.ok;
}

async function reencrypt(ctx: Context, dir: string): Promise<number> {
  const report = await ctx.withVault(dir, (vault) =>
    ctx.job(
      'Cancelled; every file still reads. Run "coffer rotate --reencrypt" again to continue where it stopped.',
      (job) => vault.reencrypt(job),
    ),
  );
  if (ctx.flag('json')) ctx.printJson(report);
  ctx.warnProblems(report.problems);
  if (!ctx.flag('json')) {
    const done =
      `${report.rotated ? `New data key ${report.keyId}. ` : ''}Re-encrypted ` +
      `${plural(report.filesReencrypted, 'file')} (${formatBytes(report.bytesReencrypted)}) and ` +
      `${plural(report.recordsResealed, 'other record')} under key ${report.keyId}.`;
    ctx.print(
      report.removedKeyIds.length > 0
        ? `${done} Removed ${plural(report.removedKeyIds.length, 'old key')} (${report.removedKeyIds.join(', ')}) ` +
            'from the header and its backup.'
        : report.problems.length > 0
          ? `${done} The old keys were kept: what is listed above could not be re-encrypted.`
          : `${done} No older key was left to remove.`,
    );
  }
  return report.problems.length > 0 ? EXIT.integrity : EXIT.ok;
}
