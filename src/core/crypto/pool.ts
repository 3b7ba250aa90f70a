import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';

import { spawnWorker } from '../worker-spawn.js';

import { batchShape, type BatchJob, type BatchOutcome } from './chunk-batch.js';
import type { BatchExecutor, BatchResult } from './content.js';
import type { WorkerRequest } from './crypto-worker.js';
import type { StripeExecutor, StripeJob, StripeOutcome, StripeRequest } from './file-stripe.js';
import type { OpenBatch, OpenedSmallFile, SealBatch, SealedBatch } from './small-file-protocol.js';
import { loadNativeSodium } from './sodium.js';

/** 16 chunks of 64 KiB: large enough that a worker round trip costs little, small enough to keep 2 cores busy. */
const BATCH_CHUNKS = 16;
/** The main thread only does I/O; beyond a few workers, a 2-core machine or the disk is the limit. */
const MAX_WORKERS = 4;

/** A job out on a worker: how to settle it, and where its progress reports go (stripes only). */
interface PendingJob {
  resolve(reply: WorkerReply): void;
  reject(error: Error): void;
  progress?(bytes: number): void;
}

/** A worker's final answer to a job: a batch's outcome and records, a stripe's outcome, or a small-file batch's. */
interface WorkerReply {
  readonly outcome: BatchOutcome | StripeOutcome | SealedBatch | OpenedSmallFile[];
  readonly records?: Uint8Array;
}

/**
 * `view` as an array that owns exactly its bytes. Structured clone copies a view's whole underlying buffer, so a
 * view into a larger one (a random block, Node's shared buffer pool) would hand the worker everything around it.
 */
function exact(view: Uint8Array): Uint8Array {
  return view.byteOffset === 0 && view.byteLength === view.buffer.byteLength ? view : Uint8Array.from(view);
}

/** The error a job's caller gets when the job threw inside its worker (a bug, not damage). */
function workerFailure(message: string): Error {
  return new Error(`a crypto worker failed: ${message}`);
}

class PoolWorker {
  readonly #worker: Worker;
  readonly #pending = new Map<number, PendingJob>();
  #broken: Error | undefined;

  constructor(worker: Worker) {
    this.#worker = worker;
    worker.on(
      'message',
      (message: { id?: number; progress?: number; error?: string } & Partial<WorkerReply>) => {
        if (message.id === undefined) return;
        const job = this.#pending.get(message.id);
        if (message.progress !== undefined) {
          job?.progress?.(message.progress);
          return;
        }
        if (!message.outcome && message.error === undefined) return;
        this.#pending.delete(message.id);
        if (this.#pending.size === 0) worker.unref();
        if (message.outcome)
          job?.resolve({
            outcome: message.outcome,
            ...(message.records ? { records: message.records } : {}),
          });
        else job?.reject(workerFailure(message.error ?? ''));
      },
    );
    worker.on('error', (error) => {
      this.#fail(error);
    });
    worker.on('exit', (code) => {
      this.#fail(new Error(`a crypto worker stopped unexpectedly (exit code ${code})`));
    });
    // After the listeners: attaching a 'message' listener references the worker again, and an idle worker must
    // not keep the process alive.
    worker.unref();
  }

  #fail(error: Error): void {
    this.#broken ??= error;
    for (const job of this.#pending.values()) job.reject(error);
    this.#pending.clear();
  }

  get load(): number {
    return this.#broken ? Number.POSITIVE_INFINITY : this.#pending.size;
  }

  /**
   * Posts a request and settles with the worker's final reply. `secret` (a key copy, or key material) travels by
   * transfer and is wiped there; when it cannot be posted (a broken worker) it is wiped here. The other
   * `transfer` buffers are handed over as they are.
   */
  #send(
    request: WorkerRequest,
    secret: Uint8Array,
    transfer: ArrayBuffer[] = [],
    progress?: (bytes: number) => void,
  ): Promise<WorkerReply> {
    return new Promise((resolve, reject) => {
      try {
        if (this.#broken) throw this.#broken;
        if (secret.byteOffset !== 0 || secret.byteLength !== secret.buffer.byteLength)
          throw new Error('internal error: key material must own its buffer to be transferred');
        this.#pending.set(request.id, { resolve, reject, ...(progress ? { progress } : {}) });
        // While a job is out the worker must keep the process alive; idle workers must not.
        this.#worker.ref();
        this.#worker.postMessage(request, [secret.buffer as ArrayBuffer, ...transfer]);
      } catch (error) {
        this.#pending.delete(request.id);
        secret.fill(0);
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  async run(id: number, job: BatchJob): Promise<BatchResult> {
    // The records (the bulk) are transferred: the caller gets them back in the result.
    const { records } = job;
    if (records.byteOffset !== 0 || records.byteLength !== records.buffer.byteLength) {
      job.key.fill(0);
      throw new Error('internal error: batch records must own their buffer to be transferred');
    }
    const copy = { ...job, noncePrefix: exact(job.noncePrefix), aadPrefix: exact(job.aadPrefix) };
    const reply = await this.#send({ id, job: copy }, job.key, [records.buffer as ArrayBuffer]);
    return { ...(reply.outcome as BatchOutcome), records: reply.records ?? records };
  }

  /** Runs a stripe; its key must be this stripe's own copy (it is transferred). */
  async stripe(id: number, job: StripeJob, progress: (bytes: number) => void): Promise<StripeOutcome> {
    const copy = { ...job, noncePrefix: exact(job.noncePrefix), aadPrefix: exact(job.aadPrefix) };
    const reply = await this.#send({ id, stripe: copy }, job.key, [], progress);
    return reply.outcome as StripeOutcome;
  }

  /** Reads, seals and packs a batch of small files; its material is transferred. */
  async sealSmall(id: number, batch: SealBatch): Promise<SealedBatch> {
    const reply = await this.#send({ id, sealSmall: batch }, batch.material);
    return reply.outcome as SealedBatch;
  }

  /** Reads, opens and writes a batch of small files; its material is transferred. */
  async openSmall(id: number, batch: OpenBatch): Promise<OpenedSmallFile[]> {
    const reply = await this.#send({ id, openSmall: batch }, batch.material);
    return reply.outcome as OpenedSmallFile[];
  }

  stop(id: number): void {
    if (this.#pending.has(id)) this.#worker.postMessage({ id, stop: true } satisfies WorkerRequest);
  }

  terminate(): Promise<number> {
    return this.#worker.terminate();
  }
}

/**
 * Worker threads that seal and open with native libsodium, so the Electron main thread never stalls on bulk
 * crypto: chunk batches the calling thread reads and writes, or whole blob files the workers read and write
 * themselves.
 */
export class CryptoPool implements BatchExecutor, StripeExecutor {
  readonly batchChunks = BATCH_CHUNKS;
  readonly maxInFlight: number;
  readonly #workers: PoolWorker[];
  #nextId = 0;

  private constructor(workers: PoolWorker[]) {
    this.#workers = workers;
    this.maxInFlight = 2 * workers.length;
  }

  /** Starts `size` workers and waits until each has loaded libsodium. */
  static async start(size: number): Promise<CryptoPool> {
    const workers = await Promise.all(
      Array.from({ length: size }, async () => {
        const worker = spawnWorker(import.meta.url, 'crypto-worker');
        await new Promise<void>((resolve, reject) => {
          worker.once('message', () => {
            resolve();
          });
          worker.once('error', reject);
          worker.once('exit', (code) => {
            reject(new Error(`a crypto worker stopped while starting (exit code ${code})`));
          });
        });
        return new PoolWorker(worker);
      }),
    );
    return new CryptoPool(workers);
  }

  get size(): number {
    return this.#workers.length;
  }

  #leastBusy(): PoolWorker {
    return this.#workers.reduce((best, candidate) => (candidate.load < best.load ? candidate : best));
  }

  /** Runs a batch on the least busy worker. Its key is transferred to the worker and wiped there. */
  run(job: BatchJob): Promise<BatchResult> {
    return this.#leastBusy().run(this.#nextId++, job);
  }

  /**
   * Reads and seals small files into blobs (up to 16 chunks) on the least busy worker, which writes them as one
   * new pack (see small-files.ts). `material` holds each file's key material (`MATERIAL_BYTES` each, see
   * small-file-protocol.ts); it is transferred and wiped in the worker.
   */
  sealSmallFiles(batch: SealBatch): Promise<SealedBatch> {
    return this.#leastBusy().sealSmall(this.#nextId++, batch);
  }

  /**
   * Reads blobs of up to 16 chunks from their packs and opens them on the least busy worker, which writes each
   * authenticated plaintext to its temp file, fsynced, and publishes it (see small-files.ts). `material` is
   * transferred and wiped there.
   * @returns per file, in order, how it went.
   */
  openSmallFiles(batch: OpenBatch): Promise<OpenedSmallFile[]> {
    return this.#leastBusy().openSmall(this.#nextId++, batch);
  }

  /**
   * Seals or opens a whole blob file on several workers at once, each reading, running and writing every n-th
   * batch (see file-stripe.ts). Each stripe gets its own copy of `job.key`, wiped in its worker. At the first
   * problem, or when `signal` aborts, every stripe is told to stop; this settles only once all of them have
   * ended, so the caller may then close or remove the files.
   * @returns `done`, or the first problem (`stopped` when the abort came first).
   * @throws Error when a worker dies (after the others have stopped).
   */
  async runStripes(
    job: StripeRequest,
    options: { onBytes?: (bytes: number) => void; signal?: AbortSignal } = {},
  ): Promise<StripeOutcome> {
    const { onBytes = () => undefined, signal } = options;
    if (signal?.aborted) return { kind: 'stopped' };
    const healthy = this.#workers.filter((worker) => worker.load !== Number.POSITIVE_INFINITY);
    const candidates = healthy.length > 0 ? healthy : this.#workers;
    // Each stripe holds one batch: large chunks make fewer, smaller batches and fewer stripes.
    const { batchChunks, maxInFlight } = batchShape(job.chunkSize, {
      batchChunks: BATCH_CHUNKS,
      maxInFlight: candidates.length,
    });
    const workers = candidates.slice(0, Math.min(maxInFlight, Math.ceil(job.chunkCount / batchChunks)));
    const stripes = workers.map((worker, first) => ({ worker, first, id: this.#nextId++ }));
    const ended: { first?: { outcome: StripeOutcome } | { error: Error } } = {};
    const stopAll = (reason: { outcome: StripeOutcome } | { error: Error }): void => {
      if (ended.first) return;
      ended.first = reason;
      for (const { worker, id } of stripes) worker.stop(id);
    };
    const onAbort = (): void => {
      stopAll({ outcome: { kind: 'stopped' } });
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await Promise.all(
        stripes.map(({ worker, first, id }) =>
          worker
            .stripe(
              id,
              {
                ...job,
                key: Uint8Array.from(job.key),
                batchChunks,
                first,
                stride: stripes.length,
              },
              onBytes,
            )
            .then(
              (outcome) => {
                if (outcome.kind !== 'done') stopAll({ outcome });
              },
              (error: unknown) => {
                stopAll({ error: error instanceof Error ? error : new Error(String(error)) });
              },
            ),
        ),
      );
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    if (ended.first && 'error' in ended.first) throw ended.first.error;
    return ended.first?.outcome ?? { kind: 'done' };
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.map((worker) => worker.terminate()));
  }
}

let shared: Promise<CryptoPool | undefined> | undefined;

/**
 * The process-wide pool, sized to the machine's cores (one worker per core, at most 4), started on first use; or
 * `undefined` when worker threads or native libsodium are unavailable, in which case callers run batches on
 * their own thread. `COFFER_CRYPTO_WORKERS=0` turns the pool off (for comparisons and constrained systems).
 */
export function sharedCryptoPool(): Promise<CryptoPool | undefined> {
  shared ??= (async () => {
    const configured = process.env.COFFER_CRYPTO_WORKERS;
    const size =
      configured === undefined ? Math.min(MAX_WORKERS, availableParallelism()) : Number(configured);
    if (!Number.isInteger(size) || size < 1) return undefined;
    try {
      return await CryptoPool.start(size);
    } catch (error) {
      // The workers run on sodium-native only; without it, loadSodium has already warned about the slower build.
      // (Asked only here, so loading the module does not delay starting the workers.)
      if (loadNativeSodium() === null) return undefined;
      // Everything still works on this thread, only slower; a missing worker file is a packaging fault to see.
      console.warn(
        `coffer: the crypto worker threads could not be started (${(error as Error).message}); ` +
          'working on the main thread, more slowly.',
      );
      return undefined;
    }
  })();
  return shared;
}
