import { BusyError, CancelledError, VaultLockedError } from '../errors.js';
import type { JobOptions } from '../types.js';

/**
 * How an operation uses an unlocked vault, which decides what may run beside it:
 * - `read` (restore, read streams) reads stored blobs and packs: any number at once, also beside a change. The
 *   removal of files an add's replacements left no row naming runs as one too: it touches nothing a read or an add
 *   can find, but must not pull files from under a verify;
 * - `change` (add) writes rows and new packs but never removes one: one at a time, beside reads (and beside changes
 *   made at once, which have it commit first: see `Session.commitPendingRows`);
 * - `rewrite` (delete, verify, the compaction after an add that replaced files) removes and compacts packs and
 *   rebuilds the tree: alone.
 */
export type Access = 'read' | 'change' | 'rewrite';

interface Entry {
  readonly access: Access;
  /** What the operation is doing, for {@link BusyError}'s message ("adding files"). */
  readonly doing: string;
  /** What to do about it, in that message, when not the default (wait, or cancel it). */
  readonly busyNext: string | undefined;
  /** Aborts when the caller's signal does, or when everything is stopped (lock, close). */
  readonly controller: AbortController;
  readonly done: Promise<void>;
  readonly finish: () => void;
}

interface Waiter {
  readonly entry: Entry;
  readonly admit: () => void;
}

/** How a caller takes part in its operation's admission. */
export interface Caller extends Pick<JobOptions, 'signal' | 'onWaiting'> {
  /** What a change refused while it runs is told to do, for an operation that cannot be cancelled. */
  readonly busyNext?: string;
}

function newEntry(access: Access, doing: string, caller: Caller | undefined): Entry {
  const signal = caller?.signal;
  const controller = new AbortController();
  let finish = (): void => undefined;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  if (signal) {
    const forward = (): void => {
      controller.abort();
    };
    signal.addEventListener('abort', forward, { once: true });
    void done.then(() => {
      signal.removeEventListener('abort', forward);
    });
    if (signal.aborted) controller.abort();
  }
  return { access, doing, busyNext: caller?.busyNext, controller, done, finish };
}

/**
 * Tells a caller whether its operation waits. A listener that throws must not leave the admission half-done (an
 * entry running that no one will ever end): what it throws is dropped.
 */
function tell(onWaiting: ((waiting: boolean) => void) | undefined, waiting: boolean): void {
  try {
    onWaiting?.(waiting);
  } catch {
    // The listener's own failure; the operation's turn is what matters here.
  }
}

/**
 * What a stopped operation ends with: locking wipes the keys under the operations it stops, so whichever step
 * noticed first (a wiped key, or the signal) the operation was cancelled.
 */
function stoppedError(entry: Entry, error: unknown): unknown {
  return entry.controller.signal.aborted && error instanceof VaultLockedError ? new CancelledError() : error;
}

/**
 * Admits a vault's operations so that none changes what another is using: reads run together, a change beside
 * reads, a rewrite alone; an operation that may not run yet waits its turn, in call order (nothing overtakes a
 * waiting rewrite, which would otherwise starve behind a stream of reads). Locking stops them all.
 */
export class VaultActivity {
  readonly #running = new Set<Entry>();
  readonly #waiting: Waiter[] = [];

  /**
   * Runs `work` once its access allows, with a signal that aborts when the caller's `signal` does or
   * {@link stopAll} is called. The caller's `onWaiting` hears `true` if it must wait for its turn, and `false`
   * when the turn came after such a wait.
   * @throws {@link CancelledError} when stopped or cancelled before its turn came.
   */
  async run<T>(
    access: Access,
    doing: string,
    caller: Caller | undefined,
    work: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const entry = await this.#enter(access, doing, caller);
    try {
      return await work(entry.controller.signal);
    } catch (error) {
      throw stoppedError(entry, error);
    } finally {
      this.#leave(entry);
    }
  }

  /** Like {@link run} for a lazily consumed sequence: its turn is taken when the first item is asked for. */
  async *iterate<T>(
    access: Access,
    doing: string,
    make: (signal: AbortSignal) => AsyncIterable<T>,
  ): AsyncGenerator<T> {
    const entry = await this.#enter(access, doing, undefined);
    try {
      yield* make(entry.controller.signal);
    } catch (error) {
      throw stoppedError(entry, error);
    } finally {
      this.#leave(entry);
    }
  }

  /**
   * Like {@link run}, but only when its turn is now: nothing waits, and nothing running forbids it.
   * @returns undefined, without running `work`, when it would have to wait.
   */
  runIfFree<T>(
    access: Access,
    doing: string,
    caller: Caller | undefined,
    work: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> | undefined {
    if (this.#waiting.length > 0 || !this.#allowed(access)) return undefined;
    return this.run(access, doing, caller, work);
  }

  /** Settles once every read running now has ended; undefined when none runs. */
  readsRunning(): Promise<void> | undefined {
    const reads = [...this.#running].filter((entry) => entry.access === 'read');
    return reads.length === 0
      ? undefined
      : Promise.all(reads.map((entry) => entry.done)).then(() => undefined);
  }

  /**
   * For a key rotation or re-encryption: refused while an operation that changes the tree runs, rather than queued
   * behind it.
   * @throws {@link BusyError} while an add, delete, verify or compaction runs.
   */
  requireNoChangeRunning(): void {
    for (const entry of this.#running) {
      if (entry.access !== 'read') throw new BusyError(entry.doing, entry.busyNext);
    }
  }

  /**
   * For changes made at once (create a folder, rename, move): refused while an operation that rewrites the tree
   * runs, rather than slipped in under it. Beside an add they may run (the caller has the add commit first).
   * @throws {@link BusyError} while a delete, verify or compaction runs.
   */
  requireNoRewriteRunning(): void {
    for (const entry of this.#running) {
      if (entry.access === 'rewrite') throw new BusyError(entry.doing, entry.busyNext);
    }
  }

  /** Whether every running operation only reads (then the tree stays as it is while they run). */
  get onlyReading(): boolean {
    return [...this.#running].every((entry) => entry.access === 'read');
  }

  /** Whether an operation runs or waits. */
  get busy(): boolean {
    return this.#running.size > 0 || this.#waiting.length > 0;
  }

  /**
   * Stops every running and waiting operation (each ends as cancelled, at its next batch boundary, or at once
   * when it waits for its reader or its turn).
   * @returns a promise that resolves once all of them have ended; at once when none runs.
   */
  stopAll(): Promise<void> {
    const ending = [...this.#running, ...this.#waiting.map((waiter) => waiter.entry)];
    for (const entry of ending) entry.controller.abort();
    return Promise.all(ending.map((entry) => entry.done)).then(() => undefined);
  }

  #enter(access: Access, doing: string, caller: Caller | undefined): Promise<Entry> {
    const entry = newEntry(access, doing, caller);
    const onWaiting = caller?.onWaiting;
    if (entry.controller.signal.aborted) {
      entry.finish();
      return Promise.reject(new CancelledError());
    }
    return new Promise<Entry>((resolve, reject) => {
      const onAbort = (): void => {
        const at = this.#waiting.findIndex((waiter) => waiter.entry === entry);
        if (at < 0) return;
        this.#waiting.splice(at, 1);
        entry.finish();
        reject(new CancelledError());
        // A rewrite that leaves the queue may have been holding back the operations behind it.
        this.#admit();
      };
      entry.controller.signal.addEventListener('abort', onAbort, { once: true });
      let waited = false;
      this.#waiting.push({
        entry,
        admit: () => {
          entry.controller.signal.removeEventListener('abort', onAbort);
          if (waited) tell(onWaiting, false);
          resolve(entry);
        },
      });
      this.#admit();
      if (this.#waiting.some((waiter) => waiter.entry === entry)) {
        waited = true;
        tell(onWaiting, true);
      }
    });
  }

  #leave(entry: Entry): void {
    this.#running.delete(entry);
    entry.finish();
    this.#admit();
  }

  #allowed(access: Access): boolean {
    const running = [...this.#running];
    switch (access) {
      case 'read':
        return running.every((entry) => entry.access !== 'rewrite');
      case 'change':
        return running.every((entry) => entry.access === 'read');
      case 'rewrite':
        return running.length === 0;
    }
  }

  #admit(): void {
    for (const waiter of [...this.#waiting]) {
      if (this.#allowed(waiter.entry.access)) {
        this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
        this.#running.add(waiter.entry);
        waiter.admit();
      } else if (waiter.entry.access === 'rewrite') {
        break;
      }
    }
  }
}
