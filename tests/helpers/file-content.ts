import { IntegrityError } from '../../src/core/errors.js';
import { badPaddingAt, blobPlaintextSize } from '../../src/core/crypto/padding.js';

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
