import type { StoredFile, VaultEntry } from '../../core/index.js';
import type { Context } from '../context.js';
import { EXIT, UsageError } from '../errors.js';
import { formatBytes } from '../format.js';
import { plural } from '../../shared/plural.js';

/** `coffer verify <vault-dir> [--read-data] [--repair] [--delete-unreferenced --yes]` */
export async function verify(ctx: Context): Promise<number> {
  const [dir = ''] = ctx.args;
  const readData = ctx.flag('read-data');
  const repair = ctx.flag('repair');
  const deleteUnreferenced = ctx.flag('delete-unreferenced');
  if (deleteUnreferenced && !ctx.flag('yes')) {
    throw new UsageError(
      '--delete-unreferenced deletes stored data that no entry names, for good. Run "coffer verify" first to see ' +
        'what it would delete (and "--repair" to bring it back into the vault instead), then add --yes to confirm.',
    );
  }
  return ctx.withVault(dir, async (vault) => {
    const report = await ctx.job('Cancelled; the vault was not fully checked.', (job) =>
      vault.verify({ ...job, readData, repair, deleteUnreferenced }),
    );
    ctx.warnProblems(report.problems);
    for (const entry of report.recovered) ctx.print(`recovered ${entry.path} (${formatBytes(entry.size)})`);
    for (const file of report.deleted) ctx.print(`deleted ${file.path} (${formatBytes(file.size)})`);
    for (const file of report.unreferenced) {
      ctx.print(`unreferenced ${file.path} (${formatBytes(file.size)})${file.note ? `: ${file.note}` : ''}`);
    }
    const checked =
      `${plural(report.filesChecked, 'file')} checked` +
      (readData ? ` (${formatBytes(report.bytesChecked)} read and authenticated)` : '');
    ctx.print(
      report.ok
        ? `OK: ${checked}; no damage found.`
        : `Damage found: ${plural(report.problems.length, 'problem')}; ${checked}.`,
    );
    if (report.recovered.length > 0)
      ctx.print(`Recovered ${plural(report.recovered.length, 'file')}: ${recoveredWhere(report.recovered)}.`);
    if (report.deleted.length > 0)
      ctx.print(
        `Deleted ${plural(report.deleted.length, 'unreferenced stored file')}: ${total(report.deleted)}.`,
      );
    if (report.unreferenced.length > 0) {
      ctx.warn(
        `Kept ${plural(report.unreferenced.length, 'stored file')} (${total(report.unreferenced)}) that no entry ` +
          'names. They may belong to an index that has not arrived yet (a sync service) or to another copy of ' +
          'this vault\'s index; "coffer verify --repair" brings their contents back (to their entries, or ' +
          'under /lost+found), and ' +
          '"coffer verify --delete-unreferenced --yes" deletes them.',
      );
    }
    if (!report.ok) return EXIT.integrity;
    return report.unreferenced.length > 0 ? EXIT.failure : EXIT.ok;
  });
}

function total(files: readonly StoredFile[]): string {
  return formatBytes(files.reduce((sum, file) => sum + file.size, 0));
}

/** "3 into /lost+found", "2 to their own entries and 1 into /lost+found". */
function recoveredWhere(entries: readonly VaultEntry[]): string {
  const lost = entries.filter((entry) => entry.path.startsWith('/lost+found/')).length;
  const own = entries.length - lost;
  const parts = [
    ...(own > 0 ? [`${String(own)} to ${own === 1 ? 'its own entry' : 'their own entries'}`] : []),
    ...(lost > 0 ? [`${String(lost)} into /lost+found`] : []),
  ];
  return parts.join(' and ');
}
