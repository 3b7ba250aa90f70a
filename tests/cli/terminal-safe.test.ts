import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { main } from '../../src/cli/main.js';
import { fakeIo, tempDir } from './helpers.js';

// CSI as one C1 character (a terminal may take what follows as a command) and a right-to-left override (which
// makes "gpj.exe" look like "exe.jpg").
const NAME = 'a\u009b31mb\u202egpj.exe';
const SHOWN = 'a<U+009B>31mb<U+202E>gpj.exe';
const RAW = /[\u009b\u202e]/u;

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const fake = fakeIo();
  const code = await main(args, fake.io);
  return { code, stdout: fake.stdout.text, stderr: fake.stderr.text };
}

describe('vault names with control and bidi characters', () => {
  it('are spelled out in every line the CLI prints, --verbose included, and kept exact in --json', async () => {
    const root = tempDir();
    const vault = join(root, 'vault');
    await mkdir(join(root, 'src'));
    await writeFile(join(root, 'src', NAME), 'x');
    expect((await cli('init', vault, '--kdf', 'interactive')).code).toBe(0);

    const outputs = [
      await cli('add', vault, join(root, 'src', NAME), '--verbose'),
      await cli('mkdir', vault, `/${NAME}-folder`, '--verbose'),
      await cli('mv', vault, `/${NAME}`, `/${NAME}-folder`, '--verbose'),
      await cli('mv', vault, `/${NAME}-folder/${NAME}`, `${NAME}2`, '--rename', '--verbose'),
      await cli('ls', vault, '/', '--recursive'),
      await cli('restore', vault, '/', '--to', join(root, 'out'), '--verbose'),
    ];
    for (const { code, stdout, stderr } of outputs) {
      expect(code).toBe(0);
      expect(stdout).toContain(SHOWN);
      expect(stdout).not.toMatch(RAW);
      expect(stderr).not.toMatch(RAW);
    }

    for (const command of [
      ['ls', vault, '/', '--recursive', '--json'],
      ['info', vault, '--json'],
    ]) {
      const { stdout } = await cli(...command);
      expect(stdout).not.toMatch(RAW);
      JSON.parse(stdout); // still valid JSON
    }
    const listed = JSON.parse((await cli('ls', vault, '/', '--recursive', '--json')).stdout) as {
      path: string;
    }[];
    expect(listed.map((entry) => entry.path)).toContain(`/${NAME}-folder/${NAME}2`);
  });
});
