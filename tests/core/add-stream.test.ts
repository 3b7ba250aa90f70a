import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { CancelledError, SMALL_FILE_LIMIT, type StreamedFile } from '../../src/core/index.js';
import { collect, newVault } from '../helpers/vault.js';

/** A network-like pause between pieces of a stream. */
const arrival = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Yields `bytes` in pieces of the given sizes (cycled), so chunk boundaries fall anywhere. */
async function* pieces(
  bytes: Uint8Array,
  sizes: readonly number[] = [1, 7, 65_537, 333],
): AsyncGenerator<Uint8Array> {
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const size = sizes[i % sizes.length] ?? 1;
    await arrival();
    yield bytes.subarray(at, at + size);
    at += size;
  }
}

/** Bytes no vault file could contain by chance: a marker repeated, so any plaintext written would show it. */
function marked(size: number): Buffer {
  const marker = Buffer.from('PLAINTEXT-MARKER-');
  const out = Buffer.alloc(size);
  for (let at = 0; at < size; at += marker.length) marker.copy(out, at);
  return out;
}

function vaultFilesContain(dir: string, needle: Buffer): boolean {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .some((entry) => readFileSync(join(entry.parentPath, entry.name)).includes(needle));
}

describe('Vault.addStreams', () => {
  it('stores streamed files of every size class byte-identical, with their times', async () => {
    const { vault } = await newVault();
    const contents = new Map<string, Buffer>([
      ['empty.txt', Buffer.alloc(0)],
      ['one.bin', Buffer.from([42])],
      ['small.txt', marked(5000)],
      ['limit.bin', marked(SMALL_FILE_LIMIT)],
      ['large.bin', marked(SMALL_FILE_LIMIT * 3 + 17)],
    ]);
    const files: StreamedFile[] = [...contents].map(([name, bytes], i) => ({
      name,
      size: bytes.length,
      mtime: 1_700_000_000_000 + i,
      bytes: name === 'one.bin' ? bytes : pieces(bytes),
    }));
    const added: string[] = [];
    const report = await vault.addStreams(files, '/', { onAdded: (entry) => added.push(entry.path) });
    expect(report).toMatchObject({ filesAdded: 5, bytesAdded: SMALL_FILE_LIMIT * 4 + 5018, problems: [] });
    expect(added.sort()).toEqual([...contents.keys()].map((name) => `/${name}`).sort());
    for (const [i, [name, bytes]] of [...contents].entries()) {
      expect(vault.stat(`/${name}`)).toMatchObject({ size: bytes.length, mtime: 1_700_000_000_000 + i });
      expect((await collect(vault.read(`/${name}`))).equals(bytes)).toBe(true);
    }
  });

  it('writes nothing of the plaintext to disk, also while a large stream is half read', async () => {
    const { vault, dir } = await newVault();
    const bytes = marked(SMALL_FILE_LIMIT * 2 + 5);
    const marker = bytes.subarray(0, 64);
    let sawDisk = false;
    async function* slow(): AsyncGenerator<Uint8Array> {
      yield bytes.subarray(0, SMALL_FILE_LIMIT + 100);
      await arrival();
      sawDisk = vaultFilesContain(dir, marker);
      yield bytes.subarray(SMALL_FILE_LIMIT + 100);
    }
    await vault.addStreams([{ name: 'big.bin', size: bytes.length, mtime: 0, bytes: slow() }]);
    expect(sawDisk).toBe(false);
    expect(vaultFilesContain(dir, marker)).toBe(false);
    expect((await collect(vault.read('/big.bin'))).equals(bytes)).toBe(true);
  });

  it('reports a stream shorter or longer than its size, a bad or taken name, a failing stream; stores the rest', async () => {
    const { vault } = await newVault();
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('abc');
      await arrival();
      throw new Error('connection reset');
    }
    const report = await vault.addStreams(
      [
        { name: 'short.txt', size: 10, mtime: 0, bytes: pieces(Buffer.from('12345')) },
        { name: 'long.txt', size: 2, mtime: 0, bytes: pieces(Buffer.from('12345')) },
        {
          name: 'short-large.bin',
          size: SMALL_FILE_LIMIT + 10,
          mtime: 0,
          bytes: pieces(marked(SMALL_FILE_LIMIT)),
        },
        { name: '../escape', size: 1, mtime: 0, bytes: Buffer.from('x') },
        { name: 'fails.txt', size: 6, mtime: 0, bytes: failing() },
        { name: 'ok.txt', size: 2, mtime: 0, bytes: Buffer.from('ok') },
        { name: 'OK.txt', size: 2, mtime: 0, bytes: Buffer.from('no') },
      ],
      '/',
    );
    expect(report.filesAdded).toBe(1);
    expect(report.problems.map((problem) => `${problem.path} ${problem.code}`)).toEqual([
      '../escape INVALID_NAME',
      'short.txt SOURCE_CHANGED',
      'long.txt SOURCE_CHANGED',
      'short-large.bin SOURCE_CHANGED',
      'fails.txt IO',
      'OK.txt ALREADY_EXISTS',
    ]);
    expect(vault.list('/').map((entry) => entry.name)).toEqual(['ok.txt']);
  });

  it('refuses a negative or fractional size before reading anything', async () => {
    const { vault } = await newVault();
    for (const size of [-1, 1.5, Number.NaN]) {
      await expect(
        vault.addStreams([{ name: 'a', size, mtime: 0, bytes: Buffer.alloc(0) }]),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
  });

  it('stops when cancelled mid-stream and keeps nothing of the unfinished file', async () => {
    const { vault } = await newVault();
    const controller = new AbortController();
    const bytes = marked(SMALL_FILE_LIMIT * 4);
    async function* cancelling(): AsyncGenerator<Uint8Array> {
      yield bytes.subarray(0, SMALL_FILE_LIMIT * 2);
      await arrival();
      controller.abort();
      yield bytes.subarray(SMALL_FILE_LIMIT * 2);
    }
    await expect(
      vault.addStreams(
        [
          { name: 'first.txt', size: 3, mtime: 0, bytes: Buffer.from('one') },
          { name: 'big.bin', size: bytes.length, mtime: 0, bytes: cancelling() },
        ],
        '/',
        { signal: controller.signal },
      ),
    ).rejects.toBeInstanceOf(CancelledError);
    expect(vault.list('/').map((entry) => entry.name)).not.toContain('big.bin');
  });
});
