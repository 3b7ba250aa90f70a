import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { main } from '../../src/cli/main.js';
import { fakeIo, holdVaultOpen, tempDir } from './helpers.js';

/** A vault of `count` small files and one large one, and the files' bytes by name. */
async function setUp(count: number): Promise<{ vault: string; dir: string; files: Map<string, Buffer> }> {
  const dir = tempDir();
  const vault = join(dir, 'vault');
  const files = new Map<string, Buffer>([['big.bin', randomBytes(1_300_000)]]);
  for (let i = 0; i < count; i++) files.set(`f${i}.txt`, randomBytes(3000 + i));
  await mkdir(join(dir, 'src'));
  for (const [name, data] of files) await writeFile(join(dir, 'src', name), data);
  expect(await main(['init', vault, '--kdf', 'interactive'], fakeIo().io)).toBe(0);
  expect(await main(['add', vault, join(dir, 'src')], fakeIo().io)).toBe(0);
  return { vault, dir, files };
}

async function json<T>(args: string[], code = 0): Promise<T> {
  const fake = fakeIo();
  expect(await main([...args, '--json'], fake.io), fake.stderr.text).toBe(code);
  return JSON.parse(fake.stdout.text) as T;
}

describe('coffer rotate --reencrypt', () => {
  it('rotates, re-encrypts and removes the old key; --json gives the report', async () => {
    const { vault, dir, files } = await setUp(5);
    const report = await json<Record<string, unknown>>(['rotate', vault, '--reencrypt']);
    expect(report).toMatchObject({
      keyId: 2,
      rotated: true,
      removedKeyIds: [1],
      filesReencrypted: 6,
      recordsResealed: 1,
      problems: [],
    });
    expect((await json<{ keyIds: number[] }>(['info', vault])).keyIds).toEqual([2]);
    const plain = fakeIo();
    expect(await main(['rotate', vault, '--reencrypt'], plain.io)).toBe(0);
    expect(plain.stdout.text).toMatch(/^New data key 3\. Re-encrypted 6 files .* Removed 1 old key \(2\)/u);
    const log = await json<{ entries: { kind: string }[] }>(['log', vault]);
    expect(log.entries.filter((entry) => entry.kind === 'reencrypt')).toHaveLength(2);
    expect(await main(['verify', vault, '--read-data'], fakeIo().io)).toBe(0);
    expect(await main(['restore', vault, '/src', '--to', join(dir, 'out')], fakeIo().io)).toBe(0);
    for (const [name, data] of files)
      expect(readFileSync(join(dir, 'out', 'src', name)).equals(data)).toBe(true);
  });

  it('stops on Ctrl-C with exit 130, every file readable, and a second run continues', async () => {
    const { vault, dir, files } = await setUp(400);
    const fake = fakeIo({ stderrIsTTY: true });
    let progressLines = 0;
    fake.stderr.onWrite = () => {
      // The second draw of the bar: the first batch has started.
      if (++progressLines === 2) fake.interrupt();
    };
    expect(await main(['rotate', vault, '--reencrypt'], fake.io)).toBe(130);
    expect(fake.stderr.text).toContain('Run "coffer rotate --reencrypt" again');
    expect((await json<{ keyIds: number[] }>(['info', vault])).keyIds).toEqual([1, 2]);
    expect(await main(['verify', vault], fakeIo().io)).toBe(0);

    const report = await json<Record<string, unknown>>(['rotate', vault, '--reencrypt']);
    expect(report).toMatchObject({ keyId: 2, rotated: false, removedKeyIds: [1], problems: [] });
    expect(await main(['restore', vault, '/src', '--to', join(dir, 'out')], fakeIo().io)).toBe(0);
    for (const [name, data] of files)
      expect(readFileSync(join(dir, 'out', 'src', name)).equals(data)).toBe(true);
  });

  it('is refused with exit 5 while another process has the vault open, changing nothing', async () => {
    const { vault } = await setUp(1);
    const release = await holdVaultOpen(vault);
    try {
      const fake = fakeIo();
      expect(await main(['rotate', vault, '--reencrypt'], fake.io)).toBe(5);
    } finally {
      await release();
    }
    expect((await json<{ keyIds: number[] }>(['info', vault])).keyIds).toEqual([1]);
  });
});
