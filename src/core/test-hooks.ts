import { writeSync } from 'node:fs';

/**
 * Crash-test instrumentation, off unless COFFER_TEST_WRITE_HOOK=1 (tests/crash/crash.test.ts sets it for the CLI
 * processes it kills). When on, each write transaction of the index, and each replacement of a header file (the
 * new file durable under its temp name, then renamed), announces on stderr that its changes are made
 * and about to be committed ("coffer-test-write: pending") and that they were ("… committed"), pausing
 * COFFER_TEST_WRITE_PAUSE_MS milliseconds after each. The crash test aims its kills from the first announcement;
 * the pauses make the moments inside a transaction and between two transactions of one operation wide enough for
 * a kill from outside to land there. A kill can only prove an operation atomic if it can land in the middle of it.
 */
const enabled = process.env.COFFER_TEST_WRITE_HOOK === '1';
const pauseMs = Number(process.env.COFFER_TEST_WRITE_PAUSE_MS ?? '0');

/** Announces a transaction about to commit, or committed (see above); does nothing unless the hook is on. */
export function announceWrite(event: 'pending' | 'committed'): void {
  if (!enabled) return;
  writeSync(2, `coffer-test-write: ${event}\n`);
  if (pauseMs > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pauseMs);
}
