/**
 * A `--require` hook for the power-cut test (tests/crash/power-cut.test.ts), loaded into the CLI and into every
 * worker thread it starts (NODE_OPTIONS reaches workers). It records what a power cut could keep of one vault
 * folder, so that the test can rebuild the folder as it would be after a cut at any moment of the run.
 *
 * Only what was made durable survives a cut: a file's bytes as they were when it was last fsynced, a folder's
 * names as they were when the folder was last fsynced. The hook wraps every way the engine fsyncs (fsyncSync,
 * fdatasyncSync, their callback forms and FileHandle's sync/datasync): before passing the call on, it copies what
 * the call is about to make durable (a file's bytes, or a folder's names with their inode numbers), and records
 * the copy once the call has returned. Copying before the call never claims more than the call makes durable (a
 * name added after the copy is not in it); recording after it never claims it before it was made. Commits the
 * engine announces (src/core/test-hooks.ts, COFFER_TEST_WRITE_HOOK=1), renames and unlinks are recorded too, as
 * moments at which a cut may come. Every record also holds the folder's names as they are at that moment (what a
 * file system that wrote its metadata early would keep), and copies of the index and its journal: SQLite makes
 * those durable itself (synchronous=FULL: the journal is fsynced before the index changes), and all its writes
 * happen on the main thread between two of its records, so a copy is what SQLite would find after a cut there
 * (opening it plays a hot journal back; a worker thread takes its copy again if SQLite wrote meanwhile).
 * What the CLI writes to its standard output is recorded too, once written (what it reports done), and the last
 * record is made as the process exits.
 *
 * The folder recorded is COFFER_POWER_CUT_ROOT (the vault's, or one holding the vault and a restore's destination),
 * the index COFFER_POWER_CUT_INDEX. Records go to `events.jsonl` in COFFER_POWER_CUT_LOG, one line each by a single append (so lines from several
 * threads never mix, and their order is the order of the calls), and copies beside it.
 */
import {
  appendFileSync,
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
import { isMainThread, threadId } from 'node:worker_threads';

/** One line of `events.jsonl`; `names` is the whole vault folder at that moment, as [path, inode, is folder]. */
export interface PowerCutEvent {
  /** A file's or folder's fsync, a commit of the index, a commit about to happen, a rename or an unlink. */
  readonly kind: 'file' | 'folder' | 'commit' | 'pending' | 'rename' | 'unlink' | 'said' | 'exit';
  readonly names: readonly (readonly [string, number, boolean])[];
  /** The thread that made the call: 0 for the main thread. */
  readonly thread: number;
  /** `file`: the file's inode, where its bytes were copied to, and how many there are. */
  readonly inode?: number;
  readonly copy?: string;
  readonly size?: number;
  /** Copies of the index and of its journal (if there is one) at that moment. */
  readonly index?: string;
  readonly journal?: string;
  /** `said`: what the CLI wrote to its standard output (what it reported done, with --verbose). */
  readonly text?: string;
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
/**
 * How much longer an fsync done in the background (callback, FileHandle) takes to finish, as on a real disk: a
 * folder's a little, a file's more the more bytes it holds. A caller that goes on without waiting for it (a
 * missing `await`) then renames or commits before it is durable, which the rebuilt cuts show; on tmpfs it would
 * finish first almost always.
 */
function slowSyncMs(moment: Moment | undefined): number {
  return moment?.kind === 'file' && moment.size !== undefined ? 5 + moment.size / 50_000 : 5;
}

function inVault(path: string): boolean {
  return path === root || path.startsWith(root + sep);
}

function copyName(): string {
  copies++;
  return join(logDir, `copy-${process.pid}-${threadId}-${copies}`);
}

/** An entry's inode, or null when it went meanwhile (another thread renamed or removed it: gone at this moment). */
function inodeOf(path: string): number | null {
  try {
    return lstatSync(path).ino;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** The names in `folder` with their inodes (those still there), as [path below `from`, inode, is folder]. */
function listed(folder: string, from: string, recursive: boolean): [string, number, boolean][] {
  for (;;) {
    let entries;
    try {
      entries = readdirSync(folder, { recursive, withFileTypes: true });
    } catch (error) {
      // A folder below went while the listing walked it: list again.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && folder !== root) return [];
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    return entries.flatMap((entry) => {
      const path = join(entry.parentPath, entry.name);
      const inode = inodeOf(path);
      return inode === null
        ? []
        : [[relative(from, path), inode, entry.isDirectory()] as [string, number, boolean]];
    });
  }
}

function namesNow(): [string, number, boolean][] {
  return listed(root, root, true);
}

/** A file's bytes, or null when it is not there. */
function bytesOf(path: string): Buffer | null {
  try {
    return readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** The latest copy of each SQLite file, to stand for the next record while its bytes are the same. */
const lastCopies = new Map<string, { bytes: Buffer; copy: string }>();

/** A copy of `bytes` of the file at `path`: the latest one when they are the same (the index is large). */
function copyOf(path: string, bytes: Buffer): string {
  const last = lastCopies.get(path);
  if (last?.bytes.equals(bytes)) return last.copy;
  const copy = copyName();
  writeFileSync(copy, bytes);
  lastCopies.set(path, { bytes, copy });
  return copy;
}

/**
 * Copies the index and its journal as they are now, if they are there. SQLite writes them on the main thread,
 * between two records there; a worker thread's reading may meet one of its writes, so it reads them again until
 * two readings in a row are the same (a size and a modification time could be: tmpfs times may move by ticks).
 */
function indexNow(): Pick<PowerCutEvent, 'index' | 'journal'> {
  const paths = [indexPath, `${indexPath}-journal`] as const;
  let read = paths.map((path) => bytesOf(path));
  if (!isMainThread) {
    for (;;) {
      const again = paths.map((path) => bytesOf(path));
      const same = again.every((bytes, i) => {
        const before = read[i];
        return bytes === null || before === null || before === undefined
          ? bytes === before
          : bytes.equals(before);
      });
      read = again;
      if (same) break;
    }
  }
  const [index, journal] = read;
  return {
    ...(index ? { index: copyOf(paths[0], index) } : {}),
    ...(journal ? { journal: copyOf(paths[1], journal) } : {}),
  };
}

type Moment = Omit<PowerCutEvent, 'names' | 'thread' | 'index' | 'journal'>;

function record(event: Moment): void {
  appendFileSync(
    log,
    JSON.stringify({ ...event, names: namesNow(), thread: threadId, ...indexNow() }) + '\n',
  );
}

/**
 * Copies what an fsync of `fd` is about to make durable, if `fd` is in the vault folder, and answers the record
 * to write once the fsync has returned (what it makes durable is durable only then).
 */
function beforeSync(fd: number): Moment | undefined {
  const path = readlinkSync(`/proc/self/fd/${fd}`);
  if (!inVault(path)) return undefined;
  const stat = fstatSync(fd);
  if (stat.isDirectory()) {
    return { kind: 'folder', folder: relative(root, path), entries: listed(path, path, false) };
  }
  const copy = copyName();
  // Through /proc, which opens the file anew: `fd` may have been opened for writing only.
  writeFileSync(copy, readFileSync(`/proc/self/fd/${fd}`));
  return { kind: 'file', inode: stat.ino, copy, size: stat.size };
}

function afterSync(moment: Moment | undefined): void {
  if (moment !== undefined) record(moment);
}

function wrapSync<A extends unknown[], R>(original: (fd: number, ...rest: A) => R) {
  return (fd: number, ...rest: A): R => {
    const moment = beforeSync(fd);
    const result = original(fd, ...rest);
    afterSync(moment);
    return result;
  };
}

function wrapCallback(original: (fd: number, callback: (error: Error | null) => void) => void) {
  return (fd: number, callback: (error: Error | null) => void): void => {
    const moment = beforeSync(fd);
    original(fd, (error) => {
      setTimeout(() => {
        if (error === null) afterSync(moment);
        callback(error);
      }, slowSyncMs(moment));
    });
  };
}

function afterNameChange(kind: 'rename' | 'unlink', paths: readonly unknown[]): void {
  if (paths.some((path) => typeof path === 'string' && inVault(path))) record({ kind });
}

if (root !== '' && indexPath !== '' && logDir !== '') {
  const writable = fs as unknown as Record<string, unknown>;
  writable.fsyncSync = wrapSync(fs.fsyncSync);
  writable.fdatasyncSync = wrapSync(fs.fdatasyncSync);
  writable.fsync = wrapCallback(fs.fsync);
  writable.fdatasync = wrapCallback(fs.fdatasync);
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
        prototype[name] = async function (this: FileHandle): Promise<unknown> {
          const moment = beforeSync(this.fd);
          const result: unknown = await original.call(this);
          await new Promise((resolve) => setTimeout(resolve, slowSyncMs(moment)));
          afterSync(moment);
          return result;
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
  // What the process does after its last fsync or announced commit (a commit that forgets intents, say) is what a
  // cut after it keeps: the last moment.
  if (isMainThread) {
    process.on('exit', () => {
      record({ kind: 'exit' });
    });
    // What the CLI reports done ("restored /a.txt") must survive a cut from the moment it says so.
    const write = process.stdout.write.bind(process.stdout) as (...args: unknown[]) => boolean;
    process.stdout.write = (...args: unknown[]): boolean => {
      const written = write(...args);
      const [chunk] = args;
      record({
        kind: 'said',
        text: typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString(),
      });
      return written;
    };
  }
}
