/**
 * Whole blob files sealed and opened as stripes on the worker pool (the workers read and write the files
 * themselves), checked against the same work done in this thread: same bytes, same errors, prompt stops.
 */
import { randomBytes } from 'node:crypto';
import { open, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { afterAll, describe, expect, it } from 'vitest';

import { ChunkCipher, encodeBlobHeader, type BlobHeader } from '../../src/core/crypto/content.js';
import { SecretKey } from '../../src/core/crypto/keys.js';
import { CryptoPool } from '../../src/core/crypto/pool.js';
import { CancelledError, IntegrityError } from '../../src/core/errors.js';
import { fileSource, openBlob, sealIntoBlob, type CryptoPlace } from '../../src/core/vault/blob-io.js';
import { flipped, nativeSodium } from '../helpers/backends.js';
import { tempDir } from '../helpers/vault.js';

const CS = 4096;
/** The pool's batch: 16 chunks. */
const BATCH = 16 * CS;
const pool = await CryptoPool.start(2);
afterAll(async () => {
  await pool.close();
});
const workers: CryptoPlace = { sodium: nativeSodium, executor: pool };
const here: CryptoPlace = { sodium: nativeSodium, executor: undefined };

const binding = { vaultId: randomBytes(16), fileId: randomBytes(16) };
const dek = SecretKey.copyOf(nativeSodium, randomBytes(32));
const header: BlobHeader = encodeBlobHeader({
  chunkSize: CS,
  keyId: 1,
  fileId: binding.fileId,
  noncePrefix: randomBytes(16),
});
const cipher = (): ChunkCipher => new ChunkCipher(nativeSodium, dek, binding, header);

/** 37 batches and a short final chunk: both workers get several batches, and the last one is partial. */
const SIZE = 37 * BATCH + 1234;
const CHUNKS = Math.ceil(SIZE / CS);

async function seal(
  place: CryptoPlace,
  sourcePath: string,
  targetPath: string,
  options: { size?: number; signal?: AbortSignal; onBytes?: (bytes: number) => void } = {},
): Promise<boolean> {
  const source = await open(sourcePath, 'r');
  const target = await open(targetPath, 'w');
  const c = cipher();
  try {
    return await sealIntoBlob({
      place,
      cipher: c,
      source: fileSource(source),
      size: options.size ?? SIZE,
      target,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onBytes ? { onBytes: options.onBytes } : {}),
    });
  } finally {
    c.wipe();
    await source.close();
    await target.close();
  }
}

async function unseal(
  place: CryptoPlace,
  blobPath: string,
  targetPath: string,
  onBytes?: (bytes: number) => void,
): Promise<void> {
  const source = await open(blobPath, 'r');
  const target = await open(targetPath, 'w');
  const c = cipher();
  try {
    await openBlob({
      place,
      cipher: c,
      source: fileSource(source),
      chunkCount: CHUNKS,
      plaintextSize: SIZE,
      sink: target,
      ...(onBytes ? { onBytes } : {}),
    });
  } finally {
    c.wipe();
    await source.close();
    await target.close();
  }
}

async function fixture(size = SIZE): Promise<{ dir: string; plain: string; plaintext: Buffer }> {
  const dir = tempDir();
  const plaintext = randomBytes(size);
  const plain = join(dir, 'plain.bin');
  await writeFile(plain, plaintext);
  return { dir, plain, plaintext };
}

describe('whole files on the worker pool', () => {
  it('seals to the same bytes as this thread and opens back into a file, reporting every byte both ways', async () => {
    const { dir, plain, plaintext } = await fixture();
    let reported = 0;
    const complete = await seal(workers, plain, join(dir, 'a.blob'), {
      onBytes: (bytes) => (reported += bytes),
    });
    expect(complete).toBe(true);
    expect(reported).toBe(SIZE);
    expect(await seal(here, plain, join(dir, 'b.blob'))).toBe(true);
    const blob = await readFile(join(dir, 'a.blob'));
    expect(blob.equals(await readFile(join(dir, 'b.blob')))).toBe(true);

    for (const place of [workers, here]) {
      let opened = 0;
      await unseal(place, join(dir, 'a.blob'), join(dir, 'out.bin'), (bytes) => (opened += bytes));
      expect(opened).toBe(SIZE);
      expect((await readFile(join(dir, 'out.bin'))).equals(plaintext)).toBe(true);
    }
  });

  it('names the damaged chunk in a middle batch, as this thread does', async () => {
    const { dir, plain } = await fixture();
    await seal(workers, plain, join(dir, 'a.blob'));
    const damagedChunk = 20 * 16 + 3;
    const blob = await readFile(join(dir, 'a.blob'));
    await writeFile(join(dir, 'a.blob'), flipped(blob, 52 + damagedChunk * (CS + 16) + 7));
    for (const place of [workers, here]) {
      const error: unknown = await unseal(place, join(dir, 'a.blob'), join(dir, 'out.bin')).catch(
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(IntegrityError);
      expect(error).toMatchObject({ reason: 'tampered', chunkIndex: damagedChunk });
    }
  });

  it('returns false when the source is shorter or longer than the size it had', async () => {
    const { dir, plain } = await fixture();
    expect(await seal(workers, plain, join(dir, 'a.blob'), { size: SIZE + 5 * BATCH })).toBe(false);
    expect(await seal(workers, plain, join(dir, 'a.blob'), { size: SIZE - 100 })).toBe(false);
  });

  it('stops every worker when cancelled mid-file, before it returns, and the pool carries on', async () => {
    // Large enough that the workers are far from done when the stop request reaches them, however late (a sparse
    // file: zeros, taking no disk nor memory until sealed).
    const size = 1024 ** 3;
    const dir = tempDir();
    const plain = join(dir, 'plain.bin');
    await writeFile(plain, '');
    await truncate(plain, size);
    const controller = new AbortController();
    let reported = 0;
    const target = join(dir, 'a.blob');
    await expect(
      seal(workers, plain, target, {
        size,
        signal: controller.signal,
        onBytes: (bytes) => {
          reported += bytes;
          controller.abort();
        },
      }),
    ).rejects.toBeInstanceOf(CancelledError);
    // Workers that ignored the stop would have sealed (and reported) all of it.
    expect(reported).toBeLessThan(size);
    // Nothing writes to the file after the call returned.
    const written = (await stat(target)).size;
    await sleep(50);
    expect((await stat(target)).size).toBe(written);
    const small = await fixture();
    expect(await seal(workers, small.plain, join(small.dir, 'b.blob'), { size: SIZE })).toBe(true);
  });

  it("turns a failed read into the source's own error and passes a failed write on as fs reported it", async () => {
    const { dir, plain } = await fixture();
    const folder = await open(dir, 'r');
    const target = await open(join(dir, 'a.blob'), 'w');
    const c = cipher();
    try {
      const failedRead = await sealIntoBlob({
        place: workers,
        cipher: c,
        source: fileSource(folder, (error) => new Error('could not read the source', { cause: error })),
        size: SIZE,
        target,
      }).catch((caught: unknown) => caught);
      expect(failedRead).toMatchObject({
        message: 'could not read the source',
        cause: { code: 'EISDIR' },
      });
    } finally {
      await folder.close();
      await target.close();
    }
    await seal(workers, plain, join(dir, 'b.blob'));
    const blob = await open(join(dir, 'b.blob'), 'r');
    const readOnly = await open(plain, 'r');
    try {
      const failedWrite = await openBlob({
        place: workers,
        cipher: c,
        source: fileSource(blob),
        chunkCount: CHUNKS,
        plaintextSize: SIZE,
        sink: readOnly,
      }).catch((caught: unknown) => caught);
      expect(failedWrite).toBeInstanceOf(Error);
      expect(failedWrite).toMatchObject({ code: 'EBADF', syscall: 'write' });
    } finally {
      c.wipe();
      await blob.close();
      await readOnly.close();
    }
  });
});
