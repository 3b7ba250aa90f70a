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
 * A whole blob's authenticated plaintext read as the contents of a file of `size` bytes (FORMAT.md section 5.7),
 * in memory: the reference the engine's streaming readers and the vectors are checked against.
 * @throws {@link IntegrityError} `truncated` when the plaintext is shorter than the size pads to, `malformed`
 * when it is longer or its padding is not exactly what a writer puts there.
 */
export function fileContent(plaintext: Buffer, size: number, padded: boolean): Buffer {
  const expected = blobPlaintextSize(size, padded);
  const where = { subject: 'file contents' };
  if (plaintext.length < expected) throw new IntegrityError('truncated', where);
  if (plaintext.length !== expected) throw new IntegrityError('malformed', where);
  if (badPaddingAt([plaintext], 0, size, expected) !== undefined)
    throw new IntegrityError('malformed', where);
  return plaintext.subarray(0, size);
}

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
  const header = parseBlobHeader(blob, binding);
  const { plaintextSize } = blobLayout(blob.length, header.chunkSize, binding);
  if (keyFor(header.keyId) === undefined)
    throw new IntegrityError('unknown-key', { subject: 'file contents' });
  const expected = blobPlaintextSize(size, header.padded);
  if (plaintextSize < expected) throw new IntegrityError('truncated', { subject: 'file contents' });
  if (plaintextSize !== expected) throw new IntegrityError('malformed', { subject: 'file contents' });
  const plaintext: Buffer[] = [];
  const decryptor = new ContentDecryptor(sodium, keyFor, binding);
  decryptor.push(blob, (bytes) => plaintext.push(bytes));
  decryptor.finish((bytes) => plaintext.push(bytes));
  return fileContent(Buffer.concat(plaintext), size, header.padded);
}
