import { randomBytes } from 'node:crypto';

import { afterAll, describe, expect, it } from 'vitest';

import { ChunkCipher, encodeBlobHeader, runHere } from '../../src/core/crypto/content.js';
import { SecretKey } from '../../src/core/crypto/keys.js';
import { CryptoPool } from '../../src/core/crypto/pool.js';
import { flipped, nativeSodium } from '../helpers/backends.js';

const CS = 4096;
const pool = await CryptoPool.start(2);
afterAll(async () => {
  await pool.close();
});

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
    const c = cipher();
    const job = c.job(
      'seal',
      { firstIndex: 0, count: 1, lastLength: 10, endsWithFinal: true },
      new Uint8Array(26),
      true,
    );
    const result = pool.run(job);
    expect(job.key.byteLength).toBe(0); // detached: the only copy now lives (and is wiped) in the worker
    await result;
  });
});
