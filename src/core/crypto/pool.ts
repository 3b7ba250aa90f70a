import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';

import { spawnWorker } from '../worker-spawn.js';

import type { BatchJob, BatchOutcome } from './chunk-batch.js';
import type { BatchExecutor, BatchResult } from './content.js';

/** 16 chunks of 64 KiB: large enough that a worker round trip costs little, small enough to keep 2 cores busy. */
const BATCH_CHUNKS = 16;
/** The main thread only does I/O; beyond a few workers, a 2-core machine or the disk is the limit. */
const MAX_WORKERS = 4;

interface PendingJob {
  resolve(result: BatchResult): void;
  reject(error: Error): void;
}

class PoolWorker {
  readonly #worker: Worker;
  readonly #pending = new Map<number, PendingJob>();
  #broken: Error | undefined;

  constructor(worker: Worker) {
    this.#worker = worker;
    worker.on('message', (message: { id?: number; outcome?: BatchOutcome; records?: Uint8Array }) => {
      if (message.id === undefined || !message.outcome || !message.records) return;
      const job = this.#pending.get(message.id);
      this.#pending.delete(message.id);
      if (this.#pending.size === 0) worker.unref();
      job?.resolve({ ...message.outcome, records: message.records });
    });
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

  run(id: number, job: BatchJob): Promise<BatchResult> {
    if (this.#broken) return Promise.reject(this.#broken);
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // While a job is out the worker must keep the process alive; idle workers must not.
      this.#worker.ref();
      // Structured clone copies a view's whole underlying buffer, so small views are copied to their own first,
      // and the records (the bulk) are transferred: the caller gets them back in the result.
      const { records } = job;
      if (records.byteOffset !== 0 || records.byteLength !== records.buffer.byteLength) {
        reject(new Error('internal error: batch records must own their buffer to be transferred'));
        return;
      }
      const copy = {
        ...job,
        noncePrefix: Uint8Array.from(job.noncePrefix),
        aadPrefix: Uint8Array.from(job.aadPrefix),
      };
      this.#worker.postMessage({ id, job: copy }, [
        records.buffer as ArrayBuffer,
        job.key.buffer as ArrayBuffer,
      ]);
    });
  }

  terminate(): Promise<number> {
    return this.#worker.terminate();
  }
}

/**
 * Worker threads that seal and open chunk batches with native libsodium, so bulk crypto runs beside the thread
 * that reads and writes, and the Electron main thread never stalls on it.
 */
export class CryptoPool implements BatchExecutor {
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
        });
        return new PoolWorker(worker);
      }),
    );
    return new CryptoPool(workers);
  }

  get size(): number {
    return this.#workers.length;
  }

  /** Runs a batch on the least busy worker. Its key is transferred to the worker and wiped there. */
  run(job: BatchJob): Promise<BatchResult> {
    const worker = this.#workers.reduce((best, candidate) => (candidate.load < best.load ? candidate : best));
    return worker.run(this.#nextId++, job);
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
    } catch {
      return undefined;
    }
  })();
  return shared;
}
