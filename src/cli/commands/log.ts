import type { ActivityEntry } from '../../core/index.js';
import type { Context } from '../context.js';
import { EXIT } from '../errors.js';
import { formatBytes, formatDate } from '../format.js';
import { plural } from '../../shared/plural.js';

/** `coffer log <vault-dir> [--json]` */
export async function log(ctx: Context): Promise<number> {
  const [dir = ''] = ctx.args;
  const report = await ctx.withVault(dir, (vault) => vault.activityLog());
  if (ctx.flag('json')) ctx.printJson(report);
  else {
    if (report.dropped > 0)
      ctx.print(
        `(${plural(report.dropped, 'older entry', 'older entries')} dropped: the log keeps the newest.)`,
      );
    for (const entry of report.entries)
      ctx.print(`${formatDate(entry.time)}  #${entry.seq}  ${describe(entry)}`);
  }
  for (const problem of report.problems) ctx.warn(problem.message);
  // A torn last entry is what a crash during an append leaves; anything else is damage or tampering.
  if (report.problems.some((problem) => problem.kind !== 'torn-tail')) return EXIT.integrity;
  return report.problems.length > 0 ? EXIT.failure : EXIT.ok;
}

/** One entry in words: "added 3 files and 1 folder (12 KiB)". */
function describe(entry: ActivityEntry): string {
  const count = (name: string): number => entry.counts[name] ?? 0;
  const problems = count('problems') > 0 ? `, ${plural(count('problems'), 'problem')}` : '';
  const moved = (verb: string): string => `${verb} ${plural(count('entries'), 'entry', 'entries')}`;
  const transfer = (verb: string): string =>
    `${verb} ${plural(count('files'), 'file')} and ${plural(count('folders'), 'folder')} ` +
    `(${formatBytes(count('bytes'))})${problems}`;
  const slots = `(${plural(count('slots'), 'key slot')} now)`;
  const outcome = entry.outcome === 'cancelled' || entry.outcome === 'failed' ? ` (${entry.outcome})` : '';
  const text: Record<string, () => string> = {
    unlock: () =>
      count('failedAttempts') > 0
        ? `unlocked, after ${plural(count('failedAttempts'), 'failed attempt')} since the previous unlock`
        : 'unlocked',
    add: () => transfer('added'),
    restore: () => transfer('restored'),
    delete: () => moved('deleted'),
    move: () => moved('moved'),
    rename: () => moved('renamed'),
    'create-folder': () => `created ${plural(count('folders'), 'folder')}`,
    verify: () =>
      `checked ${plural(count('files'), 'file')}${entry.flags.includes('readData') ? ' (all data read)' : ''}: ` +
      (count('problems') > 0 ? plural(count('problems'), 'problem') : 'no damage') +
      (count('unreferenced') > 0 ? `, ${plural(count('unreferenced'), 'unreferenced stored file')}` : '') +
      (count('recovered') > 0 ? `, ${plural(count('recovered'), 'file')} recovered` : ''),
    rotate: () => `new data key ${count('keyId')} (was ${count('previousKeyId')})`,
    reencrypt: () =>
      `re-encrypted ${plural(count('files'), 'file')} and ${plural(count('records'), 'other record')} under key ` +
      `${count('keyId')}; ${plural(count('keysRemoved'), 'old key')} removed`,
    'passphrase-changed': () => `passphrase changed ${slots}`,
    'slot-added': () => `key slot added ${slots}`,
    'slot-removed': () => `key slot removed ${slots}`,
    'recovery-key-made': () => `new recovery key made ${slots}`,
    'header-imported': () => `vault header imported ${slots}`,
    'log-trimmed': () => `log trimmed: ${plural(count('dropped'), 'oldest entry', 'oldest entries')} dropped`,
    'log-repaired': () =>
      `log repaired after a crash: ${plural(count('tornBytes'), 'torn byte')} and ` +
      `${plural(count('discardedEntries'), 'unreadable last entry', 'unreadable last entries')} removed`,
  };
  return (text[entry.kind]?.() ?? `an event this version of Coffer does not know (${entry.kind})`) + outcome;
}
