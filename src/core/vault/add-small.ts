import type { ChunkCipher } from '../crypto/content.js';
import type { CryptoPool } from '../crypto/pool.js';
import { MATERIAL_BYTES, putKeyMaterial, type SmallFileOutcome } from '../crypto/small-file-protocol.js';

/** Small files go to the worker pool in batches this large, with at most this many batches out at once. */
const BATCH_FILES = 128;
const BATCH_BYTES = 4 * 1024 * 1024;
const IN_FLIGHT = 4;

/** An add uses the worker pool for small files when it has more of them than one batch. */
export const SMALL_FILES_FOR_POOL = BATCH_FILES;

/** A small file to read and seal: its source, its planned size and the cipher for its new blob. */
export interface SmallFileToSeal {
  readonly path: string;
  readonly size: number;
  readonly cipher: ChunkCipher;
}

/** The pool's key material for a batch (see small-file-protocol.ts); wipes each file's cipher. */
function keyMaterial(batch: readonly SmallFileToSeal[]): Uint8Array {
  const material = new Uint8Array(batch.length * MATERIAL_BYTES);
  batch.forEach(({ cipher }, i) => {
    putKeyMaterial(cipher, material, i * MATERIAL_BYTES);
    cipher.wipe();
  });
  return material;
}

/**
 * Reads and seals the small files of an add on the crypto pool's workers, in batches, and hands each batch's
 * outcomes to `accept` in the order the files were queued (batches can come back out of order from several
 * workers). The blobs are views into batch buffers: call {@link SmallFileSealer.committed} once the rows holding
 * them are committed, so the buffers can be reused.
 */
export class SmallFileSealer<T extends SmallFileToSeal> {
  readonly #pool: CryptoPool;
  readonly #accept: (files: readonly T[], outcomes: readonly SmallFileOutcome[]) => void;
  readonly #queue: T[] = [];
  #queueBytes = 0;
  readonly #inFlight: Promise<void>[] = [];
  #lastAccepted: Promise<void> = Promise.resolve();
  readonly #accepted: Uint8Array[] = [];

  constructor(
    pool: CryptoPool,
    accept: (files: readonly T[], outcomes: readonly SmallFileOutcome[]) => void,
  ) {
    this.#pool = pool;
    this.#accept = accept;
  }

  /** Queues a file; sends the batch when it is full, and waits while too many batches are out. */
  async add(file: T): Promise<void> {
    this.#queue.push(file);
    this.#queueBytes += file.size;
    if (this.#queue.length >= BATCH_FILES || this.#queueBytes >= BATCH_BYTES) await this.#send();
  }

  /** Sends what is queued and waits until every batch has been accepted. */
  async flush(): Promise<void> {
    await this.#send();
    for (let next = this.#inFlight.shift(); next; next = this.#inFlight.shift()) await next;
  }

  /** After an error or a cancel: wipes what is queued and waits for the batches out there to settle. */
  async abandon(): Promise<void> {
    for (const { cipher } of this.#queue.splice(0)) cipher.wipe();
    await Promise.allSettled(this.#inFlight.splice(0));
  }

  /** The rows of every batch accepted so far are committed: their buffers may be reused. */
  committed(): void {
    for (const buffer of this.#accepted.splice(0)) this.#pool.recycle(buffer);
  }

  async #send(): Promise<void> {
    const batch = this.#queue.splice(0);
    this.#queueBytes = 0;
    if (batch.length === 0) return;
    const files = batch.map(({ path, size }) => ({ path, size }));
    const chunkSize = batch[0]?.cipher.header.chunkSize ?? 0;
    const sealed = this.#pool.sealSmallFiles(files, keyMaterial(batch), chunkSize);
    const accepted = Promise.all([sealed, this.#lastAccepted]).then(([{ outcomes, buffer }]) => {
      this.#accept(batch, outcomes);
      this.#accepted.push(buffer);
    });
    this.#lastAccepted = accepted.catch(() => undefined);
    accepted.catch(() => undefined); // surfaced by the await below or in flush
    this.#inFlight.push(accepted);
    if (this.#inFlight.length >= IN_FLIGHT) await this.#inFlight.shift();
  }
}
