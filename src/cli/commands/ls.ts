import type { VaultEntry } from '../../core/index.js';
import type { Context } from '../context.js';
import { toVaultPath } from '../context.js';
import { EXIT } from '../errors.js';
import { formatBytes, formatDate } from '../format.js';

/** One entry of `ls --json`: a stable shape for scripts, independent of the engine's own type. */
export interface ListedEntry {
  readonly path: string;
  readonly type: 'file' | 'folder';
  readonly size: number;
  /** Milliseconds since the epoch, whole. */
  readonly mtime: number;
}

/** `coffer ls <vault-dir> [<vault-folder>] [--recursive] [--json]` */
export async function ls(ctx: Context): Promise<number> {
  const [dir = '', folderArg = '/'] = ctx.args;
  const folder = toVaultPath(folderArg);
  const recursive = ctx.flag('recursive');
  const entries = await ctx.withVault(dir, (vault) => {
    const target = vault.stat(folder);
    // Like ls(1): naming a file lists that file.
    if (target.type === 'file') return [target];
    return recursive ? vault.listRecursive(folder) : vault.list(folder);
  });
  if (ctx.flag('json')) {
    const listed: ListedEntry[] = entries.map((entry) => ({
      path: entry.path,
      type: entry.type,
      size: entry.size,
      // Source mtimes carry sub-millisecond fractions; restore truncates them the same way.
      mtime: Math.trunc(entry.mtime),
    }));
    ctx.printJson(listed);
    return EXIT.ok;
  }
  for (const line of table(entries, folder, recursive)) ctx.print(line);
  return EXIT.ok;
}

/** "d  -  2024-05-01 13:45  Photos/" rows, sizes right-aligned; recursive listings show paths below `folder`. */
function table(entries: readonly VaultEntry[], folder: string, recursive: boolean): string[] {
  const prefix = folder.endsWith('/') ? folder : `${folder}/`;
  const rows = entries.map((entry) => {
    const shown = recursive && entry.path.startsWith(prefix) ? entry.path.slice(prefix.length) : entry.name;
    return {
      marker: entry.type === 'folder' ? 'd' : '-',
      size: entry.type === 'folder' ? '-' : formatBytes(entry.size),
      date: formatDate(entry.mtime),
      name: shown + (entry.type === 'folder' ? '/' : ''),
    };
  });
  const width = Math.max(0, ...rows.map((row) => row.size.length));
  return rows.map((row) => `${row.marker}  ${row.size.padStart(width)}  ${row.date}  ${row.name}`);
}
