import { randomBytes } from 'node:crypto';

import { CancelledError, InvalidArgumentError } from '../core/errors.js';
import type { Progress, VaultEntry } from '../core/types.js';
import type { JobEvent, JobKind, JobReport, JobSummary, StoppedWork } from '../shared/contract.js';
import { errorResult } from './result.js';

/** At most this many progress events a second per job (the contract promises about 20). */
const PROGRESS_EVENTS_PER_SECOND = 20;

/**
 * An add tells that rows were committed at most this often, the first time this long after its first commit: the
 * window shows the folder again on each, which for a large folder is a listing and the folder tree.
 */
export const COMMITTED_EVENT_EVERY_MS = 1000;

/**
 * A wait shorter than this is not told: a re-encryption takes a turn per batch, and a preview's read beside it
 * would otherwise make its row say "waiting" and take it back many times a second.
 */
export const WAIT_TOLD_AFTER_MS = 250;

/** What a job's work gets: its signal and where to report. */
export interface JobContext {
  readonly signal: AbortSignal;
  readonly onProgress: (progress: Progress) => void;
  /** The engine's word that the job waits for another on its vault to end (true), or that its turn came. */
  readonly onWaiting: (waiting: boolean) => void;
  /**
   * The engine's word that an entry is in place for good (an add's committed row, a restore's published file):
   * the files among them are counted, for a stopped add or restore to say how many got in.
   */
  readonly onFinished: (entry: Pick<VaultEntry, 'type'>) => void;
}

/**
 * Passes what a job reports on at most once per interval: the first at once (or, `holdFirst`, an interval after it
 * came), the latest of later ones at the end of their interval (a burst of a thousand progress reports becomes one
 * or two events, never a stale one).
 */
export class EventCoalescer<T> {
  readonly #send: (value: T) => void;
  readonly #intervalMs: number;
  readonly #now: () => number;
  #lastSentAt = Number.NEGATIVE_INFINITY;
  #pending: T | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #holdFirst: boolean;
  #discarded = false;

  constructor(
    send: (value: T) => void,
    options: { intervalMs?: number; now?: () => number; holdFirst?: boolean } = {},
  ) {
    this.#send = send;
    this.#intervalMs = options.intervalMs ?? 1000 / PROGRESS_EVENTS_PER_SECOND;
    this.#now = options.now ?? (() => performance.now());
    this.#holdFirst = options.holdFirst ?? false;
  }

  push(value: T): void {
    if (this.#discarded) return;
    this.#pending = value;
    // Held, the first waits as if one had been sent as it came.
    if (this.#holdFirst && this.#lastSentAt === Number.NEGATIVE_INFINITY) this.#lastSentAt = this.#now();
    const wait = this.#lastSentAt + this.#intervalMs - this.#now();
    if (wait <= 0) this.flush();
    else
      this.#timer ??= setTimeout(() => {
        this.flush();
      }, wait);
  }

  /** Drops what is pending, unsent, and whatever is pushed later (the job ended, and its end says more). */
  discard(): void {
    this.#discarded = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pending = undefined;
  }

  /** Sends what is pending now (the job ended, or its interval passed). */
  flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const value = this.#pending;
    if (value === undefined) return;
    this.#pending = undefined;
    this.#lastSentAt = this.#now();
    this.#send(value);
  }
}

interface RunningJob {
  readonly summary: { jobId: string; vaultId: string; kind: JobKind; progress?: Progress; waiting?: boolean };
  readonly controller: AbortController;
  /** Whether it has had its turn: false while it waits for the first (told at once, unlike `summary.waiting`). */
  readonly begun: () => boolean;
  /** Settles with how the job ended, once its 'ended' event is sent. */
  readonly ended: Promise<Extract<JobEvent, { type: 'ended' }>['status']>;
}

/**
 * The jobs running in the back end: one AbortController each, events in the contract's order ('started',
 * 'progress', 'problem' per problem of the report, exactly one 'ended'; 'waiting' at any point before the end, and
 * for an add 'committed').
 */
export class JobRegistry {
  readonly #jobs = new Map<string, RunningJob>();
  readonly #emit: (event: JobEvent) => void;
  readonly #coalescing: { intervalMs?: number; now?: () => number };

  constructor(emit: (event: JobEvent) => void, coalescing: { intervalMs?: number; now?: () => number } = {}) {
    this.#emit = emit;
    this.#coalescing = coalescing;
  }

  /**
   * Starts `work` and returns its job id at once. `cleanup` runs after the job ended, however it ended.
   */
  start(
    vaultId: string,
    kind: JobKind,
    work: (context: JobContext) => Promise<JobReport>,
    cleanup?: () => void,
  ): string {
    const jobId = `j-${randomBytes(12).toString('hex')}`;
    const controller = new AbortController();
    const base = { jobId, vaultId, kind };
    const summary: RunningJob['summary'] = { ...base };
    let filesFinished = 0;
    const committed = new EventCoalescer<number>(
      (files) => {
        this.#emit({ ...base, type: 'committed', filesFinished: files });
      },
      // Held: an add that ends within a second of committing says it once, by its end.
      { ...this.#coalescing, intervalMs: COMMITTED_EVENT_EVERY_MS, holdFirst: true },
    );
    /** Tells that the job waits, once it has waited {@link WAIT_TOLD_AFTER_MS}. */
    let waitTold: ReturnType<typeof setTimeout> | undefined;
    /** The engine said the job waits, and has not said its turn came since. */
    let waitsForTurn = false;
    const progress = new EventCoalescer<Progress>((latest) => {
      this.#emit({ ...base, type: 'progress', progress: latest });
    }, this.#coalescing);
    const context: JobContext = {
      signal: controller.signal,
      onProgress: (latest) => {
        summary.progress = latest;
        progress.push(latest);
      },
      onWaiting: (waiting) => {
        waitsForTurn = waiting;
        if (waiting) {
          waitTold ??= setTimeout(() => {
            summary.waiting = true;
            this.#emit({ ...base, type: 'waiting', waiting: true });
          }, WAIT_TOLD_AFTER_MS);
          return;
        }
        clearTimeout(waitTold);
        waitTold = undefined;
        if (summary.waiting === true) {
          summary.waiting = false;
          this.#emit({ ...base, type: 'waiting', waiting: false });
        }
      },
      onFinished: (entry) => {
        if (entry.type === 'file') filesFinished++;
        if (kind === 'add') committed.push(filesFinished);
      },
    };
    this.#emit({ ...base, type: 'started' });
    const ended = (async () => {
      let event: JobEvent;
      try {
        // A microtask later, so the caller has the job id before any other event of the job.
        await Promise.resolve();
        if (controller.signal.aborted) throw new CancelledError();
        const result = await work(context);
        progress.flush();
        for (const problem of result.report.problems) this.#emit({ ...base, type: 'problem', problem });
        event = { ...base, type: 'ended', status: 'done', result };
      } catch (error) {
        progress.flush();
        // What an add or a restore stopped part-way had put in place stays: the window says how much.
        const finished = kind === 'add' || kind === 'restore' ? { filesFinished } : {};
        if (error instanceof CancelledError || controller.signal.aborted) {
          event = { ...base, type: 'ended', status: 'cancelled', ...finished };
        } else {
          const { code, message } = errorResult(error);
          event = { ...base, type: 'ended', status: 'failed', code, message, ...finished };
        }
      } finally {
        committed.discard();
        clearTimeout(waitTold);
        this.#jobs.delete(jobId);
        cleanup?.();
      }
      this.#emit(event);
      return event.status;
    })();
    // A job that reported progress had a turn (a re-encryption waits again between its batches).
    const begun = (): boolean => !waitsForTurn || summary.progress !== undefined;
    this.#jobs.set(jobId, { summary, controller, ended, begun });
    return jobId;
  }

  /** @throws {@link InvalidArgumentError} for a job id that is not running. */
  cancel(jobId: string): void {
    const job = this.#jobs.get(jobId);
    if (!job) throw new InvalidArgumentError('No such job is running (it may have ended already).');
    job.controller.abort();
  }

  /**
   * Cancels every job of a vault (or all) and settles when they have ended, with those this stop cancelled (their
   * kinds, and whether each had begun): not one the user had cancelled already, nor one that finished before it
   * noticed the cancel.
   */
  async stop(vaultId?: string): Promise<StoppedWork[]> {
    const stopping = [...this.#jobs.values()].filter(
      (job) => vaultId === undefined || job.summary.vaultId === vaultId,
    );
    const cancelledBefore = new Set(stopping.filter((job) => job.controller.signal.aborted));
    const begun = stopping.map((job) => job.begun());
    for (const job of stopping) job.controller.abort();
    const statuses = await Promise.all(stopping.map((job) => job.ended));
    return stopping.flatMap((job, index) =>
      statuses[index] === 'cancelled' && !cancelledBefore.has(job)
        ? [{ kind: job.summary.kind, begun: begun[index] ?? true }]
        : [],
    );
  }

  list(): JobSummary[] {
    return [...this.#jobs.values()].map((job) => ({ ...job.summary }));
  }
}
