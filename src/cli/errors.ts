// Not from core/index.js, which loads the whole engine: --help and --version load this module too.
import { CofferError } from '../core/errors.js';

/** Process exit codes. Scripts branch on them, so a code never changes meaning once released. */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  wrongPassphrase: 3,
  integrity: 4,
  inUse: 5,
  /** 128 + SIGINT, what a shell reports for a command stopped with Ctrl-C. */
  interrupted: 130,
  /** 128 + SIGHUP: the terminal went away; cancelled as for Ctrl-C. */
  hangUp: 129,
  /** 128 + SIGTERM: asked to stop (kill, a service manager); cancelled as for Ctrl-C. */
  terminated: 143,
  /**
   * 128 + SIGPIPE: the reader of the output went away (`coffer ls … | head -1`). What a shell reports for a Unix
   * tool that SIGPIPE ended, so `set -o pipefail` scripts see the same as with `ls -R | head -1`.
   */
  outputClosed: 141,
} as const;

/** The signals the CLI treats as "cancel" (see `CliIo.onInterrupt`). */
export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/** The conventional exit code (128 + signal number) of a command cancelled by each signal. */
export const SIGNAL_EXIT: Readonly<Record<StopSignal, number>> = {
  SIGINT: EXIT.interrupted,
  SIGTERM: EXIT.terminated,
  SIGHUP: EXIT.hangUp,
};

/** A failure the CLI itself detects, carrying the exit code it ends the process with. */
export class CliError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode: number = EXIT.failure) {
    super(message);
    this.name = new.target.name;
    this.exitCode = exitCode;
  }
}

/** The command line is wrong: unknown command or option, missing arguments, no way to get a passphrase. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}

/** The exit code for an error that ended a command; engine errors map by their stable `code`. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  if (!(error instanceof CofferError)) return EXIT.failure;
  switch (error.code) {
    case 'WRONG_PASSPHRASE':
      return EXIT.wrongPassphrase;
    case 'INTEGRITY':
      return EXIT.integrity;
    case 'VAULT_IN_USE':
      return EXIT.inUse;
    case 'CANCELLED':
      return EXIT.interrupted;
    default:
      return EXIT.failure;
  }
}
