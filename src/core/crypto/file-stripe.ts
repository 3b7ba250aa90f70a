import { readSync, readvSync, writevSync } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';

import { TAG_BYTES } from './constants.js';
import { BLOB_HEADER_BYTES } from './content.js';
import {
  batchPlans,
  plaintextViews,
  recordsLength,
  runBatch,
  type BatchFailureReason,
  type BatchJob,
  type BlobCrypto,
} from './chunk-batch.js';
import { badPaddingAt, contentPart, fillPadding } from './padding.js';
import type { SodiumBackend } from './sodium.js';

/**
 * One worker's share of sealing or opening a whole blob file: batches `first`, `first + stride`… (see
 * {@link batchPlans}), each read from the source file, run in place and written at its place in the target file,
 * all inside the worker thread. The bytes never cross threads and stay in the CPU cache from read to write, which
 * made adding and restoring a large file a quarter to a third faster than reading and writing on the main thread
 * with only the crypto on workers. File descriptors are process-wide, so the main thread opens both files and
 * passes their numbers; it must keep them open until every stripe has ended.
 */
export interface StripeJob extends BlobCrypto {
  readonly chunkCount: number;
  /** Plaintext bytes in the blob's final chunk. */
  readonly lastLength: number;
  readonly batchChunks: number;
  readonly first: number;
  readonly stride: number;
  /** The plaintext file to seal, or the blob file to open. */
  readonly sourceFd: number;
  /**
   * The blob file to write chunks into (the header is the caller's), or the plaintext file; none when opening
   * only to authenticate (verify).
   */
  readonly targetFd?: number;
  /** A padded blob (section 5.7): the file's size; plaintext past it is padding, made or checked here. */
  readonly contentSize?: number;
}

/** Where the file's bytes end in the blob's plaintext, and how long that plaintext is. */
function extent(job: StripeJob): { size: number; total: number } {
  const total = (job.chunkCount - 1) * job.chunkSize + job.lastLength;
  return { size: job.contentSize ?? total, total };
}

/** A stripe job before the pool splits it: one per worker, each with its own key copy. */
export type StripeRequest = Omit<StripeJob, 'batchChunks' | 'first' | 'stride'>;

/** Runs whole blob files as stripes on worker threads (the crypto pool). */
export interface StripeExecutor {
  runStripes(
    job: StripeRequest,
    options?: { onBytes?: (bytes: number) => void; signal?: AbortSignal },
  ): Promise<StripeOutcome>;
}

/** A failed system call, as plain data (a cloned Error would lose `code` and `syscall`). */
export interface SystemErrorData {
  readonly message: string;
  readonly code?: string;
  readonly syscall?: string;
  readonly errno?: number;
}

/** How a stripe ended. Every stripe ends at its first problem, or when told to stop. */
export type StripeOutcome =
  | { readonly kind: 'done' }
  | { readonly kind: 'stopped' }
  /** Sealing: the source ended before the size it had when the add began. */
  | { readonly kind: 'source-ended' }
  | {
      readonly kind: 'damaged';
      readonly failure: { readonly index: number; readonly reason: BatchFailureReason };
    }
  | { readonly kind: 'io-error'; readonly side: 'source' | 'target'; readonly error: SystemErrorData };

function errorData(error: unknown): SystemErrorData {
  if (!(error instanceof Error)) return { message: String(error) };
  const { code, syscall, errno } = error as NodeJS.ErrnoException;
  return {
    message: error.message,
    ...(code === undefined ? {} : { code }),
    ...(syscall === undefined ? {} : { syscall }),
    ...(errno === undefined ? {} : { errno }),
  };
}

/** Rebuilds a worker's system error on this side, shaped like the one fs would have thrown here. */
export function systemError(data: SystemErrorData): Error {
  return Object.assign(new Error(data.message), data);
}

class SideError extends Error {
  constructor(
    readonly side: 'source' | 'target',
    readonly original: unknown,
  ) {
    super('stripe I/O failed');
  }
}

function onSide<T>(side: 'source' | 'target', io: () => T): T {
  try {
    return io();
  } catch (error) {
    throw new SideError(side, error);
  }
}

/** Writes all of `views` at `position`; a short write (only on a full disk) is an error like ENOSPC itself. */
function writeAll(fd: number, views: Uint8Array[], position: number): void {
  const expected = views.reduce((sum, view) => sum + view.byteLength, 0);
  if (writevSync(fd, views, position) !== expected) {
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
      code: 'ENOSPC',
      syscall: 'write',
    });
  }
}

/** Reads plaintext into its slots and seals it; false when the source ended early. */
function sealBatch(sodium: SodiumBackend, job: StripeJob, batch: BatchJob): boolean {
  const views = plaintextViews(batch);
  const at = batch.firstIndex * job.chunkSize;
  const { size, total } = extent(job);
  const content = contentPart(views, at, size);
  const expected = content.reduce((sum, view) => sum + view.byteLength, 0);
  const got = expected === 0 ? 0 : onSide('source', () => readvSync(job.sourceFd, content, at));
  if (got !== expected) return false;
  for (const [i, view] of views.entries()) fillPadding(view, at + i * job.chunkSize, size, total);
  runBatch(sodium, batch);
  const position = BLOB_HEADER_BYTES + batch.firstIndex * (job.chunkSize + TAG_BYTES);
  const { targetFd } = job;
  if (targetFd === undefined) throw new Error('internal error: sealing needs a target file');
  onSide('target', () => {
    writeAll(targetFd, [batch.records], position);
  });
  return true;
}

/** Reads records, opens them, and writes the plaintext only when every chunk of the batch authenticated. */
function openBatch(sodium: SodiumBackend, job: StripeJob, batch: BatchJob): StripeOutcome | undefined {
  const { records } = batch;
  const position = BLOB_HEADER_BYTES + batch.firstIndex * (job.chunkSize + TAG_BYTES);
  const got = onSide('source', () => readSync(job.sourceFd, records, 0, records.byteLength, position));
  // The blob's size was checked against its layout; a short read means it changed since. Zeros (never stale bytes
  // of the previous batch) then fail authentication like any other damage.
  if (got !== records.byteLength) records.fill(0, got);
  const { failure } = runBatch(sodium, batch);
  if (failure) return { kind: 'damaged', failure };
  const at = batch.firstIndex * job.chunkSize;
  const { size, total } = extent(job);
  const opened = plaintextViews(batch);
  const bad = badPaddingAt(opened, at, size, total);
  if (bad !== undefined)
    return { kind: 'damaged', failure: { index: batch.firstIndex + bad, reason: 'malformed' } };
  const views = contentPart(opened, at, size);
  const { targetFd } = job;
  if (targetFd !== undefined && views.length > 0) {
    onSide('target', () => {
      writeAll(targetFd, views, at);
    });
  }
  return undefined;
}

/**
 * Runs a stripe in this thread with synchronous I/O, yielding to the event loop between batches so a stop request
 * (and other jobs' messages) get through. `onBatch` receives each batch's plaintext byte count. Wipes `job.key`.
 */
export async function runStripe(
  sodium: SodiumBackend,
  job: StripeJob,
  onBatch: (plaintextBytes: number) => void,
  stopRequested: () => boolean,
): Promise<StripeOutcome> {
  try {
    const buffer = new Uint8Array(job.batchChunks * (job.chunkSize + TAG_BYTES));
    for (const plan of batchPlans(job, job.batchChunks, job.first, job.stride)) {
      if (stopRequested()) return { kind: 'stopped' };
      const records = buffer.subarray(0, recordsLength({ ...plan, chunkSize: job.chunkSize }));
      const batch: BatchJob = { ...job, ...plan, records };
      if (job.op === 'seal') {
        if (!sealBatch(sodium, job, batch)) return { kind: 'source-ended' };
      } else {
        const outcome = openBatch(sodium, job, batch);
        if (outcome) return outcome;
      }
      // Progress counts the file's bytes, not its padding.
      const start = plan.firstIndex * job.chunkSize;
      const { size } = extent(job);
      onBatch(
        Math.max(0, Math.min(size, start + (plan.count - 1) * job.chunkSize + plan.lastLength) - start),
      );
      await nextTurn();
    }
    return { kind: 'done' };
  } catch (error) {
    if (error instanceof SideError)
      return { kind: 'io-error', side: error.side, error: errorData(error.original) };
    throw error;
  } finally {
    sodium.memzero(job.key);
  }
}
