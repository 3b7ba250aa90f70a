/**
 * Runs the CLI with the power-cut hook (power-cut-hook.ts) and rebuilds a vault folder as a power cut at any of
 * the recorded moments could leave it.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

import { transformSync } from 'esbuild';

import { BIN } from '../cli/helpers.js';
import type { PowerCutEvent } from './power-cut-hook.js';
import { PASSPHRASE } from './vault.js';

type Name = readonly [path: string, inode: number, folder: boolean];

/** The vault folder before the run, taken as durable: a copy of every file, and each folder's names. */
export interface Before {
  readonly names: readonly Name[];
  /** Inode of each file then → its copy. */
  readonly bytes: ReadonlyMap<number, string>;
  readonly folders: ReadonlyMap<string, readonly Name[]>;
}

/** What survives a cut: the names as last fsynced, or the names as they were at the cut (metadata written early). */
export type KeptNames = 'synced names' | 'names at the cut';

function namesIn(dir: string): Name[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).map((entry) => {
    const path = join(entry.parentPath, entry.name);
    return [relative(dir, path), lstatSync(path).ino, entry.isDirectory()] as const;
  });
}

/**
 * Copies `vaultDir` into `into` and notes its inodes, before a run. Everything in it is taken as durable but the
 * paths `unsynced` gives (files and folders, relative to `vaultDir`): files and folders left there, never fsynced
 * (a file whose bytes a cut empties, a name a cut may drop, a folder whose names a cut may drop).
 */
export function before(vaultDir: string, into: string, unsynced: ReadonlySet<string> = new Set()): Before {
  cpSync(vaultDir, into, { recursive: true });
  const names = namesIn(vaultDir);
  const bytes = new Map(
    names
      .filter(([path, , folder]) => !folder && !unsynced.has(path))
      .map(([path, inode]) => [inode, join(into, path)]),
  );
  const folders = new Map<string, Name[]>([['', []]]);
  for (const [path, inode, folder] of names) {
    if (unsynced.has(path)) continue;
    if (folder) folders.set(path, []);
    const parent = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
    folders.get(parent)?.push([path.slice(parent === '' ? 0 : parent.length + 1), inode, folder]);
  }
  return { names, bytes, folders };
}

/** The hook as CommonJS, for `--require` (Node 20 runs no TypeScript), written into `dir`. */
export function compiledHook(dir: string): string {
  const path = join(dir, 'power-cut-hook.cjs');
  const source = readFileSync(join(import.meta.dirname, 'power-cut-hook.ts'), 'utf8');
  writeFileSync(path, transformSync(source, { loader: 'ts', format: 'cjs', platform: 'node' }).code);
  return path;
}

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** The index's path in a vault folder. */
export const INDEX = 'index.sqlite';

/**
 * Runs the CLI to the end with the hook recording the folder `disk`, which holds the vault folder `vaultDir`, into
 * `logDir`; answers its stdout and the events.
 * @throws when the CLI fails.
 */
export async function recordRun(
  args: readonly string[],
  hook: string,
  { disk, vaultDir }: { disk: string; vaultDir: string },
  logDir: string,
  env: Readonly<Record<string, string>> = {},
): Promise<{ stdout: string; events: PowerCutEvent[] }> {
  mkdirSync(logDir, { recursive: true });
  writeFileSync(join(logDir, 'events.jsonl'), '');
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: {
        ...process.env,
        COFFER_PASSPHRASE: PASSPHRASE,
        ...env,
        NODE_OPTIONS: `--require ${hook}`,
        COFFER_TEST_WRITE_HOOK: '1',
        COFFER_TEST_WRITE_PAUSE_MS: '0',
        COFFER_POWER_CUT_ROOT: realpathSync(disk),
        // The vault folder may be one the run makes.
        COFFER_POWER_CUT_INDEX: join(realpathSync(disk), relative(disk, vaultDir), INDEX),
        COFFER_POWER_CUT_LOG: logDir,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`coffer ${args.join(' ')} exited ${code}: ${err}`));
    });
  });
  const events = readFileSync(join(logDir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as PowerCutEvent);
  return { stdout, events };
}

/**
 * Writes into `into` the recorded folder as a cut right after the first `count` events leaves it: each file holds
 * the bytes it was last fsynced with (or had before the run; a file never fsynced is empty), the index (at
 * `vault`/index.sqlite) and its journal as they were then (SQLite's to make durable), and the names `kept`
 * (the index's among them; SQLite makes its journal's name durable itself).
 * Answers what the vault folder was rebuilt from, equal for two cuts that left it alike.
 */
export function afterCut(
  start: Before,
  events: readonly PowerCutEvent[],
  { count, kept, vault }: { count: number; kept: KeptNames; vault: string },
  into: string,
): string {
  const bytes = new Map(start.bytes);
  const folders = new Map(start.folders);
  for (const event of events.slice(0, count)) {
    if (event.kind === 'file' && event.inode !== undefined && event.copy !== undefined)
      bytes.set(event.inode, event.copy);
    else if (event.kind === 'folder' && event.folder !== undefined && event.entries !== undefined)
      folders.set(event.folder, event.entries);
  }
  const last = events[count - 1];
  const startCopy = (name: string): string | undefined =>
    start.bytes.get(start.names.find(([path]) => path === name)?.[1] ?? -1);
  const index = join(vault, INDEX);
  const journal = `${index}-journal`;
  const sqlite = new Map([
    [index, last === undefined ? startCopy(index) : last.index],
    [journal, last === undefined ? startCopy(journal) : last.journal],
  ]);
  const names: Name[] = [];
  const walk = (folder: string): void => {
    for (const [name, inode, isFolder] of folders.get(folder) ?? []) {
      const path = folder === '' ? name : `${folder}/${name}`;
      names.push([path, inode, isFolder]);
      if (isFolder) walk(path);
    }
  };
  if (kept === 'synced names') walk('');
  else names.push(...(last?.names ?? start.names));
  mkdirSync(into, { recursive: true });
  const state: string[] = [];
  for (const [path, inode, isFolder] of names) {
    const target = join(into, path);
    if (isFolder) mkdirSync(target, { recursive: true });
    else if (path !== journal) {
      mkdirSync(dirname(target), { recursive: true });
      const source = sqlite.has(path) ? sqlite.get(path) : bytes.get(inode);
      if (source === undefined) writeFileSync(target, '');
      else copyFileSync(source, target);
      state.push(`${path} ${source === undefined ? '' : sha256(source)}`);
    }
  }
  // SQLite fsyncs the folder when it makes its journal: the journal is there as the index left it.
  const journalCopy = sqlite.get(journal);
  if (journalCopy !== undefined && existsSync(join(into, vault))) {
    copyFileSync(journalCopy, join(into, journal));
    state.push(`${journal} ${sha256(journalCopy)}`);
  }
  return state
    .filter((line) => line.startsWith(vault + sep))
    .sort()
    .join('\n');
}
