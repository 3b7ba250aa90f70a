import { lstatSync } from 'node:fs';

import { SMALL_FILE_LIMIT, startWorkers, type OnExisting } from '../../core/index.js';
import type { Context } from '../context.js';
import { toVaultPath } from '../context.js';
import { EXIT } from '../errors.js';
import { plural } from '../../shared/plural.js';
import { formatBytes } from '../format.js';

/** `coffer add <vault-dir> <path>... [--to <vault-folder>] [--on-existing <choice>]` */
export async function add(ctx: Context): Promise<number> {
  const [dir = '', ...sources] = ctx.args;
  const destination = toVaultPath(ctx.string('to') ?? '/');
  // args.ts accepts only ON_EXISTING_CHOICES.
  const onExisting = (ctx.string('on-existing') ?? 'fail') as OnExisting;
  // Worker threads start while the key is derived (measured: a tenth of a second off adding a large file); not for
  // a few small files, which do not use them.
  if (sources.some(isBulk)) startWorkers();

  return ctx.withVault(dir, async (vault) => {
    // mkdir is a no-op for an existing folder and creates missing parents; it refuses when a file is in the way.
    if (destination !== '/') vault.mkdir(destination);
    const report = await ctx.job(
      'Cancelled. What was reported added is in the vault; the file in progress was not added.',
      (job) =>
        vault.add(sources, destination, {
          ...job,
          onExisting,
          // The engine calls this only once the item is committed: a crash after this line cannot lose it.
          onAdded: ctx.flags.verbose
            ? (entry) => {
                ctx.print(`added ${entry.path}`);
              }
            : undefined,
        }),
    );
    ctx.warnProblems(report.problems);
    ctx.print(
      `Done: ${plural(report.filesAdded, 'file')} and ${plural(report.foldersAdded, 'folder')} added ` +
        `(${formatBytes(report.bytesAdded)})` +
        (report.replaced > 0 ? `, ${plural(report.replaced, 'file')} replaced` : '') +
        (report.skipped > 0 ? `, ${plural(report.skipped, 'existing name')} skipped as asked` : '') +
        (report.problems.length > 0 ? `, ${plural(report.problems.length, 'item')} skipped.` : '.') +
        ctx.damageNote(),
    );
    return report.problems.length > 0 ? EXIT.failure : EXIT.ok;
  });
}

/** A folder, or a file too large to go into a pack (it gets a blob file of its own). */
function isBulk(path: string): boolean {
  try {
    const stats = lstatSync(path);
    return stats.isDirectory() || stats.size > SMALL_FILE_LIMIT;
  } catch {
    return false; // the add reports it
  }
}
