/**
 * Kill -9 the CLI at random moments during add, delete, rename and move, then check that the vault opens, passes
 * `verify --read-data`, and holds every operation the CLI had reported as done. COFFER_CRASH_TRIALS raises the
 * number of trials (default 60: 15 per operation, the first of each a calibration run that is not killed).
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { Vault } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { collect, leftBehind, passphrase, PASSPHRASE, tempDir, track, writeTree } from '../helpers/vault.js';

const TRIALS = Number(process.env.COFFER_CRASH_TRIALS ?? 60);
const CLI = join(import.meta.dirname, '..', '..', 'bin', 'coffer.js');

type Operation = 'add' | 'rm' | 'mv' | 'rename';
const OPERATIONS: Operation[] = ['add', 'rm', 'mv', 'rename'];

interface CliRun {
  readonly completed: boolean;
  readonly stdout: string;
}

/** Runs the CLI and SIGKILLs it after `killAfterMs` unless it finished first. */
function runAndKill(args: string[], killAfterMs: number): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, COFFER_PASSPHRASE: PASSPHRASE },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (signal === null && code !== 0)
        reject(new Error(`coffer ${args[0] ?? ''} failed (${code}): ${stderr}`));
      else resolve({ completed: code === 0, stdout });
    });
  });
}

/** Random files: many small (packed, batched) and a few large (blob files), so kills land in both paths. */
function sourceFiles(): Record<string, Buffer> {
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < 300; i++) files[`small/s${i}.bin`] = randomBytes(randomInt(0, 3000));
  for (let i = 0; i < 6; i++) files[`large/l${i}.bin`] = randomBytes(randomInt(70_000, 3_000_000));
  return files;
}

/** tmpfs when there is one: a SIGKILL loses nothing the kernel already has, and tmpfs keeps trials fast. */
const BASE = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

async function seededVault(): Promise<string> {
  const root = tempDir(BASE);
  const dir = join(root, 'vault');
  const vault = await Vault.create(dir, passphrase(), { kdf: 'interactive', sodium: nativeSodium });
  await writeTree(join(root, 'seed'), {
    'docs/a.txt': 'a',
    'docs/b.bin': randomBytes(100_000),
    'keep/c.txt': 'c',
  });
  await vault.add([join(root, 'seed', 'docs'), join(root, 'seed', 'keep')]);
  vault.close();
  return dir;
}

describe('crash safety (SIGKILL during operations)', () => {
  it(`keeps every acknowledged operation and stays verifiable across ${TRIALS} random kills`, async () => {
    let killed = 0;
    const source = join(tempDir(BASE), 'src');
    const files = sourceFiles();
    await writeTree(source, files);
    // Each operation's first trial runs to completion and measures how long it takes; later trials are killed
    // at a uniformly random moment within that time, start-up included.
    const durations = new Map<Operation, number>();
    for (let trial = 0; trial < TRIALS; trial++) {
      const operation = OPERATIONS[trial % OPERATIONS.length] ?? 'add';
      const dir = await seededVault();
      const args: Record<Operation, string[]> = {
        add: ['add', dir, join(source, 'small'), join(source, 'large'), '--to', '/incoming', '--verbose'],
        rm: ['rm', dir, '/docs'],
        mv: ['mv', dir, '/docs', '/keep'],
        rename: ['mv', dir, '/docs', 'papers', '--rename'],
      };
      const measured = durations.get(operation);
      const started = performance.now();
      const run = await runAndKill(
        args[operation],
        measured === undefined ? 60_000 : randomInt(1, Math.ceil(measured)),
      );
      if (measured === undefined) {
        expect(run.completed, `calibration run of ${operation}`).toBe(true);
        durations.set(operation, performance.now() - started);
      }
      if (!run.completed) killed++;

      // Opening recovers: it removes what the killed operation wrote under an intent and never committed, and
      // nothing else, so no pack, blob file, temp file or intent is left behind.
      (await Vault.open(dir, { sodium: nativeSodium })).close();
      expect(leftBehind(dir), `trial ${trial} (${operation})`).toEqual({ files: [], intents: 0 });
      const vault = track(await Vault.open(dir, { sodium: nativeSodium }));
      expect(await vault.unlock(passphrase()), `trial ${trial} (${operation})`).toEqual([]);
      const report = await vault.verify({ readData: true });
      expect(report.problems, `trial ${trial} (${operation})`).toEqual([]);
      expect(report.unreferenced, `trial ${trial} (${operation})`).toEqual([]);
      const paths = new Set(vault.listRecursive('/').map((entry) => entry.path));

      if (operation === 'add') {
        const acknowledged = run.stdout
          .split('\n')
          .filter((line) => line.startsWith('added '))
          .map((line) => line.slice('added '.length));
        for (const path of acknowledged)
          expect(paths.has(path), `trial ${trial}: ${path} acknowledged`).toBe(true);
        for (const path of paths) {
          if (!path.startsWith('/incoming/') || vault.stat(path).type !== 'file') continue;
          const relative = path.slice('/incoming/'.length);
          expect((await collect(vault.read(path))).equals(files[relative] ?? Buffer.alloc(1)), path).toBe(
            true,
          );
        }
        // seed entries (5), /incoming and its two folders (3), and every file.
        if (run.completed) expect(paths.size).toBe(5 + 3 + Object.keys(files).length);
      } else {
        const before = ['/docs', '/docs/a.txt', '/docs/b.bin'];
        const after: Record<Exclude<Operation, 'add'>, string[]> = {
          rm: [],
          mv: ['/keep/docs', '/keep/docs/a.txt', '/keep/docs/b.bin'],
          rename: ['/papers', '/papers/a.txt', '/papers/b.bin'],
        };
        const atBefore = before.every((p) => paths.has(p));
        const atAfter = after[operation].every((p) => paths.has(p)) && before.every((p) => !paths.has(p));
        // All or nothing: each of these is one transaction.
        expect(
          atBefore !== atAfter,
          `trial ${trial} (${operation}): before=${atBefore} after=${atAfter}`,
        ).toBe(true);
        if (run.completed) expect(atAfter, `trial ${trial}: ${operation} acknowledged`).toBe(true);
        expect(paths.has('/keep/c.txt')).toBe(true);
      }
      vault.close();
      expect(readFileSync(join(dir, 'coffer.header')).length).toBe(272);
    }
    console.info(`crash test: ${TRIALS} trials, ${killed} killed mid-operation, every invariant held`);
    // A run where nothing was ever killed would prove nothing.
    expect(killed).toBeGreaterThan((TRIALS - OPERATIONS.length) / 2);
  }, 600_000);
});
