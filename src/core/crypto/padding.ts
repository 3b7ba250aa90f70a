/**
 * Content padding (FORMAT.md section 5.7): a padded blob's plaintext is the file's N bytes, zeros, and the u64 N,
 * P = Padmé(N + 8) bytes in all, so its stored length shows only which of O(log log N) bits' worth of buckets
 * the file falls in. The blob header's flag says the blob is padded; the record's size says where content ends.
 */
import { IntegrityError } from '../errors.js';

/** How new blobs of a vault are written; chosen at creation, stored as `meta.content_padding`. */
export type ContentPadding = 'none' | 'padme';
export const CONTENT_PADDINGS: readonly ContentPadding[] = ['padme', 'none'];
/** Padmé cost 1.3 % more disk on a real mix of 140,000 files (THREAT-MODEL.md), for sizes that no longer show. */
export const DEFAULT_CONTENT_PADDING: ContentPadding = 'padme';

/** The u64 at the end of a padded blob's plaintext: the file's size. */
export const PADDING_TRAILER_BYTES = 8;

/** ⌊log2 x⌋ for a positive safe integer, exact (Math.log2 rounds near powers of two). */
function floorLog2(x: number): number {
  // Every small file of an add comes here: below 2^32 the native count of leading zeros is exact and cheap.
  if (x < 2 ** 32) return 31 - Math.clz32(x);
  let e = Math.floor(Math.log2(x));
  while (2 ** (e + 1) <= x) e++;
  while (2 ** e > x) e--;
  return e;
}

/**
 * Padmé (Nikitin et al., PETS 2019): rounds `length` up so that only its top ⌊log2 E⌋ + 1 bits below the leading
 * one may be set, E = ⌊log2 length⌋. At most about 12 % larger, and a length in [2^E, 2^(E+1)) takes one of
 * about 2E values. Lengths below 2 are returned as they are.
 */
export function padme(length: number): number {
  if (length < 2) return length;
  const e = floorLog2(length);
  const unit = 2 ** (e - (floorLog2(e) + 1));
  return Math.ceil(length / unit) * unit;
}

/** Plaintext bytes a blob holds for a file of `size` bytes written padded or not. */
export function blobPlaintextSize(size: number, padded: boolean): number {
  return padded ? padme(size + PADDING_TRAILER_BYTES) : size;
}

/** Byte `k` (0 to 7) of the u64 LE `size` that ends a padded blob's plaintext. */
function trailerByte(size: number, k: number): number {
  // By 32-bit halves: shifting `size` itself would cut it to 32 bits.
  const half = k < 4 ? size % 2 ** 32 : Math.floor(size / 2 ** 32);
  return (half >>> (8 * (k % 4))) & 0xff;
}

/**
 * Writes the padding bytes of a file of `size` bytes padded to `total` that fall in `view`, which holds the
 * blob's plaintext from `position`; bytes before `size` are left alone.
 */
export function fillPadding(view: Uint8Array, position: number, size: number, total: number): void {
  const from = Math.max(size, position) - position;
  if (from >= view.byteLength) return;
  const trailerStart = total - PADDING_TRAILER_BYTES - position;
  const trailerFrom = Math.max(from, trailerStart);
  view.fill(0, from, Math.max(from, trailerFrom));
  for (let i = trailerFrom; i < view.byteLength; i++) view[i] = trailerByte(size, i - trailerStart);
}

/** Zeros to compare padding with, natively: a piece at a time, never copied. */
const ZEROS = new Uint8Array(64 * 1024);

/**
 * True when the bytes of `view` (the blob's plaintext from `position`) past `size` are exactly the padding a
 * writer puts there for a blob of `total` plaintext bytes. Bytes before `size` are content and not looked at.
 * Compared in place: a restore checks every file's, and building the expected padding per file was most of that.
 */
function isPadding(view: Uint8Array, position: number, size: number, total: number): boolean {
  const from = Math.max(size, position) - position;
  const trailerFrom = Math.min(view.byteLength, Math.max(from, total - PADDING_TRAILER_BYTES - position));
  for (let at = from; at < trailerFrom; at += ZEROS.length) {
    const end = Math.min(trailerFrom, at + ZEROS.length);
    if (Buffer.compare(view.subarray(at, end), ZEROS.subarray(0, end - at)) !== 0) return false;
  }
  const trailerStart = total - PADDING_TRAILER_BYTES - position;
  for (let i = trailerFrom; i < view.byteLength; i++) {
    if (view[i] !== trailerByte(size, i - trailerStart)) return false;
  }
  return true;
}

/**
 * Which of consecutive views of a blob's plaintext (one per chunk, the first at blob offset `position`) holds a
 * byte past `size` that is not the padding for a blob of `total` plaintext bytes; `undefined` when none does.
 */
export function badPaddingAt(
  views: readonly Uint8Array[],
  position: number,
  size: number,
  total: number,
): number | undefined {
  let at = position;
  for (const [i, view] of views.entries()) {
    if (!isPadding(view, at, size, total)) return i;
    at += view.byteLength;
  }
  return undefined;
}

/** Consecutive views of a blob's plaintext from blob offset `position`, cut at `size`: only the file's bytes. */
export function contentPart(views: readonly Uint8Array[], position: number, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = position;
  for (const view of views) {
    if (at < size) out.push(view.subarray(0, Math.min(view.byteLength, size - at)));
    at += view.byteLength;
  }
  return out;
}

/**
 * The file size a padded blob's plaintext tail claims: `tail` is its last 8 bytes. Not checked against anything.
 */
export function trailerSize(tail: Uint8Array): number {
  const value = Buffer.from(tail.buffer, tail.byteOffset, tail.byteLength).readBigUInt64LE();
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
}

/**
 * Reads a stored `meta.content_padding` value; absent means `none` (vaults made before padding existed). A new
 * scheme would come with a new index schema, so an unknown value under a known schema is damage.
 * @throws {@link IntegrityError} (`malformed`) for any other value.
 */
export function parseContentPadding(value: Uint8Array | undefined): ContentPadding {
  if (value === undefined) return 'none';
  const text = Buffer.from(value).toString('latin1');
  const known = CONTENT_PADDINGS.find((padding) => padding === text);
  if (known === undefined)
    throw new IntegrityError('malformed', { subject: "index's content_padding setting" });
  return known;
}
