import { TAG_BYTES } from '../crypto/constants.js';
import { BLOB_HEADER_BYTES, type ChunkCipher } from '../crypto/content.js';
import type { CryptoPool } from '../crypto/pool.js';
import { MATERIAL_BYTES } from '../crypto/small-file-protocol.js';
import { IntegrityError } from '../errors.js';
import { asIoError, removeQuietly, tempPathBeside } from './durable.js';
import { openStoredBlob } from './read.js';
import type { Session } from './session.js';
import type { TreeNode } from './tree.js';

/** A file decrypted into its temp file, waiting to be made durable and published with the rest of its batch. */
export interface Staged {
  readonly node: TreeNode;
  readonly vaultPath: string;
  readonly target: string;
  readonly temp: string;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/** Files per batch sent to the worker, and batches out at once. */
const BATCH_FILES = 64;
const IN_FLIGHT = 2;

interface Queued {
  readonly node: TreeNode;
  readonly vaultPath: string;
  readonly target: string;
  readonly temp: string;
  readonly cipher: ChunkCipher;
  readonly records: Uint8Array;
  readonly material: Uint8Array;
}

const done = (): Promise<void> => Promise.resolve();

/** What the restore job does with the stager's results. */
export interface StagerHooks {
  problem(vaultPath: string, error: unknown): void;
  publish(staged: Staged[]): Promise<void>;
}

/** One buffer of its own (to be transferred) holding the arrays back to back; `wipe` zeroes the originals. */
function concat(arrays: readonly Uint8Array[], wipe: boolean): Uint8Array {
  const out = new Uint8Array(arrays.reduce((sum, array) => sum + array.byteLength, 0));
  let at = 0;
  for (const array of arrays) {
    out.set(array, at);
    if (wipe) array.fill(0);
    at += array.byteLength;
  }
  return out;
}

/**
 * Stages small files of a restore on the crypto pool's workers: the main thread fetches and checks each blob and
 * hands over its chunk with the key material; the worker opens it and writes, stamps and fsyncs the temp file.
 * Batches come back in order and go to `publish`, one after another.
 */
export class SmallFileStager {
  readonly #queue: Queued[] = [];
  readonly #inFlight: Promise<void>[] = [];
  #publishing: Promise<void> = Promise.resolve();
  #abandoned = false;
  readonly #session: Session;
  readonly #pool: CryptoPool;
  readonly #hooks: StagerHooks;

  constructor(session: Session, pool: CryptoPool, hooks: StagerHooks) {
    this.#session = session;
    this.#pool = pool;
    this.#hooks = hooks;
  }

  /**
   * Queues a file for the worker.
   * @returns false when its blob is not a single chunk (only a foreign writer makes those): stage it yourself.
   * @throws {@link IoError} from an earlier batch whose files could not be written.
   */
  async add(node: TreeNode, vaultPath: string, target: string): Promise<boolean> {
    let blob;
    try {
      blob = await openStoredBlob(this.#session, node);
    } catch (error) {
      if (!(error instanceof IntegrityError)) throw error;
      this.#hooks.problem(vaultPath, error);
      return true;
    }
    try {
      if (blob.layout.chunkCount !== 1) return false;
      let records: Uint8Array;
      if (blob.inline) records = blob.inline.subarray(BLOB_HEADER_BYTES);
      else {
        records = new Uint8Array(blob.layout.plaintextSize + TAG_BYTES);
        const got = await blob.source.readv([records], BLOB_HEADER_BYTES);
        // A blob that shrank under us fails authentication like any other damage.
        if (got !== records.byteLength) records.fill(0, got);
      }
      const { cipher } = blob;
      const material = new Uint8Array(MATERIAL_BYTES);
      const { key } = cipher.crypto('open');
      material.set(key);
      material.set(cipher.header.noncePrefix, key.byteLength);
      material.set(cipher.header.bytes, key.byteLength + cipher.header.noncePrefix.byteLength);
      const temp = tempPathBeside(target, 'restore');
      this.#queue.push({ node, vaultPath, target, temp, cipher, records, material });
    } finally {
      await blob.close();
    }
    if (this.#queue.length >= BATCH_FILES) await this.#send();
    return true;
  }

  /** Sends what is queued and waits until every batch is published. */
  async flush(): Promise<void> {
    await this.#send();
    for (let next = this.#inFlight.shift(); next; next = this.#inFlight.shift()) await next;
  }

  /** After a cancel or an error: nothing more is published, and every temp file the worker writes is removed. */
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
      mtimes: files.map((file) => file.node.mtime),
      lengths: files.map((file) => file.records.byteLength),
      chunkSize: files[0]?.cipher.header.chunkSize ?? 0,
      // Records are ciphertext; only the key material needs wiping.
      records: concat(
        files.map((file) => file.records),
        false,
      ),
      material: concat(
        files.map((file) => file.material),
        true,
      ),
    });
    const published = Promise.all([opened, this.#publishing]).then(async ([results]) => {
      const staged = await this.#collect(files, results);
      if (staged.length > 0) await this.#hooks.publish(staged);
    });
    this.#publishing = published.catch(() => undefined);
    published.catch(() => undefined); // surfaced by the awaits below and in flush
    this.#inFlight.push(published);
    if (this.#inFlight.length >= IN_FLIGHT) await this.#inFlight.shift();
  }

  async #collect(
    files: readonly Queued[],
    results: Awaited<ReturnType<CryptoPool['openSmallFiles']>>,
  ): Promise<Staged[]> {
    const staged: Staged[] = [];
    let failed: { target: string; code: string; syscall: string } | undefined;
    files.forEach((file, i) => {
      const result = results[i];
      if (result?.ok) {
        staged.push({ ...file, sync: done, close: done });
      } else if (result && 'failure' in result) {
        this.#hooks.problem(file.vaultPath, file.cipher.damaged({ index: 0, reason: result.failure }));
      } else {
        failed ??= { target: file.target, code: result?.code ?? 'EIO', syscall: result?.syscall ?? 'write' };
      }
    });
    if (failed || this.#abandoned) {
      for (const file of staged) await removeQuietly(file.temp);
      if (failed) {
        const cause = Object.assign(new Error(`${failed.syscall} ${failed.code}`), failed);
        throw asIoError(cause, `Could not write "${failed.target}"`);
      }
      return [];
    }
    return staged;
  }
}
