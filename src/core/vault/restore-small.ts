import { TAG_BYTES } from '../crypto/constants.js';
import { BLOB_HEADER_BYTES, type ChunkCipher } from '../crypto/content.js';
import { systemError } from '../crypto/file-stripe.js';
import type { CryptoPool } from '../crypto/pool.js';
import { MATERIAL_BYTES, putKeyMaterial } from '../crypto/small-file-protocol.js';
import { AlreadyExistsError, IntegrityError } from '../errors.js';
import { asIoError } from './durable.js';
import { explainDamage, openStoredBlob, unopenedBlob } from './read.js';
import type { RestoreRecord } from './restore-record.js';
import type { Session } from './session.js';
import type { TreeNode } from './tree.js';

/** A file in the way of a restore that may not replace it: what the person sees, and what to do. */
export function notReplaced(target: string): AlreadyExistsError {
  return new AlreadyExistsError(
    `"${target}" already exists; it was left untouched. To replace it, restore again and choose to replace existing files.`,
  );
}

/**
 * Files per batch sent to the worker, and batches out at once. Fewer, larger batches than 64 x 2: each post to a
 * busy 2-core machine's worker cost the main thread up to 2 ms (measured: a 10,000-file restore, in-process,
 * 0.63-0.70 s to 0.46-0.56 s warm).
 */
const BATCH_FILES = 128;
const IN_FLIGHT = 3;

/** A worker's failed system call as the error Node would have thrown on this thread. */
function systemErrorOf(failed: { readonly code: string; readonly syscall: string }): Error {
  return systemError({ message: `${failed.syscall} ${failed.code}`, ...failed });
}

/** A small file the workers wrote and published. */
export interface RestoredFile {
  readonly node: TreeNode;
  readonly vaultPath: string;
  readonly target: string;
}

interface Queued extends RestoredFile {
  readonly temp: string;
  readonly replace: boolean;
  readonly cipher: ChunkCipher;
  /** The pack holding its blob, and where in it the chunk record is. */
  readonly pack: string;
  readonly offset: number;
  readonly length: number;
  readonly material: Uint8Array;
}

/** What the restore job does with the results: report problems, and account for (and announce) restored files. */
export interface RestorerHooks {
  problem(vaultPath: string, error: unknown): void;
  restored(files: readonly RestoredFile[]): Promise<void>;
  /** The system refused the file's path as too long: a problem for that file, not a failed restore. */
  tooLong(vaultPath: string, target: string): void;
}

/** One buffer of its own (to be transferred) holding the arrays back to back; zeroes the originals. */
function concatAndWipe(arrays: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(arrays.reduce((sum, array) => sum + array.byteLength, 0));
  let at = 0;
  for (const array of arrays) {
    out.set(array, at);
    array.fill(0);
    at += array.byteLength;
  }
  return out;
}

/**
 * Restores small files on the crypto pool's workers: the main thread finds and checks each blob's header and hands
 * over where its chunk is with the key material; a worker reads and authenticates it, and only then writes, stamps
 * and fsyncs a temp file and publishes it at its target (see small-files.ts). Results are taken in the order the
 * batches were sent.
 */
export class SmallFileRestorer {
  readonly #queue: Queued[] = [];
  readonly #inFlight: Promise<void>[] = [];
  #lastTaken: Promise<void> = Promise.resolve();
  #abandoned = false;
  readonly #session: Session;
  readonly #pool: CryptoPool;
  readonly #record: RestoreRecord;
  readonly #hooks: RestorerHooks;

  constructor(session: Session, pool: CryptoPool, record: RestoreRecord, hooks: RestorerHooks) {
    this.#session = session;
    this.#pool = pool;
    this.#record = record;
    this.#hooks = hooks;
  }

  /**
   * Queues a file for the worker.
   * @returns false when its blob is not in a pack (index schema 1 kept small files' blobs inline): stage it
   * yourself.
   * @throws {@link IoError} from an earlier batch whose files could not be written.
   */
  async add(node: TreeNode, vaultPath: string, target: string, replace: boolean): Promise<boolean> {
    let blob;
    try {
      blob = await openStoredBlob(this.#session, node);
    } catch (error) {
      if (!(error instanceof IntegrityError)) throw error;
      this.#hooks.problem(vaultPath, error);
      return true;
    }
    try {
      const { cipher, location, layout } = blob;
      if (location.kind !== 'pack') return false;
      const material = new Uint8Array(MATERIAL_BYTES);
      putKeyMaterial(cipher, material, 0);
      this.#queue.push({
        node,
        vaultPath,
        target,
        temp: this.#record.tempPathFor(target),
        replace,
        cipher,
        pack: this.#session.packs.path(location.packId),
        offset: location.offset + BLOB_HEADER_BYTES,
        length: layout.plaintextSize + layout.chunkCount * TAG_BYTES,
        material,
      });
    } finally {
      await blob.close();
    }
    if (this.#queue.length >= BATCH_FILES) await this.#send();
    return true;
  }

  /** Sends what is queued and waits until every batch is done. */
  async flush(): Promise<void> {
    await this.#send();
    for (let next = this.#inFlight.shift(); next; next = this.#inFlight.shift()) await next;
  }

  /**
   * After a cancel or an error: nothing more is sent, and what comes back is not reported. (Files a worker had
   * already published stay: each one is complete and authenticated.)
   */
  async abandon(): Promise<void> {
    this.#abandoned = true;
    for (const queued of this.#queue.splice(0)) queued.material.fill(0);
    await Promise.allSettled(this.#inFlight.splice(0));
  }

  async #send(): Promise<void> {
    const files = this.#queue.splice(0);
    if (files.length === 0) return;
    const opened = this.#pool.openSmallFiles({
      temps: files.map((file) => file.temp),
      targets: files.map((file) => file.target),
      replace: files.map((file) => file.replace),
      mtimes: files.map((file) => file.node.mtime),
      packs: files.map((file) => file.pack),
      offsets: files.map((file) => file.offset),
      lengths: files.map((file) => file.length),
      chunkSizes: files.map((file) => file.cipher.header.chunkSize),
      sizes: files.map((file) => file.node.size),
      material: concatAndWipe(files.map((file) => file.material)),
    });
    const taken = Promise.all([opened, this.#lastTaken]).then(([results]) => this.#take(files, results));
    this.#lastTaken = taken.catch(() => undefined);
    taken.catch(() => undefined); // surfaced by the awaits below and in flush
    this.#inFlight.push(taken);
    if (this.#inFlight.length >= IN_FLIGHT) await this.#inFlight.shift();
  }

  /**
   * Reports a batch's results.
   * @throws {@link IoError} when the file system refused a file (the others of the batch are reported first).
   */
  async #take(
    files: readonly Queued[],
    results: Awaited<ReturnType<CryptoPool['openSmallFiles']>>,
  ): Promise<void> {
    if (this.#abandoned) return;
    const restored: RestoredFile[] = [];
    /** What the first file the file system refused ends the restore with. */
    let failed: { error: unknown } | undefined;
    for (const [i, file] of files.entries()) {
      const result = results[i];
      if (result?.ok) restored.push(file);
      else if (result && 'failure' in result) {
        const damage = file.cipher.damaged({ index: 0, reason: result.failure });
        this.#hooks.problem(file.vaultPath, await explainDamage(this.#session, file.node, damage));
      } else if (result && 'exists' in result) {
        this.#hooks.problem(file.vaultPath, notReplaced(file.target));
      } else if (result && 'pack' in result) {
        // Gone or not a regular file since the header was read from it: damage to that file, as on this thread.
        const error = unopenedBlob(this.#session, file.node, systemErrorOf(result.pack));
        if (error instanceof IntegrityError) this.#hooks.problem(file.vaultPath, error);
        else failed ??= { error };
      } else if (result?.code === 'ENAMETOOLONG') {
        this.#hooks.tooLong(file.vaultPath, file.target);
      } else {
        const cause = systemErrorOf({ code: result?.code ?? 'EIO', syscall: result?.syscall ?? 'write' });
        failed ??= { error: asIoError(cause, `Could not write "${file.target}"`) };
      }
    }
    // A file the file system refused is the news: it goes first, whatever befalls the report of the others.
    const reporting = this.#hooks.restored(restored);
    if (failed) {
      await reporting.catch(() => undefined);
      throw failed.error;
    }
    await reporting;
  }
}
