import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { main } from '../../src/cli/main.js';
import { SMALL_FILE_LIMIT } from '../../src/core/index.js';
import { fakeIo, tempDir } from './helpers.js';

/** A vault and a folder of `count` files each just large enough for a blob file, so committed on its own. */
async function setUp(count: number): Promise<{ vault: string; source: string }> {
  const dir = tempDir();
  const vault = join(dir, 'vault');
  const source = join(dir, 'src');
  await mkdir(source);
  for (let i = 0; i < count; i++)
    await writeFile(join(source, `f${i}.bin`), randomBytes(SMALL_FILE_LIMIT + 1024));
  expect(await main(['init', vault, '--kdf', 'interactive'], fakeIo().io)).toBe(0);
  return { vault, source };
}

async function listed(vault: string): Promise<string[]> {
  const fake = fakeIo();
  expect(await main(['ls', vault, '--recursive', '--json'], fake.io)).toBe(0);
  return (JSON.parse(fake.stdout.text) as { path: string }[]).map((entry) => entry.path).sort();
}

describe('Ctrl-C', () => {
  it('during add stops cleanly with exit 130; the vault holds exactly what was reported added', async () => {
    const { vault, source } = await setUp(6);
    const fake = fakeIo();
    fake.stdout.onWrite = (chunk) => {
      if (chunk.startsWith('added /src/f1.bin')) fake.interrupt();
    };
    const code = await main(['add', vault, source, '--verbose'], fake.io);
    expect(code).toBe(130);
    expect(fake.stderr.text).toMatch(/^coffer: Cancelled\. [^\n]+\n$/u);
    const reported = fake.stdout.text
      .split('\n')
      .filter((line) => line.startsWith('added '))
      .map((line) => line.slice('added '.length))
      .sort();
    expect(reported).toEqual(['/src', '/src/f0.bin', '/src/f1.bin']);
    expect(await listed(vault)).toEqual(reported);
    expect(fake.exits).toEqual([]);
  });

  it('a second Ctrl-C exits at once', async () => {
    const { vault, source } = await setUp(3);
    const fake = fakeIo({ stderrIsTTY: true });
    let presses = 0;
    fake.stderr.onWrite = (chunk) => {
      // The first progress draw stands in for "the user pressed Ctrl-C twice while the bar was showing".
      if (chunk.includes('%') && presses === 0) {
        presses = 2;
        fake.interrupt();
        fake.interrupt();
      }
    };
    await main(['add', vault, source], fake.io);
    expect(fake.exits).toEqual([130]);
    expect(fake.stderr.text).toContain('press Ctrl-C again to quit now');
    expect(fake.stderr.text).toContain('coffer: interrupted\n');
  });

  it('during restore stops with exit 130 and leaves no partial file', async () => {
    const { vault, source } = await setUp(4);
    expect(await main(['add', vault, source], fakeIo().io)).toBe(0);
    const fake = fakeIo();
    fake.stdout.onWrite = (chunk) => {
      if (chunk.startsWith('restored ')) fake.interrupt();
    };
    const out = join(tempDir(), 'out');
    const code = await main(['restore', vault, '/', '--to', out, '--verbose'], fake.io);
    expect(code).toBe(130);
    expect(fake.stderr.text).toMatch(/^coffer: Cancelled\. Files reported restored are complete/u);
    expect(fake.stdout.text.match(/^restored /gmu)).toHaveLength(1);
  });
});
