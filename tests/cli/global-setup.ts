import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The output of a failed `npm run build`, or "" when it succeeded. */
    cliBuildError: string;
  }
}

/**
 * Builds dist/ once per test run: the CLI tests run `node bin/coffer.js`, which imports the compiled CLI, and a
 * stale build would test old code. Vitest only takes global setup from the config, so the root config lists this
 * file. A failure is handed to the CLI tests (see requireBuiltCli) rather than thrown here, so a half-edited file
 * elsewhere in src/ cannot stop the engine's own tests from running.
 */
export default function setup(project: TestProject): () => void {
  // Restores record their temp files in a per-user state folder (see src/core/vault/restore-record.ts); tests,
  // and the CLI processes they start, keep theirs in one of their own rather than the developer's.
  const stateDir = mkdtempSync(join(tmpdir(), 'coffer-test-state-'));
  process.env.COFFER_STATE_DIR = stateDir;
  try {
    execFileSync('npm', ['run', 'build'], {
      cwd: resolve(import.meta.dirname, '../..'),
      stdio: 'pipe',
      shell: process.platform === 'win32',
    });
    project.provide('cliBuildError', '');
  } catch (error) {
    const { stdout, stderr, message } = error as { stdout?: Buffer; stderr?: Buffer; message: string };
    project.provide('cliBuildError', `${stdout?.toString() ?? ''}${stderr?.toString() ?? message}`);
  }
  return () => {
    rmSync(stateDir, { recursive: true, force: true });
  };
}
