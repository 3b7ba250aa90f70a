import type { BatchFailureReason } from './chunk-batch.js';
import { KEY_BYTES, TAG_BYTES } from './constants.js';
import { BLOB_HEADER_BYTES, NONCE_PREFIX_BYTES, type ChunkCipher } from './content.js';
import { blobPlaintextSize } from './padding.js';

/**
 * Per file, in a batch's `material`: content subkey ‖ nonce prefix ‖ blob header. One flat buffer, because
 * posting a few small arrays per file cost more than reading the file.
 */
export const MATERIAL_BYTES = KEY_BYTES + NONCE_PREFIX_BYTES + BLOB_HEADER_BYTES;

/** Writes a file's key material for `cipher` at `at` in `material`. The caller wipes `cipher` afterwards. */
export function putKeyMaterial(cipher: ChunkCipher, material: Uint8Array, at: number): void {
  material.set(cipher.crypto('open').key, at);
  material.set(cipher.header.noncePrefix, at + KEY_BYTES);
  material.set(cipher.header.bytes, at + KEY_BYTES + NONCE_PREFIX_BYTES);
}

/** The parts of file `index`'s key material in a batch's `material` (views, not copies). */
export function keyMaterialOf(
  material: Uint8Array,
  index: number,
): { key: Uint8Array; noncePrefix: Uint8Array; header: Uint8Array } {
  const at = index * MATERIAL_BYTES;
  return {
    key: material.subarray(at, at + KEY_BYTES),
    noncePrefix: material.subarray(at + KEY_BYTES, at + KEY_BYTES + NONCE_PREFIX_BYTES),
    header: material.subarray(at + KEY_BYTES + NONCE_PREFIX_BYTES, at + MATERIAL_BYTES),
  };
}

/**
 * Small files to read and seal into blobs of up to 16 chunks, which are written (those that could be read) to a
 * new pack at `pack` (see writeFileAtomicSync in publish.ts). The worker wipes `material` when done.
 */
export interface SealBatch {
  readonly paths: readonly string[];
  /** Sizes seen when the add was planned; any other size means the file changed. */
  readonly sizes: readonly number[];
  readonly chunkSize: number;
  /** Every blob is padded (section 5.7): its headers in `material` say so too. */
  readonly padded: boolean;
  readonly material: Uint8Array;
  readonly pack: { readonly temp: string; readonly target: string };
}

/** What became of a sealed batch: each file's blob in the pack, or the error that kept the pack from being written. */
export type SealedBatch =
  | { readonly ok: true; readonly files: readonly SealedSmallFile[] }
  | { readonly ok: false; readonly code: string; readonly syscall: string };

/**
 * Blobs of up to 16 chunks to open, each read from its pack, then written to a new temp file (created
 * exclusively, given its modification time, fsynced and closed) only if it authenticates, and published at its
 * target: renamed over it where `replace` says so, else hard-linked only if nothing is there. Each folder that got a file is fsynced
 * once. The worker wipes `material` when done.
 */
export interface OpenBatch {
  readonly temps: readonly string[];
  readonly targets: readonly string[];
  readonly replace: readonly boolean[];
  readonly mtimes: readonly number[];
  /** Per file, the pack holding its blob, where in it the chunk records (after the header) are, and their size. */
  readonly packs: readonly string[];
  readonly offsets: readonly number[];
  readonly lengths: readonly number[];
  readonly chunkSizes: readonly number[];
  /** Per file, its size: plaintext past it is padding, checked and not written. */
  readonly sizes: readonly number[];
  readonly material: Uint8Array;
}

/**
 * How one file went: restored, failed authentication, its target was taken, its pack could not be read (`pack`:
 * the system call that failed on the vault's side), or the file system refused to write it.
 */
export type OpenedSmallFile =
  | { readonly ok: true }
  | { readonly ok: false; readonly failure: BatchFailureReason }
  | { readonly ok: false; readonly exists: true }
  | { readonly ok: false; readonly pack: { readonly code: string; readonly syscall: string } }
  | { readonly ok: false; readonly code: string; readonly syscall: string };

/**
 * Where a sealed file's blob is in the batch's pack, or why the file could not be read: `CHANGED` when it
 * changed while read, otherwise the errno code of the failed read.
 */
export type SealedSmallFile =
  | { readonly ok: true; readonly offset: number; readonly length: number; readonly mtimeMs: number }
  | { readonly ok: false; readonly code: string };

/** How many chunks a file of `size` bytes seals into (FORMAT.md section 5.3). */
export function chunksOf(size: number, chunkSize: number): number {
  return Math.max(1, Math.ceil(size / chunkSize));
}

/**
 * Bytes a file takes in the batch buffer: its whole blob (header, data and padding, a tag per chunk), which also
 * leaves room to read one byte more than expected, to notice growth.
 */
export function smallBlobSlot(size: number, chunkSize: number, padded: boolean): number {
  const total = blobPlaintextSize(size, padded);
  return BLOB_HEADER_BYTES + total + chunksOf(total, chunkSize) * TAG_BYTES;
}
