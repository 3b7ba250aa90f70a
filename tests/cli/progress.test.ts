import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, describe, expect, it, vi } from 'vitest';

import { formatBytes, formatDuration } from '../../src/cli/format.js';
import { ProgressBar, renderProgress } from '../../src/cli/progress.js';
import { BIN, Capture, PASSPHRASE, requireBuiltCli, runCli, tempDir } from './helpers.js';

requireBuiltCli();

const MiB = 1024 * 1024;

/** Terminal output with the bar's "erase line" sequence made visible, so assertions can name it. */
const visible = (text: string): string => text.replaceAll('\r\u001b[K', '<ERASE>');

describe('renderProgress', () => {
  it('shows percent, bar, bytes, rate, ETA and the current file', () => {
    const line = renderProgress(
      { filesDone: 1, filesTotal: 4, bytesDone: 5 * MiB, bytesTotal: 10 * MiB, current: '/Photos/a.jpg' },
      { columns: 120, rate: 2.5 * MiB },
    );
    expect(line).toBe(' 50%  [##########----------]  5 MiB/10 MiB  2.5 MiB/s  ETA 0:02  /Photos/a.jpg');
  });

  it('counts files when there is no byte total (verify without reading data)', () => {
    const line = renderProgress(
      { filesDone: 3, filesTotal: 12, bytesDone: 0, bytesTotal: 0 },
      { columns: 80 },
    );
    expect(line).toBe(' 25%  [#####---------------]  3/12 files');
  });

  it('fits the terminal, keeping the end of a long path, and spells out control characters', () => {
    const current = `/${'very-long-folder-name/'.repeat(10)}file\u001b[31m.txt`;
    const line = renderProgress(
      { filesDone: 0, filesTotal: 1, bytesDone: 0, bytesTotal: MiB, current },
      { columns: 70 },
    );
    expect(line.length).toBeLessThanOrEqual(69);
    expect(line).toMatch(/ {2}….*file<U\+001B>\[31m\.txt$/u);
    expect(line).not.toContain('\u001b');
  });
});

describe('ProgressBar', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('redraws at most every 100 ms, draws the latest state after a pause, and erases itself', () => {
    vi.useFakeTimers();
    const out = new Capture();
    const bar = new ProgressBar(out, { columns: () => 80, now: () => Date.now() });
    const progress = (bytesDone: number) => ({ filesDone: 0, filesTotal: 1, bytesDone, bytesTotal: 100 });
    bar.update(progress(1));
    for (let bytes = 2; bytes <= 50; bytes++) bar.update(progress(bytes));
    expect(visible(out.text).match(/<ERASE>/gu)).toHaveLength(1);
    expect(out.text).toContain('  1%');
    vi.advanceTimersByTime(100);
    expect(visible(out.text).match(/<ERASE>/gu)).toHaveLength(2);
    expect(out.text).toContain(' 50%');
    bar.finish();
    expect(out.text.endsWith('\r\u001b[K')).toBe(true);
    bar.update(progress(99));
    vi.advanceTimersByTime(1000);
    expect(out.text).not.toContain(' 99%');
  });
});

describe('formatting', () => {
  it.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [1024, '1 KiB'],
    [1536, '1.5 KiB'],
    [300 * 1024, '300 KiB'],
    [MiB - 1, '1 MiB'],
    [5.25 * 1024 * MiB, '5.3 GiB'],
  ])('formatBytes(%d) is %s', (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });

  it('formatDuration', () => {
    expect(formatDuration(7_000)).toBe('0:07');
    expect(formatDuration(750_000)).toBe('12:30');
    expect(formatDuration(11_045_000)).toBe('3:04:05');
  });
});

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

describe('progress on a real terminal', () => {
  it.skipIf(!hasScript)(
    'add draws a progress bar on a terminal and erases it before the summary',
    async () => {
      const cwd = tempDir();
      await writeFile(join(cwd, 'big.bin'), randomBytes(3 * MiB));
      expect((await runCli(['init', 'vault', '--kdf', 'interactive'], { cwd })).code).toBe(0);
      const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} add vault big.bin`;
      const result = spawnSync('script', ['-q', '-c', command, '/dev/null'], {
        cwd,
        env: { ...process.env, COFFER_PASSPHRASE: PASSPHRASE },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      expect(result.status).toBe(0);
      // stdout and stderr share the terminal: the bar (redrawn in place) comes first, then the erased line.
      expect(visible(result.stdout)).toMatch(/<ERASE> +\d+% {2}\[[#-]{20}\] {2}[\d.]+ (?:B|KiB|MiB)\/3 MiB/u);
      expect(visible(result.stdout)).toMatch(/<ERASE>Done: 1 file and 0 folders added \(3 MiB\)\./u);
    },
  );

  it('prints nothing on stderr when it is not a terminal', async () => {
    const cwd = tempDir();
    await writeFile(join(cwd, 'big.bin'), randomBytes(3 * MiB));
    expect((await runCli(['init', 'vault', '--kdf', 'interactive'], { cwd })).code).toBe(0);
    const result = await runCli(['add', 'vault', 'big.bin'], { cwd });
    expect(result).toMatchObject({ code: 0, stderr: '' });
  });
});
