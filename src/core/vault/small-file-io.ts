import type { Worker } from 'node:worker_threads';

import { loadNativeSodium } from '../crypto/sodium.js';
import { spawnWorker } from '../worker-spawn.js';
import type { SealedSmallFile, SmallFileBatch } from './small-file-protocol.js';

/** A sealed small file's complete blob (a view into its batch's buffer), or why it could not be read. */
export type SmallFileOutcome =
  | { readonly ok: true; readonly blob: Buffer; readonly mtimeMs: number }
  /** `CHANGED` when the file changed while read; otherwise the errno code of the failed read. */
  | { readonly ok: false; readonly code: string };

const MAX_SPARES = 4;

interface Pending {
  resolve(result: { results: SealedSmallFile[]; buffer: Uint8Array }): void;
  reject(error: Error): void;
}

/**
 * A worker thread that reads and seals batches of small files (see small-file-worker.ts), one batch at a time in
 * the order sent. Idle, it does not keep the process alive.
 */
export class SmallFileWorker {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  readonly #spares: Uint8Array[] = [];
  #nextId = 0;
  #broken: Error | undefined;

  private constructor(worker: Worker) {
    this.#worker = worker;
    worker.on('message', (message: { id?: number; results?: SealedSmallFile[]; buffer?: Uint8Array }) => {
      if (message.id === undefined || !message.results || !message.buffer) return;
      const job = this.#pending.get(message.id);
      this.#pending.delete(message.id);
      if (this.#pending.size === 0) worker.unref();
      job?.resolve({ results: message.results, buffer: message.buffer });
    });
    worker.on('error', (error) => {
      this.#fail(error);
    });
    worker.on('exit', (code) => {
      this.#fail(new Error(`the small-file worker stopped unexpectedly (exit code ${code})`));
    });
    // After the listeners: attaching a 'message' listener references the worker again.
    worker.unref();
  }

  /** Starts the worker; `undefined` when native libsodium or worker threads are unavailable. */
  static async start(): Promise<SmallFileWorker | undefined> {
    if (!loadNativeSodium()) return undefined;
    try {
      const worker = spawnWorker(import.meta.url, 'small-file-worker');
      await new Promise<void>((resolve, reject) => {
        worker.once('message', () => {
          resolve();
        });
        worker.once('error', reject);
      });
      return new SmallFileWorker(worker);
    } catch {
      return undefined;
    }
  }

  #fail(error: Error): void {
    this.#broken ??= error;
    for (const job of this.#pending.values()) job.reject(error);
    this.#pending.clear();
  }

  /**
   * Reads and seals a batch: per file, its path and planned size, and its key material (`MATERIAL_BYTES` each,
   * see small-file-protocol.ts), which is transferred to the worker and wiped there.
   * @returns per file, in order, the sealed blob (a view into `buffer`) or why it failed; hand `buffer` to
   * {@link SmallFileWorker.recycle} once nothing refers to it any more.
   */
  async seal(
    files: readonly { path: string; size: number }[],
    material: Uint8Array,
    chunkSize: number,
  ): Promise<{ outcomes: SmallFileOutcome[]; buffer: Uint8Array }> {
    if (this.#broken) throw this.#broken;
    const id = this.#nextId++;
    const done = new Promise<{ results: SealedSmallFile[]; buffer: Uint8Array }>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
    });
    const spare = this.#spares.pop();
    const batch: SmallFileBatch = {
      id,
      paths: files.map((file) => file.path),
      sizes: files.map((file) => file.size),
      chunkSize,
      material,
      ...(spare ? { spare } : {}),
    };
    this.#worker.ref();
    const transfer = [material.buffer as ArrayBuffer];
    if (spare) transfer.push(spare.buffer as ArrayBuffer);
    this.#worker.postMessage(batch, transfer);
    const { results, buffer } = await done;
    const outcomes = results.map((result): SmallFileOutcome =>
      result.ok
        ? {
            ok: true,
            blob: Buffer.from(buffer.buffer, buffer.byteOffset + result.offset, result.length),
            mtimeMs: result.mtimeMs,
          }
        : result,
    );
    return { outcomes, buffer };
  }

  /** Keeps a batch buffer to send back for reuse. */
  recycle(buffer: Uint8Array): void {
    if (this.#spares.length < MAX_SPARES) this.#spares.push(buffer);
  }
}

let shared: Promise<SmallFileWorker | undefined> | undefined;

/**
 * The process-wide small-file worker, started on first use; `undefined` (callers work in their own thread) when it
 * cannot run or `COFFER_CRYPTO_WORKERS=0` turns worker threads off.
 */
export function sharedSmallFileWorker(): Promise<SmallFileWorker | undefined> {
  shared ??= process.env.COFFER_CRYPTO_WORKERS === '0' ? Promise.resolve(undefined) : SmallFileWorker.start();
  return shared;
}
