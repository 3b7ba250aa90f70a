import { startWorkers } from '../../core/index.js';
import type { Context } from '../context.js';
import { toVaultPath } from '../context.js';
import { EXIT, UsageError } from '../errors.js';
import { formatBytes } from '../format.js';
import { plural } from '../../shared/plural.js';

/** `coffer restore <vault-dir> <vault-path>... --to <dest-dir> [--overwrite]` */
export async function restore(ctx: Context): Promise<number> {
  const [dir = '', ...paths] = ctx.args;
  const destination = ctx.string('to');
  if (destination === undefined) {
    throw new UsageError(
      'restore needs --to <dest-dir>: the folder to restore into. See "coffer restore --help".',
    );
  }
  // The worker threads start while the key is derived (measured: a tenth of a second off a whole restore).
  startWorkers();
  return ctx.withVault(dir, async (vault) => {
    const report = await ctx.job(
      'Cancelled. Files reported restored are complete, and no partial file was left behind.',
      (job) =>
        vault.restore(paths.map(toVaultPath), destination, {
          ...job,
          overwrite: ctx.flag('overwrite'),
          onRestored: ctx.flags.verbose
            ? (entry) => {
                ctx.print(`restored ${entry.path}`);
              }
            : undefined,
        }),
    );
    ctx.warnProblems(report.problems);
    ctx.print(
      `Done: ${plural(report.filesRestored, 'file')} restored (${formatBytes(report.bytesRestored)})` +
        (report.problems.length > 0 ? `, ${plural(report.problems.length, 'problem')}.` : '.') +
        // The engine's words for a file left alone are the window's too, which has no flag to name.
        (report.problems.some((problem) => problem.code === 'ALREADY_EXISTS')
          ? ' To replace the existing files, restore again with --overwrite.'
          : '') +
        ctx.damageNote(),
    );
    if (report.problems.some((problem) => problem.code === 'INTEGRITY')) return EXIT.integrity;
    return report.problems.length > 0 ? EXIT.failure : EXIT.ok;
  });
}
