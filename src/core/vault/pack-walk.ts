import { TAG_BYTES } from '../crypto/constants.js';
import {
  BLOB_HEADER_BYTES,
  BLOB_MAGIC,
  ChunkCipher,
  claimedFileId,
  parseBlobHeader,
} from '../crypto/content.js';
import { IntegrityError } from '../errors.js';
import type { Session } from './session.js';

/**
 * Places tried as the end of a blob's final chunk: where the next blob's magic starts, or the end of the region.
 * Ciphertext that happens to hold the magic costs one more try; bounded so bytes planted full of it cannot make a
 * walk take quadratic time.
 */
const MAX_FINAL_TRIES = 8;

/** A complete blob found in a pack: where it is, the file it belongs to, and its plaintext size. */
export interface WalkedBlob {
  readonly offset: number;
  readonly length: number;
  readonly fileId: Buffer;
  readonly plaintextSize: number;
}

/** Bytes of a pack that are not a complete blob of this vault. */
export interface ByteRange {
  readonly offset: number;
  readonly length: number;
}

/**
 * Splits `pack[start, end)` into the complete blobs of this vault it holds, each authenticated chunk by chunk with
 * the file id in its own header (FORMAT.md section 8.4: a pack is complete blobs one after another, so each blob
 * ends where the next one's magic starts, or at the end). Whatever is not such a blob is returned as `other`.
 */
export function walkPack(
  session: Session,
  pack: Buffer,
  start: number,
  end: number,
): { blobs: WalkedBlob[]; other: ByteRange[] } {
  const blobs: WalkedBlob[] = [];
  const other: ByteRange[] = [];
  let at = start;
  while (at < end) {
    const blob = blobAt(session, pack, at, end);
    if (blob) {
      blobs.push(blob);
      at += blob.length;
      continue;
    }
    const next = pack.indexOf(BLOB_MAGIC, at + 1);
    const stop = next === -1 || next > end ? end : next;
    const last = other[other.length - 1];
    if (last && last.offset + last.length === at)
      other[other.length - 1] = { ...last, length: stop - last.offset };
    else other.push({ offset: at, length: stop - at });
    at = stop;
  }
  return { blobs, other };
}

/**
 * Whether a blob header in `ranges` (bytes a walk found no blob of this vault in) names a key id the session's
 * keyring lacks: a blob a newer header's key may open (FORMAT.md 4.7), so not proof that the bytes hold nothing.
 */
export function namesUnknownKey(session: Session, pack: Buffer, ranges: readonly ByteRange[]): boolean {
  for (const { offset, length } of ranges) {
    const end = offset + length;
    for (
      let at = pack.indexOf(BLOB_MAGIC, offset);
      at !== -1 && at < end;
      at = pack.indexOf(BLOB_MAGIC, at + 1)
    ) {
      const bytes = pack.subarray(at, at + BLOB_HEADER_BYTES);
      try {
        const header = parseBlobHeader(bytes, {
          vaultId: session.keys.vaultId,
          fileId: claimedFileId(bytes),
        });
        if (!session.keys.keyring.find(header.keyId)) return true;
      } catch (error) {
        if (!(error instanceof IntegrityError)) throw error;
      }
    }
  }
  return false;
}

/**
 * Whether `pack[blob.offset, blob.offset + blob.length)` is exactly one complete, authentic blob of this vault for
 * `blob.fileId`: what a row must point at before its bytes are copied anywhere (compaction).
 */
export function holdsBlob(
  session: Session,
  pack: Buffer,
  blob: { readonly offset: number; readonly length: number; readonly fileId: Buffer },
): boolean {
  const end = blob.offset + blob.length;
  if (end > pack.length) return false;
  const found = blobAt(session, pack, blob.offset, end);
  return found?.length === blob.length && found.fileId.equals(blob.fileId);
}

/** The complete, authentic blob of this vault that starts at `at` and ends by `end`, if there is one. */
function blobAt(session: Session, pack: Buffer, at: number, end: number): WalkedBlob | undefined {
  if (end - at < BLOB_HEADER_BYTES + TAG_BYTES) return undefined;
  const fileId = claimedFileId(pack.subarray(at, at + BLOB_HEADER_BYTES));
  const binding = { vaultId: session.keys.vaultId, fileId };
  let cipher: ChunkCipher;
  try {
    const header = parseBlobHeader(pack.subarray(at, at + BLOB_HEADER_BYTES), binding);
    const dek = session.keys.keyring.find(header.keyId);
    if (!dek) return undefined;
    cipher = new ChunkCipher(session.sodium, dek, binding, header);
  } catch (error) {
    if (error instanceof IntegrityError) return undefined;
    throw error;
  }
  try {
    const record = cipher.recordSize;
    let position = at + BLOB_HEADER_BYTES;
    for (let index = 0; ; index++) {
      if (
        position + record <= end &&
        opens(cipher, index, pack.subarray(position, position + record), false)
      ) {
        position += record;
        continue;
      }
      const limit = Math.min(end, position + record);
      for (const stop of finalEnds(pack, position + TAG_BYTES, limit)) {
        // An empty final chunk after others is malformed (FORMAT.md section 5.2), never a writer's.
        if (stop - position === TAG_BYTES && index > 0) continue;
        if (opens(cipher, index, pack.subarray(position, stop), true)) {
          const plaintextSize = index * cipher.header.chunkSize + (stop - position - TAG_BYTES);
          return { offset: at, length: stop - at, fileId, plaintextSize };
        }
      }
      return undefined;
    }
  } finally {
    cipher.wipe();
  }
}

/** Candidate ends of a final chunk in `[from, limit]`: where each next blob's magic starts, then `limit`. */
function* finalEnds(pack: Buffer, from: number, limit: number): Generator<number> {
  let tries = 0;
  let next = pack.indexOf(BLOB_MAGIC, from);
  for (; next !== -1 && next < limit; next = pack.indexOf(BLOB_MAGIC, next + 1)) {
    if (++tries > MAX_FINAL_TRIES) return;
    yield next;
  }
  // A full-size final chunk, or one that ends the region.
  yield limit;
}

function opens(cipher: ChunkCipher, index: number, record: Buffer, final: boolean): boolean {
  try {
    cipher.open(index, record, final);
    return true;
  } catch (error) {
    if (error instanceof IntegrityError) return false;
    throw error;
  }
}
