import { spawn } from 'node:child_process';
import { join } from 'node:path';

import { PASSPHRASE } from './vault.js';

const CLI = join(import.meta.dirname, '..', '..', 'bin', 'coffer.js');
const PENDING = 'coffer-test-write: pending\n';
const COMMITTED = 'coffer-test-write: committed\n';

export interface CliRun {
  readonly completed: boolean;
  readonly killed: boolean;
  readonly stdout: string;
  /** Writes the process had ready to commit, and committed (announced before it died; src/core/test-hooks.ts). */
  readonly pending: number;
  readonly commits: number;
}

/** Where to kill: this long after the process announced its `event`-th write event (1-based). */
export interface Aim {
  readonly event: number;
  readonly delayMs: number;
}

function count(text: string, marker: string): number {
  return text.split(marker).length - 1;
}

/**
 * Runs the built CLI with the write hook on, pausing `pauseMs` after each announced write event; with `aim`,
 * SIGKILLs it there (unless it finished first). `env` adds to the environment (a new passphrase, say).
 * @throws when it exits with an error of its own rather than being killed.
 */
export function runAndKill(
  args: string[],
  aim: Aim | undefined,
  pauseMs: number,
  env: Readonly<Record<string, string>> = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: {
        ...process.env,
        COFFER_PASSPHRASE: PASSPHRASE,
        ...env,
        COFFER_TEST_WRITE_HOOK: '1',
        COFFER_TEST_WRITE_PAUSE_MS: String(pauseMs),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const events = count(stderr, PENDING) + count(stderr, COMMITTED);
      if (aim && timer === undefined && events >= aim.event) {
        timer = setTimeout(() => child.kill('SIGKILL'), aim.delayMs);
      }
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (signal === null && code !== 0) {
        const problems = stderr.replaceAll(PENDING, '').replaceAll(COMMITTED, '');
        reject(new Error(`coffer ${args[0] ?? ''} failed (${code}): ${problems}`));
        return;
      }
      resolve({
        completed: code === 0,
        killed: signal === 'SIGKILL',
        stdout,
        pending: count(stderr, PENDING),
        commits: count(stderr, COMMITTED),
      });
    });
  });
}
