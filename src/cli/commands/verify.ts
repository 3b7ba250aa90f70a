import type { Context } from '../context.js';
import { EXIT } from '../errors.js';
import { formatBytes } from '../format.js';
import { plural } from './add.js';

/** `coffer verify <vault-dir> [--read-data]` */
export async function verify(ctx: Context): Promise<number> {
  const [dir = ''] = ctx.args;
  const readData = ctx.flag('read-data');
  return ctx.withVault(dir, async (vault) => {
    const report = await ctx.job('Cancelled; the vault was not fully checked.', (job) =>
      vault.verify({ ...job, readData }),
    );
    ctx.warnProblems(report.problems);
    const checked =
      `${plural(report.filesChecked, 'file')} checked` +
      (readData ? ` (${formatBytes(report.bytesChecked)} read and authenticated)` : '');
    const orphans =
      report.orphansRemoved > 0
        ? ` Removed ${plural(report.orphansRemoved, 'leftover stored file')} no entry referred to.`
        : '';
    ctx.print(
      report.ok
        ? `OK: ${checked}; no damage found.${orphans}`
        : `Damage found: ${plural(report.problems.length, 'problem')}; ${checked}.${orphans}`,
    );
    return report.ok ? EXIT.ok : EXIT.integrity;
  });
}
