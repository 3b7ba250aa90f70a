/**
 * A `--require` hook for the power-cut test (tests/crash/power-cut.test.ts), loaded into the CLI and into every
 * worker thread it starts (NODE_OPTIONS reaches workers). It records what a power cut could keep of one vault
 * folder, so that the test can rebuild the folder as it would be after a cut at any moment of the run.
 *
 * Only what was made durable survives a cut: a file's bytes as they were when it was last fsynced, a folder's
 * names as they were when the folder was last fsynced. The hook wraps every way the engine fsyncs (fsyncSync,
 * fdatasyncSync, their callback forms and FileHandle's sync/datasync) and, before passing the call on, copies what
 * the call is about to make durable: a file's bytes, or a folder's names with their inode numbers. Copying before
 * the call never claims more than the call makes durable (a name added after the copy is not in it). Commits the
 * engine announces (src/core/test-hooks.ts, COFFER_TEST_WRITE_HOOK=1), renames and unlinks are recorded too, as
 * moments at which a cut may come. Every record also holds the folder's names as they are at that moment (what a
 * file system that wrote its metadata early would keep), and copies of the index and its journal: SQLite makes
 * those durable itself (synchronous=FULL: the journal is fsynced before the index changes), and all its writes
 * happen on the main thread between two records, so a copy is what SQLite would find after a cut there (opening
 * it plays a hot journal back).
 *
 * The folder recorded is COFFER_POWER_CUT_ROOT (the vault's, or one holding the vault and a restore's destination),
 * the index COFFER_POWER_CUT_INDEX. Records go to `events.jsonl` in COFFER_POWER_CUT_LOG, one line each by a single append (so lines from several
 * threads never mix, and their order is the order of the calls), and copies beside it.
 */
import {
  appendFileSync,
  copyFileSync,
  fstatSync,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { join, relative, sep } from 'node:path';
import { threadId } from 'node:worker_threads';

/** One line of `events.jsonl`; `names` is the whole vault folder at that moment, as [path, inode, is folder]. */
export interface PowerCutEvent {
  /** A file's or folder's fsync, a commit of the index, a commit about to happen, a rename or an unlink. */
  readonly kind: 'file' | 'folder' | 'commit' | 'pending' | 'rename' | 'unlink';
  readonly names: readonly (readonly [string, number, boolean])[];
  /** `file`: the file's inode, and where its bytes were copied to. */
  readonly inode?: number;
  readonly copy?: string;
  /** Copies of the index and of its journal (if there is one) at that moment. */
  readonly index?: string;
  readonly journal?: string;
  /** `folder`: its path in the vault folder and the names it held, as [name, inode, is folder]. */
  readonly folder?: string;
  readonly entries?: readonly (readonly [string, number, boolean])[];
}

/** The module object itself (a namespace import would be a copy once compiled to CommonJS): patched below. */
const fs = process.getBuiltinModule('node:fs');
const root = process.env.COFFER_POWER_CUT_ROOT ?? '';
/** The vault's index, in `root`. */
const indexPath = process.env.COFFER_POWER_CUT_INDEX ?? '';
const logDir = process.env.COFFER_POWER_CUT_LOG ?? '';
const log = join(logDir, 'events.jsonl');
let copies = 0;

function inVault(path: string): boolean {
  return path === root || path.startsWith(root + sep);
}

function copyName(): string {
  copies++;
  return join(logDir, `copy-${process.pid}-${threadId}-${copies}`);
}

function namesNow(): [string, number, boolean][] {
  return readdirSync(root, { recursive: true, withFileTypes: true }).map((entry) => {
    const path = join(entry.parentPath, entry.name);
    return [relative(root, path), lstatSync(path).ino, entry.isDirectory()];
  });
}

/** Copies the index and its journal as they are now, if they are there. */
function indexNow(): Pick<PowerCutEvent, 'index' | 'journal'> {
  const copied: { index?: string; journal?: string } = {};
  for (const [key, path] of [
    ['index', indexPath],
    ['journal', `${indexPath}-journal`],
  ] as const) {
    const copy = copyName();
    try {
      copyFileSync(path, copy);
      copied[key] = copy;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return copied;
}

function record(event: Omit<PowerCutEvent, 'names' | 'index' | 'journal'>): void {
  appendFileSync(log, JSON.stringify({ ...event, names: namesNow(), ...indexNow() }) + '\n');
}

/** Copies what an fsync of `fd` is about to make durable, if `fd` is in the vault folder. */
function beforeSync(fd: number): void {
  const path = readlinkSync(`/proc/self/fd/${fd}`);
  if (!inVault(path)) return;
  const stat = fstatSync(fd);
  if (stat.isDirectory()) {
    const entries = readdirSync(path, { withFileTypes: true }).map(
      (entry) => [entry.name, lstatSync(join(path, entry.name)).ino, entry.isDirectory()] as const,
    );
    record({ kind: 'folder', folder: relative(root, path), entries });
    return;
  }
  const copy = copyName();
  // Through /proc, which opens the file anew: `fd` may have been opened for writing only.
  writeFileSync(copy, readFileSync(`/proc/self/fd/${fd}`));
  record({ kind: 'file', inode: stat.ino, copy });
}

function wrapSync<A extends unknown[], R>(original: (fd: number, ...rest: A) => R) {
  return (fd: number, ...rest: A): R => {
    beforeSync(fd);
    return original(fd, ...rest);
  };
}

function afterNameChange(kind: 'rename' | 'unlink', paths: readonly unknown[]): void {
  if (paths.some((path) => typeof path === 'string' && inVault(path))) record({ kind });
}

if (root !== '' && indexPath !== '' && logDir !== '') {
  const writable = fs as unknown as Record<string, unknown>;
  writable.fsyncSync = wrapSync(fs.fsyncSync);
  writable.fdatasyncSync = wrapSync(fs.fdatasyncSync);
  writable.fsync = wrapSync(fs.fsync);
  writable.fdatasync = wrapSync(fs.fdatasync);
  for (const name of ['renameSync', 'unlinkSync', 'rmSync'] as const) {
    const original = fs[name] as (...args: unknown[]) => void;
    writable[name] = (...args: unknown[]): void => {
      original(...args);
      afterNameChange(name === 'renameSync' ? 'rename' : 'unlink', args);
    };
  }
  const promises = fs.promises as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of ['rename', 'unlink', 'rm'] as const) {
    const original = promises[name]?.bind(fs.promises);
    if (original === undefined) continue;
    promises[name] = async (...args: unknown[]): Promise<unknown> => {
      const result = await original(...args);
      afterNameChange(name === 'rename' ? 'rename' : 'unlink', args);
      return result;
    };
  }
  // FileHandle's class is not exported: patch its prototype through the first handle opened.
  const open = fs.promises.open.bind(fs.promises);
  let handlesPatched = false;
  promises.open = async (...args: unknown[]): Promise<unknown> => {
    const handle = await open(...(args as Parameters<typeof open>));
    if (!handlesPatched) {
      handlesPatched = true;
      const prototype = Object.getPrototypeOf(handle) as Record<string, (this: FileHandle) => unknown>;
      for (const name of ['sync', 'datasync'] as const) {
        const original = prototype[name];
        if (original === undefined) continue;
        prototype[name] = function (this: FileHandle): unknown {
          beforeSync(this.fd);
          return original.call(this);
        };
      }
    }
    return handle;
  };
  // The engine's commit announcements (src/core/test-hooks.ts) go to stderr through writeSync.
  const writeSync = fs.writeSync as (...args: unknown[]) => number;
  writable.writeSync = (...args: unknown[]): number => {
    const [fd, text] = args;
    if (fd === 2 && typeof text === 'string' && text.startsWith('coffer-test-write: ')) {
      record({ kind: text.includes('committed') ? 'commit' : 'pending' });
      return Buffer.byteLength(text);
    }
    return writeSync(...args);
  };
  syncBuiltinESMExports();
}
