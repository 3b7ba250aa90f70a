/**
 * The chunk size comes from a blob's header, which anyone who can write the vault folder can rewrite: reading such
 * a blob must not hold more than FORMAT.md 5.1 allows (8 MiB of chunk plaintext at once, or one chunk).
 */
import { randomBytes } from 'node:crypto';

import { afterAll, describe, expect, it } from 'vitest';

import { IN_FLIGHT_BYTES, type BatchJob } from '../../src/core/crypto/chunk-batch.js';
import { TAG_BYTES } from '../../src/core/crypto/constants.js';
import {
  BLOB_HEADER_BYTES,
  ChunkCipher,
  ContentEncryptor,
  encodeBlobHeader,
  runHere,
  type BatchResult,
} from '../../src/core/crypto/content.js';
import type { StripeJob } from '../../src/core/crypto/file-stripe.js';
import { SecretKey } from '../../src/core/crypto/keys.js';
import { CryptoPool } from '../../src/core/crypto/pool.js';
import { IntegrityError } from '../../src/core/errors.js';
import { bufferSource, openBlob } from '../../src/core/vault/blob-io.js';
import { nativeSodium } from '../helpers/backends.js';
import { recordPosts, stripeFiles } from '../helpers/workers.js';

const MIB = 1024 * 1024;
const CEILING = 16 * MIB;
const pool = await CryptoPool.start(2);
afterAll(async () => {
  await pool.close();
});

/** An executor shaped like the pool (16 chunks a batch, 8 in flight) that records the most record bytes it held. */
function measuringExecutor() {
  let holding = 0;
  const executor = {
    batchChunks: 16,
    maxInFlight: 8,
    peak: 0,
    async run(job: BatchJob): Promise<BatchResult> {
      holding += job.records.byteLength;
      executor.peak = Math.max(executor.peak, holding);
      await new Promise((resolve) => setImmediate(resolve));
      holding -= job.records.byteLength;
      return runHere(nativeSodium, job);
    },
    runStripes(): never {
      throw new Error('not used: the source is in memory');
    },
  };
  return executor;
}

describe('memory for a blob whose header claims large chunks', () => {
  it('holds one chunk record at a time for a header rewritten to the 16 MiB ceiling, and reports the damage', async () => {
    const binding = { vaultId: randomBytes(16), fileId: randomBytes(16) };
    const dek = SecretKey.generate(nativeSodium);
    const plaintextSize = 20 * MIB;
    const encryptor = ContentEncryptor.create(nativeSodium, dek, 1, binding);
    const parts: Buffer[] = [];
    encryptor.push(randomBytes(plaintextSize), (bytes) => parts.push(bytes));
    encryptor.finish((bytes) => parts.push(bytes));
    const sealed = Buffer.concat(parts);
    // The same header but for its chunk size, and the blob cut to the size 16 MiB chunks would give.
    const original = encodeBlobHeader({
      chunkSize: 64 * 1024,
      keyId: 1,
      fileId: binding.fileId,
      noncePrefix: sealed.subarray(36, 52),
    });
    expect(original.bytes.equals(sealed.subarray(0, BLOB_HEADER_BYTES))).toBe(true);
    const forged = encodeBlobHeader({ ...original, chunkSize: CEILING });
    const chunkCount = Math.ceil(plaintextSize / CEILING);
    const blob = Buffer.concat([
      forged.bytes,
      sealed.subarray(BLOB_HEADER_BYTES, BLOB_HEADER_BYTES + plaintextSize + chunkCount * TAG_BYTES),
    ]);
    const executor = measuringExecutor();
    const cipher = new ChunkCipher(nativeSodium, dek, binding, forged);
    await expect(
      openBlob({
        place: { sodium: nativeSodium, executor },
        cipher,
        source: bufferSource(blob),
        chunkCount,
        plaintextSize,
        sink: 'discard',
      }),
    ).rejects.toBeInstanceOf(IntegrityError);
    expect(executor.peak).toBeGreaterThan(0);
    expect(executor.peak).toBeLessThanOrEqual(CEILING + TAG_BYTES);
    cipher.wipe();
  });

  it('keeps the worker stripes of a blob with 4 MiB chunks within 8 MiB of chunk buffers together', async () => {
    const chunkSize = 4 * MIB;
    const posts = recordPosts();
    const files = stripeFiles(Buffer.alloc(3 * chunkSize, 1));
    try {
      const binding = { vaultId: randomBytes(16), fileId: randomBytes(16) };
      const header = encodeBlobHeader({
        chunkSize,
        keyId: 1,
        fileId: binding.fileId,
        noncePrefix: randomBytes(16),
      });
      const cipher = new ChunkCipher(nativeSodium, SecretKey.generate(nativeSodium), binding, header);
      const { sourceFd, targetFd } = files;
      const outcome = await pool.runStripes({
        ...cipher.crypto('seal'),
        chunkCount: 3,
        lastLength: chunkSize,
        sourceFd,
        targetFd,
      });
      expect(outcome).toEqual({ kind: 'done' });
      cipher.wipe();
    } finally {
      posts.stop();
      files.close();
    }
    const stripes = posts.posted.flatMap((message) => {
      const { stripe } = message as { stripe?: StripeJob };
      return stripe ? [stripe] : [];
    });
    expect(stripes.length).toBeGreaterThan(0);
    const held = stripes.reduce((sum, stripe) => sum + stripe.batchChunks * stripe.chunkSize, 0);
    expect(held).toBeLessThanOrEqual(IN_FLIGHT_BYTES);
  });
});
