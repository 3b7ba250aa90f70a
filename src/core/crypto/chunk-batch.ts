import { VaultLockedError } from '../errors.js';
import { NONCE_BYTES, TAG_BYTES } from './constants.js';
import type { SodiumBackend } from './sodium.js';

/**
 * What every batch of one blob shares: the operation, the blob's content subkey (a worker wipes its copy when done)
 * and what each chunk's nonce and AAD are made from. Never log it.
 */
export interface BlobCrypto {
  readonly op: 'seal' | 'open';
  readonly key: Uint8Array;
  /** The blob header's 16-byte nonce prefix; chunk i's nonce is prefix ‖ uint64 i. */
  readonly noncePrefix: Uint8Array;
  /** Label ‖ blob header; chunk i's AAD is this ‖ uint64 i ‖ final flag. */
  readonly aadPrefix: Uint8Array;
  readonly chunkSize: number;
}

/** Which consecutive chunks of a blob a batch covers. */
export interface BatchPlan {
  readonly firstIndex: number;
  readonly count: number;
  /** Plaintext bytes in the batch's last chunk (every other chunk holds `chunkSize`). */
  readonly lastLength: number;
  /** Whether the batch's last chunk is the blob's final chunk. */
  readonly endsWithFinal: boolean;
}

/**
 * A run of consecutive chunks of one blob to seal or open, in place. Plain data, so it can be posted (and its
 * buffer transferred) to a worker thread. Never log a job.
 *
 * `records` is laid out as the blob stores the chunks: chunk i occupies `chunkSize + 16` bytes from offset
 * `i × (chunkSize + 16)` (the last chunk `lastLength + 16`), its data first and its tag in the last 16 bytes. To
 * seal, the data slots hold plaintext and the tag slots are free; sealing turns the buffer into the blob's bytes.
 * To open, the buffer holds the blob's bytes; opening leaves each chunk's plaintext in its data slot.
 */
export interface BatchJob extends BlobCrypto, BatchPlan {
  readonly records: Uint8Array;
}

/**
 * Plaintext bytes of one blob's chunks held in memory at once, over every batch in flight or stripe running, unless
 * one chunk alone is larger (FORMAT.md 5.1). The chunk size comes from the blob's header, which anyone can rewrite:
 * batches of 16 chunks at the 16 MiB ceiling, 8 of them in flight, would be 2 GiB.
 */
export const IN_FLIGHT_BYTES = 8 * 1024 * 1024;

/** How many chunks make a batch, and how many batches may be in flight (or stripes run) at once. */
export interface BatchShape {
  readonly batchChunks: number;
  readonly maxInFlight: number;
}

/**
 * The batch shape for a blob of `chunkSize`: what the executor `wants`, shrunk (fewer chunks per batch first, then
 * fewer batches) until it holds at most {@link IN_FLIGHT_BYTES}, or one chunk.
 */
export function batchShape(chunkSize: number, wants: BatchShape): BatchShape {
  const batchChunks = Math.max(
    1,
    Math.min(wants.batchChunks, Math.floor(IN_FLIGHT_BYTES / (wants.maxInFlight * chunkSize))),
  );
  const maxInFlight = Math.max(
    1,
    Math.min(wants.maxInFlight, Math.floor(IN_FLIGHT_BYTES / (batchChunks * chunkSize))),
  );
  return { batchChunks, maxInFlight };
}

/**
 * Splits a blob of `chunkCount` chunks, the last holding `lastLength` plaintext bytes, into batches of `perBatch`
 * chunks, and yields batch numbers `first`, `first + stride`, `first + 2 × stride`… of them: all of them by
 * default, or one worker's share.
 */
export function* batchPlans(
  blob: { chunkCount: number; chunkSize: number; lastLength: number },
  perBatch: number,
  first = 0,
  stride = 1,
): Generator<BatchPlan> {
  const { chunkCount, chunkSize, lastLength } = blob;
  for (let firstIndex = first * perBatch; firstIndex < chunkCount; firstIndex += stride * perBatch) {
    const count = Math.min(perBatch, chunkCount - firstIndex);
    const endsWithFinal = firstIndex + count === chunkCount;
    yield { firstIndex, count, lastLength: endsWithFinal ? lastLength : chunkSize, endsWithFinal };
  }
}

export type BatchFailureReason = 'truncated' | 'trailing-data' | 'malformed' | 'tampered';

/** How a batch went. On failure, chunks before `index` were opened; that chunk and later ones were not. */
export interface BatchOutcome {
  readonly failure?: { readonly index: number; readonly reason: BatchFailureReason };
}

/** Where chunk `i` of a batch sits in its records buffer. */
function chunkSpan(job: Pick<BatchJob, 'chunkSize' | 'count' | 'lastLength'>, i: number) {
  const start = i * (job.chunkSize + TAG_BYTES);
  const length = i === job.count - 1 ? job.lastLength : job.chunkSize;
  return { start, length, tagStart: start + length };
}

/** The records buffer size a batch needs. */
export function recordsLength(job: Pick<BatchJob, 'chunkSize' | 'count' | 'lastLength'>): number {
  return (job.count - 1) * (job.chunkSize + TAG_BYTES) + job.lastLength + TAG_BYTES;
}

/** The plaintext of the first `count` chunks of an opened (or to-be-sealed) batch, as views into its records. */
export function plaintextViews(
  job: Pick<BatchJob, 'chunkSize' | 'count' | 'lastLength' | 'records'>,
  count = job.count,
): Uint8Array[] {
  const views: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const { start, length } = chunkSpan(job, i);
    if (length > 0) views.push(job.records.subarray(start, start + length));
  }
  return views;
}

/** Reusable nonce and AAD buffers for one batch: only the index and flag bytes change from chunk to chunk. */
class ChunkParams {
  readonly nonce = new Uint8Array(NONCE_BYTES);
  readonly aad: Uint8Array;
  readonly #aadView: DataView;
  readonly #nonceView: DataView;

  constructor(job: BatchJob) {
    this.nonce.set(job.noncePrefix);
    this.aad = new Uint8Array(job.aadPrefix.byteLength + 9);
    this.aad.set(job.aadPrefix);
    this.#aadView = new DataView(this.aad.buffer);
    this.#nonceView = new DataView(this.nonce.buffer);
  }

  set(index: number, final: boolean): void {
    const big = BigInt(index);
    this.#nonceView.setBigUint64(NONCE_BYTES - 8, big, true);
    this.#aadView.setBigUint64(this.aad.byteLength - 9, big, true);
    this.aad[this.aad.byteLength - 1] = final ? 1 : 0;
  }
}

function seal(sodium: SodiumBackend, job: BatchJob): BatchOutcome {
  const params = new ChunkParams(job);
  for (let i = 0; i < job.count; i++) {
    const { start, length, tagStart } = chunkSpan(job, i);
    const data = job.records.subarray(start, start + length);
    params.set(job.firstIndex + i, job.endsWithFinal && i === job.count - 1);
    sodium.aeadEncryptDetached(
      data,
      job.records.subarray(tagStart, tagStart + TAG_BYTES),
      data,
      params.aad,
      params.nonce,
      job.key,
    );
  }
  return {};
}

function open(sodium: SodiumBackend, job: BatchJob): BatchOutcome {
  const params = new ChunkParams(job);
  // Decrypted beside the ciphertext, then copied over it: a failed chunk keeps its ciphertext for the diagnosis.
  const scratch = new Uint8Array(job.count > 1 ? job.chunkSize : job.lastLength);
  for (let i = 0; i < job.count; i++) {
    const index = job.firstIndex + i;
    const final = job.endsWithFinal && i === job.count - 1;
    const { start, length, tagStart } = chunkSpan(job, i);
    const data = job.records.subarray(start, start + length);
    const tag = job.records.subarray(tagStart, tagStart + TAG_BYTES);
    const plaintext = scratch.subarray(0, length);
    params.set(index, final);
    if (sodium.aeadDecryptDetached(plaintext, data, tag, params.aad, params.nonce, job.key)) {
      if (final && length === 0 && index > 0) return { failure: { index, reason: 'malformed' } };
      data.set(plaintext);
      continue;
    }
    // Only on failure: try the other flag to tell a cut-off or extended blob from a damaged one.
    params.set(index, !final);
    const other = sodium.aeadDecryptDetached(plaintext, data, tag, params.aad, params.nonce, job.key);
    plaintext.fill(0);
    return { failure: { index, reason: other ? (final ? 'truncated' : 'trailing-data') : 'tampered' } };
  }
  scratch.fill(0);
  return {};
}

/**
 * Seals or opens a batch in place, in the calling thread; the same code runs inside the crypto worker threads.
 * @throws {@link VaultLockedError} for a wiped key (all zeros, or moved to another thread), which must never seal
 * or open anything: a job keeps a reference to its blob's key, which locking zeroes.
 */
export function runBatch(sodium: SodiumBackend, job: BatchJob): BatchOutcome {
  if (job.key.every((byte) => byte === 0)) throw new VaultLockedError();
  return job.op === 'seal' ? seal(sodium, job) : open(sodium, job);
}
