import { randomBytes } from 'node:crypto';

import { afterAll, describe, expect, it } from 'vitest';

import type { BatchJob } from '../../src/core/crypto/chunk-batch.js';
import { ChunkCipher, encodeBlobHeader, runHere } from '../../src/core/crypto/content.js';
import { SecretKey } from '../../src/core/crypto/keys.js';
import { CryptoPool } from '../../src/core/crypto/pool.js';
import { flipped, nativeSodium } from '../helpers/backends.js';
import { recordPosts, stripeFiles } from '../helpers/workers.js';

const CS = 4096;
const pool = await CryptoPool.start(2);
afterAll(async () => {
  await pool.close();
});

/** A job sealing one 10-byte chunk, with its own copy of the key. */
function oneChunkJob(c: ChunkCipher): BatchJob {
  return c.job(
    'seal',
    { firstIndex: 0, count: 1, lastLength: 10, endsWithFinal: true },
    new Uint8Array(26),
    true,
  );
}

function cipher(): ChunkCipher {
  const binding = { vaultId: randomBytes(16), fileId: randomBytes(16) };
  const header = encodeBlobHeader({
    chunkSize: CS,
    keyId: 1,
    fileId: binding.fileId,
    noncePrefix: randomBytes(16),
  });
  return new ChunkCipher(nativeSodium, SecretKey.copyOf(nativeSodium, randomBytes(32)), binding, header);
}

describe('crypto worker pool', () => {
  it('seals batches to the same bytes as the calling thread, and opens them back', async () => {
    const c = cipher();
    const plaintext = randomBytes(5 * CS + 77);
    const chunks = { firstIndex: 0, count: 6, lastLength: 77, endsWithFinal: true };
    const layout = (): Uint8Array => {
      const records = new Uint8Array(5 * (CS + 16) + 77 + 16);
      for (let i = 0; i < 6; i++) records.set(plaintext.subarray(i * CS, (i + 1) * CS), i * (CS + 16));
      return records;
    };
    const here = runHere(nativeSodium, c.job('seal', chunks, layout()));
    const there = await pool.run(c.job('seal', chunks, layout(), true));
    expect(Buffer.from(there.records).equals(Buffer.from(here.records))).toBe(true);
    const opened = await pool.run(c.job('open', chunks, Uint8Array.from(there.records), true));
    expect(opened.failure).toBeUndefined();
    for (let i = 0; i < 6; i++) {
      const start = i * (CS + 16);
      const length = i === 5 ? 77 : CS;
      expect(
        Buffer.from(opened.records.subarray(start, start + length)).equals(
          plaintext.subarray(i * CS, i * CS + length),
        ),
      ).toBe(true);
    }
  });

  it('reports the first failing chunk of a damaged batch, as the calling thread does', async () => {
    const c = cipher();
    const chunks = { firstIndex: 10, count: 3, lastLength: CS, endsWithFinal: false };
    const sealed = Buffer.from(
      runHere(nativeSodium, c.job('seal', chunks, new Uint8Array(3 * (CS + 16)))).records,
    );
    const result = await pool.run(c.job('open', chunks, Uint8Array.from(flipped(sealed, CS + 16 + 5)), true));
    expect(result.failure).toEqual({ index: 11, reason: 'tampered' });
  });

  it('transfers the key to the worker instead of leaving a copy behind', async () => {
    const job = oneChunkJob(cipher());
    const result = pool.run(job);
    expect(job.key.byteLength).toBe(0); // detached: the only copy now lives (and is wiped) in the worker
    await result;
  });

  it('posts workers only byte arrays that own exactly their bytes, never a view into a larger buffer', async () => {
    const posts = recordPosts();
    const files = stripeFiles(randomBytes(3 * CS));
    try {
      const c = cipher();
      // The prefixes as they arrive in practice: views into a larger block (random bytes, Node's buffer pool).
      const noncePrefix = Buffer.alloc(4096, 7).subarray(1000, 1016);
      await pool.run({ ...oneChunkJob(c), noncePrefix });
      const { sourceFd, targetFd } = files;
      await pool.runStripes({
        ...c.crypto('seal'),
        noncePrefix,
        chunkCount: 3,
        lastLength: CS,
        sourceFd,
        targetFd,
      });
    } finally {
      posts.stop();
      files.close();
    }
    const arrays: Uint8Array[] = [];
    const walk = (value: unknown): void => {
      if (value instanceof Uint8Array) arrays.push(value);
      else if (value && typeof value === 'object') for (const inner of Object.values(value)) walk(inner);
    };
    walk(posts.posted);
    expect(posts.posted.length).toBeGreaterThanOrEqual(2);
    expect(arrays.length).toBeGreaterThanOrEqual(6);
    for (const array of arrays) expect(array.buffer.byteLength).toBe(array.byteLength);
  });

  it('wipes a key copy it could not hand to a worker, when that worker has stopped', async () => {
    const broken = await CryptoPool.start(1);
    await broken.close();
    const job = oneChunkJob(cipher());
    await expect(broken.run(job)).rejects.toThrow(/crypto worker/);
    expect(job.key.byteLength).toBe(32);
    expect(job.key.every((byte) => byte === 0)).toBe(true);
  });

  it('fails a batch that throws inside its worker, which stays up to serve the next one', async () => {
    const single = await CryptoPool.start(1);
    try {
      const c = cipher();
      // A key of the wrong length makes libsodium throw inside the worker.
      await expect(single.run({ ...oneChunkJob(c), key: new Uint8Array(16) })).rejects.toThrow(
        /a crypto worker failed/,
      );
      expect((await single.run(oneChunkJob(c))).failure).toBeUndefined();
    } finally {
      await single.close();
    }
  });
});
