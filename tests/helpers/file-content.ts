import { IntegrityError } from '../../src/core/errors.js';
import {
  blobLayout,
  ContentDecryptor,
  parseBlobHeader,
  type ContentBinding,
} from '../../src/core/crypto/content.js';
import type { SecretKey } from '../../src/core/crypto/keys.js';
import { badPaddingAt, blobPlaintextSize } from '../../src/core/crypto/padding.js';
import type { SodiumBackend } from '../../src/core/crypto/sodium.js';

/**
 * A blob read through a file's record of `size` bytes, with its checks in FORMAT.md 5.4's order: the header, the
 * layout its length gives (5.3), the key, the plaintext length against the size, and only then the chunks and the
 * padding. The first failure is the one thrown, as a reader must report it.
 * @throws {@link IntegrityError} at the first check that fails.
 */
export function readThroughRecord(
  sodium: SodiumBackend,
  blob: Buffer,
  size: number,
  keyFor: (keyId: number) => SecretKey | undefined,
  binding: ContentBinding,
): Buffer {
  const where = { subject: 'file contents' };
  const header = parseBlobHeader(blob, binding);
  const { plaintextSize } = blobLayout(blob.length, header.chunkSize, binding);
  if (keyFor(header.keyId) === undefined) throw new IntegrityError('unknown-key', where);
  const expected = blobPlaintextSize(size, header.padded);
  if (plaintextSize < expected) throw new IntegrityError('truncated', where);
  if (plaintextSize !== expected) throw new IntegrityError('malformed', where);
  const parts: Buffer[] = [];
  const decryptor = new ContentDecryptor(sodium, keyFor, binding);
  decryptor.push(blob, (bytes) => parts.push(bytes));
  decryptor.finish((bytes) => parts.push(bytes));
  // The plaintext's length is the layout's, checked above: what is left is the padding and the size at its end.
  const plaintext = Buffer.concat(parts);
  if (badPaddingAt([plaintext], 0, size, expected) !== undefined)
    throw new IntegrityError('malformed', where);
  return plaintext.subarray(0, size);
}
