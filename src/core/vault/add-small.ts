import type { ChunkCipher } from '../crypto/content.js';
import type { CryptoPool } from '../crypto/pool.js';
import { MATERIAL_BYTES, putKeyMaterial, type SealedSmallFile } from '../crypto/small-file-protocol.js';
import { asIoError } from './durable.js';

/**
 * Small files go to the worker pool in batches this large (one pack each), with at most this many out at once.
 * Batches of files averaging 16 KiB end at the byte limit near 256 files: half the posts of 128, and each post to a
 * worker can cost the main thread a wake-up and a wait for a core (an in-process add of 10,000 files of 1-32 KiB,
 * 4 alternating processes x 6 adds: 0.47 s to 0.42 s wall, main thread 330 to 315 ms of CPU).
 */
const BATCH_FILES = 256;
const BATCH_BYTES = 4 * 1024 * 1024;
const IN_FLIGHT = 4;

/**
 * Whether an add's small files go to the worker pool: when there are more of them, or more bytes, than one batch.
 * Below that a round trip to a worker costs more than it saves; above it the main thread would spend too long
 * on crypto (small files run to 1 MiB each).
 */
export function smallFilesNeedPool(count: number, bytes: number): boolean {
  return count > BATCH_FILES || bytes > BATCH_BYTES;
}

/** A small file to read and seal: its source, its planned size and the cipher for its new blob. */
export interface SmallFileToSeal {
  readonly path: string;
  readonly size: number;
  readonly cipher: ChunkCipher;
}

/** A new pack's id and where it is written (see layout.ts). */
export interface NewPack {
  readonly id: Buffer;
  readonly paths: { readonly temp: string; readonly target: string };
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
 * Reads and seals the small files of an add on the crypto pool's workers, in batches, each written by its worker
 * as one new pack, and hands each batch's outcomes to `accept` in the order the files were queued (batches can
 * come back out of order from several workers). Rows that name the pack must be committed only after `accept`:
 * the pack is durable by then.
 */
export class SmallFileSealer<T extends SmallFileToSeal> {
  readonly #pool: CryptoPool;
  readonly #newPack: () => NewPack;
  readonly #accept: (files: readonly T[], outcomes: readonly SealedSmallFile[], packId: Buffer) => void;
  readonly #queue: T[] = [];
  #queueBytes = 0;
  readonly #inFlight: Promise<void>[] = [];
  #lastAccepted: Promise<void> = Promise.resolve();
  #abandoned = false;

  constructor(
    pool: CryptoPool,
    newPack: () => NewPack,
    accept: (files: readonly T[], outcomes: readonly SealedSmallFile[], packId: Buffer) => void,
  ) {
    this.#pool = pool;
    this.#newPack = newPack;
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

  /**
   * After an error or a cancel: wipes what is queued and waits for the batches out there to settle; those not
   * accepted yet are dropped (the caller removes their packs, which nothing will name).
   */
  async abandon(): Promise<void> {
    this.#abandoned = true;
    for (const { cipher } of this.#queue.splice(0)) cipher.wipe();
    await Promise.allSettled(this.#inFlight.splice(0));
  }

  async #send(): Promise<void> {
    const batch = this.#queue.splice(0);
    this.#queueBytes = 0;
    if (batch.length === 0) return;
    const pack = this.#newPack();
    const sealed = this.#pool.sealSmallFiles({
      paths: batch.map(({ path }) => path),
      sizes: batch.map(({ size }) => size),
      chunkSize: batch[0]?.cipher.header.chunkSize ?? 0,
      padded: batch[0]?.cipher.header.padded ?? false,
      material: keyMaterial(batch),
      pack: pack.paths,
    });
    const accepted = Promise.all([sealed, this.#lastAccepted]).then(([result]) => {
      if (!result.ok) {
        const cause = Object.assign(new Error(`${result.syscall} ${result.code}`), result);
        throw asIoError(cause, 'Could not store the files in the vault');
      }
      // An abandoned batch's pack is removed with the add's other packs that no row names.
      if (!this.#abandoned) this.#accept(batch, result.files, pack.id);
    });
    this.#lastAccepted = accepted.catch(() => undefined);
    accepted.catch(() => undefined); // surfaced by the await below or in flush
    this.#inFlight.push(accepted);
    if (this.#inFlight.length >= IN_FLIGHT) await this.#inFlight.shift();
  }
}
