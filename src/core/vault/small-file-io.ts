import type { Worker } from 'node:worker_threads';

import { loadNativeSodium } from '../crypto/sodium.js';
import { spawnWorker } from '../worker-spawn.js';
import type { OpenBatch, OpenedSmallFile, SealBatch, SealedSmallFile } from './small-file-protocol.js';

/** A sealed small file's complete blob (a view into its batch's buffer), or why it could not be read. */
export type SmallFileOutcome =
  | { readonly ok: true; readonly blob: Buffer; readonly mtimeMs: number }
  /** `CHANGED` when the file changed while read; otherwise the errno code of the failed read. */
  | { readonly ok: false; readonly code: string };

const MAX_SPARES = 4;

/** What the worker sends back for a batch: per-file results and, for a seal, the buffer holding the blobs. */
interface Reply {
  readonly results: unknown[];
  readonly buffer?: Uint8Array;
}

interface Pending {
  resolve(reply: Reply): void;
  reject(error: Error): void;
}

/**
 * A worker thread that seals (for an add) or opens (for a restore) batches of small files, see
 * small-file-worker.ts; one batch at a time, in the order sent. Idle, it does not keep the process alive.
 */
export class SmallFileWorker {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  readonly #spares: Uint8Array[] = [];
  #nextId = 0;
  #broken: Error | undefined;

  private constructor(worker: Worker) {
    this.#worker = worker;
    worker.on('message', (message: Partial<Reply> & { id?: number }) => {
      if (message.id === undefined || !message.results) return;
      const job = this.#pending.get(message.id);
      this.#pending.delete(message.id);
      if (this.#pending.size === 0) worker.unref();
      job?.resolve({ results: message.results, ...(message.buffer ? { buffer: message.buffer } : {}) });
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
    const spare = this.#spares.pop();
    const batch: SealBatch = {
      op: 'seal',
      id: this.#nextId++,
      paths: files.map((file) => file.path),
      sizes: files.map((file) => file.size),
      chunkSize,
      material,
      ...(spare ? { spare } : {}),
    };
    const reply = await this.#send(batch, spare ? [material, spare] : [material]);
    const buffer = reply.buffer ?? new Uint8Array(0);
    const outcomes = (reply.results as SealedSmallFile[]).map((result): SmallFileOutcome =>
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

  /**
   * Opens a batch of one-chunk blobs and writes each authenticated plaintext to its temp file, fsynced. `records`
   * and `material` are transferred to the worker and wiped there.
   * @returns per file, in order, how it went.
   */
  async open(files: Omit<OpenBatch, 'op' | 'id'>): Promise<OpenedSmallFile[]> {
    const reply = await this.#send({ ...files, op: 'open', id: this.#nextId++ }, [
      files.records,
      files.material,
    ]);
    return reply.results as OpenedSmallFile[];
  }

  #send(batch: SealBatch | OpenBatch, transfer: Uint8Array[]): Promise<Reply> {
    if (this.#broken) return Promise.reject(this.#broken);
    const done = new Promise<Reply>((resolve, reject) => {
      this.#pending.set(batch.id, { resolve, reject });
    });
    this.#worker.ref();
    this.#worker.postMessage(
      batch,
      transfer.map((array) => array.buffer as ArrayBuffer),
    );
    return done;
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
