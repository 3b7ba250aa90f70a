import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';

import { afterAll, beforeAll, inject } from 'vitest';

import type { StopSignal } from '../../src/cli/errors.js';
import type { CliIo } from '../../src/cli/main.js';

export const REPO = resolve(import.meta.dirname, '../..');
export const BIN = join(REPO, 'bin', 'coffer.js');
export const PASSPHRASE = 'correct horse battery staple';

/** Below the suite's 60 s test timeout, so a hung CLI fails its test with a null exit code instead. */
const CHILD_TIMEOUT_MS = 45_000;

/**
 * Fails the file's tests with the compiler's output when the global setup could not build the CLI. A bundle left
 * by an earlier build does not count: testing it would pass or fail on old code.
 */
export function requireBuiltCli(): void {
  beforeAll(() => {
    const error = inject('cliBuildError');
    if (error !== '') throw new Error(`npm run build failed, so the CLI cannot be tested:\n${error}`);
  });
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder under the system temp folder, removed when the test file is done. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'coffer-cli-test-'));
  dirs.push(dir);
  return dir;
}

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  readonly cwd: string;
  /** COFFER_PASSPHRASE for the child; `null` leaves it unset. Default {@link PASSPHRASE}. */
  readonly passphrase?: string | null;
  /** Written to the child's stdin, which is then closed. */
  readonly input?: string;
  readonly env?: Readonly<Record<string, string>>;
}

/** The environment without anything the developer's shell may have set for coffer. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && key !== 'COFFER_PASSPHRASE') env[key] = value;
  }
  return env;
}

/** Starts the built CLI (`node bin/coffer.js …`) without waiting for it. */
export function startCli(args: readonly string[], options: RunOptions): ChildProcess {
  const env = cleanEnv();
  const passphrase = options.passphrase === undefined ? PASSPHRASE : options.passphrase;
  if (passphrase !== null) env.COFFER_PASSPHRASE = passphrase;
  Object.assign(env, options.env);
  const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd, env, stdio: 'pipe' });
  child.stdin.end(options.input ?? '');
  return child;
}

/** Runs the built CLI to completion, with stdin, stdout and stderr as pipes (never a terminal). */
export async function runCli(args: readonly string[], options: RunOptions): Promise<RunResult> {
  const child = startCli(args, options);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // A hung CLI must not outlive the test that started it (the test's own timeout does not kill children).
  const watchdog = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS);
  const code = await new Promise<number | null>((done, fail) => {
    child.on('error', fail);
    child.on('close', (exitCode) => {
      done(exitCode);
    });
  }).finally(() => {
    clearTimeout(watchdog);
  });
  return { code, stdout, stderr };
}

/** A stream that keeps what is written to it. */
export class Capture extends Writable {
  text = '';
  onWrite: ((chunk: string) => void) | undefined;

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    this.text += text;
    this.onWrite?.(text);
    done();
  }
}

export interface FakeIo {
  readonly io: CliIo;
  readonly stdout: Capture;
  readonly stderr: Capture;
  /** Simulates Ctrl-C (or another stop signal): calls the listener the CLI subscribed, if any. */
  interrupt(signal?: StopSignal): void;
  /** Codes passed to `io.exit`. */
  readonly exits: number[];
}

export interface FakeIoOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly input?: string;
  /** Make stdin a fake terminal, fed from this stream (raw-mode calls are recorded in `rawModes`). */
  readonly tty?: { readonly stdin: PassThrough; readonly rawModes: boolean[] };
  readonly stderrIsTTY?: boolean;
}

/** An in-process {@link CliIo} over captured streams. */
export function fakeIo(options: FakeIoOptions = {}): FakeIo {
  const stdout = new Capture();
  const stderr = new Capture();
  const listeners = new Set<(signal: StopSignal) => void>();
  const exits: number[] = [];
  let stdin: CliIo['stdin'];
  if (options.tty) {
    const { rawModes } = options.tty;
    stdin = Object.assign(options.tty.stdin, {
      setRawMode: (raw: boolean) => {
        rawModes.push(raw);
      },
    });
  } else stdin = Readable.from(options.input === undefined ? [] : [Buffer.from(options.input, 'utf8')]);
  const io: CliIo = {
    stdin,
    stdout,
    stderr,
    env: options.env ?? { COFFER_PASSPHRASE: PASSPHRASE },
    isTTY: { stdin: options.tty !== undefined, stdout: false, stderr: options.stderrIsTTY === true },
    columns: () => 100,
    onInterrupt: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    exit: (code) => {
      exits.push(code);
    },
  };
  return {
    io,
    stdout,
    stderr,
    exits,
    interrupt: (signal = 'SIGINT') => {
      for (const listener of [...listeners]) listener(signal);
    },
  };
}

/** Every file below `dir`, as paths relative to it. */
export async function filesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

/**
 * Holds a vault open in another process, with the engine from dist/, until the returned function is called.
 * Resolves once the vault is open (and so locked).
 */
export async function holdVaultOpen(vaultDir: string): Promise<() => Promise<void>> {
  const engine = pathToFileURL(join(REPO, 'dist', 'core', 'index.js')).href;
  const script = [
    `const { Vault } = await import(${JSON.stringify(engine)});`,
    `const vault = await Vault.open(${JSON.stringify(vaultDir)});`,
    `process.stdout.write('ready\\n');`,
    `process.stdin.on('end', () => { vault.close(); });`,
    `process.stdin.resume();`,
  ].join('\n');
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'pipe' });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  await new Promise<void>((ready, fail) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (chunk.includes('ready')) ready();
    });
    child.on('exit', () => {
      fail(new Error(`the holder process exited: ${stderr}`));
    });
  });
  return async () => {
    const exited = new Promise((done) => child.on('exit', done));
    child.stdin.end();
    await exited;
  };
}
