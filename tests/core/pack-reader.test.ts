import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { VaultLockedError } from '../../src/core/errors.js';
import { PackReader } from '../../src/core/vault/pack-reader.js';
import { tempDir } from '../helpers/vault.js';

/** A vault folder holding one pack of `bytes`, and a blob spanning all of it. */
function onePack(bytes: Buffer) {
  const dir = tempDir();
  mkdirSync(join(dir, 'packs'));
  const packId = Buffer.alloc(16, 7);
  writeFileSync(join(dir, 'packs', `${packId.toString('hex')}.pack`), bytes);
  return { dir, blob: { packId, offset: 0, length: bytes.length } };
}

async function readAll(source: ReturnType<PackReader['source']>['source'], length: number): Promise<Buffer> {
  const out = Buffer.alloc(length);
  await source.readv([out], 0);
  return out;
}

describe('the pack reader', () => {
  it('keeps a pack open for a read that outlives its closing, closes it once that read is released, and opens none after', async () => {
    const bytes = Buffer.from('the bytes of a pack');
    const { dir, blob } = onePack(bytes);
    const packs = new PackReader(dir);
    const { source, release } = packs.source(blob);
    // A lock wipes the session while a stopped read is still winding down.
    packs.close();
    expect((await readAll(source, bytes.length)).equals(bytes)).toBe(true);
    expect(() => {
      release();
    }).not.toThrow();
    // Closed now, once (a second close of its descriptor would have thrown, or closed another file's).
    await expect(readAll(source, bytes.length)).rejects.toMatchObject({ code: 'EBADF' });
    expect(() => packs.source(blob)).toThrow(VaultLockedError);
  });

  it('closes a pack forgotten while it is read once that read is released', async () => {
    const bytes = Buffer.from('another pack');
    const { dir, blob } = onePack(bytes);
    const packs = new PackReader(dir);
    const first = packs.source(blob);
    packs.forget(blob.packId);
    expect((await readAll(first.source, bytes.length)).equals(bytes)).toBe(true);
    first.release();
    await expect(readAll(first.source, bytes.length)).rejects.toMatchObject({ code: 'EBADF' });
    // Opened again for a later read.
    const again = packs.source(blob);
    expect((await readAll(again.source, bytes.length)).equals(bytes)).toBe(true);
    again.release();
    packs.close();
  });

  it("turns a failed read into the caller's error, with the system's error as its cause", async () => {
    const bytes = Buffer.from('a pack read after its descriptor closed');
    const { dir, blob } = onePack(bytes);
    const packs = new PackReader(dir);
    const { source, release } = packs.source(
      blob,
      (error) => new Error('could not read the pack', { cause: error }),
    );
    packs.close();
    release();
    // Its descriptor is closed: the read fails in the system call, as a failing disk's would.
    const failure = readAll(source, bytes.length);
    await expect(failure).rejects.toThrow('could not read the pack');
    await expect(failure).rejects.toMatchObject({ cause: { code: 'EBADF' } });
  });
});
