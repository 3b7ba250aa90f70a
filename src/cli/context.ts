import type { Writable } from 'node:stream';

import {
  CancelledError,
  defaultStateDir,
  INDEX_PROBLEM_PATH,
  InvalidArgumentError,
  loadSodium,
  RecoveryKey,
  rollbackWarning,
  SeenStates,
  Vault,
  type CreateOptions,
  type JobOptions,
  type Problem,
  type SodiumBackend,
} from '../core/index.js';
import type { GlobalFlags } from './args.js';
import { CliError, EXIT, SIGNAL_EXIT, UsageError, type StopSignal } from './errors.js';
import { oneLine, terminalSafe, terminalSafeJson } from './format.js';
import {
  chooseNewPassphraseSource,
  choosePassphraseSource,
  NEW_PASSPHRASE_WORDS,
  readPassphrase,
  readStdinPassphrase,
  RECOVERY_KEY_ENV,
  type PassphraseContext,
  type PassphraseSource,
  type PromptInput,
} from './passphrase.js';
import type { OutputWatch } from './output.js';
import { ProgressBar } from './progress.js';

/**
 * Everything the CLI touches outside itself. {@link main} takes it as an argument so tests can run commands
 * in-process with fake streams, terminal state, environment and Ctrl-C.
 */
export interface CliIo {
  readonly stdin: PromptInput;
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Which standard streams are terminals: decides prompting (stdin) and the progress bar (stderr). */
  readonly isTTY: { readonly stdin: boolean; readonly stdout: boolean; readonly stderr: boolean };
  /** Width of the terminal on stderr, in columns. */
  readonly columns?: () => number | undefined;
  /**
   * Subscribes to Ctrl-C (SIGINT), SIGTERM and SIGHUP for the duration of a long operation; returns the
   * unsubscribe function. Absent: the signals keep their default effect.
   */
  readonly onInterrupt?: (listener: (signal: StopSignal) => void) => () => void;
  /** Ends the process at once: the second Ctrl-C. */
  readonly exit?: (code: number) => void;
}

/**
 * A vault path from an argument. Vault paths are absolute, and there is no current vault folder for a relative
 * one to be relative to, so "Photos/a.jpg" can only mean "/Photos/a.jpg".
 */
export function toVaultPath(argument: string): string {
  return argument.startsWith('/') ? argument : `/${argument}`;
}

/** A parsed command ready to run, with output helpers shared by every command. */
export class Context {
  readonly io: CliIo;
  readonly args: readonly string[];
  readonly flags: GlobalFlags;
  readonly #options: Readonly<Record<string, string | boolean | undefined>>;
  readonly #output: OutputWatch;
  #bar: ProgressBar | undefined;
  /** Entries of the vault index that could not be read at unlock (and so are left out of everything). */
  #damagedEntries = 0;
  /**
   * Whether the vault was opened with a warning (read from a rolled-back copy of its index, its header's backup
   * standing in for a damaged header, or gone back to an older copy since this computer last saw it): exit 1.
   */
  #openedWithWarnings = false;
  /** Entries the vault could not write to its activity log (the operations themselves were done). */
  #logProblems = 0;
  /** The index as a whole failed its checks at unlock (format 1.1: its rows do not match its commitment). */
  #indexDamaged = false;
  /** Each problem warned of in this run, as said. */
  readonly #problemsWarned = new Set<string>();

  constructor(
    io: CliIo,
    args: readonly string[],
    options: Readonly<Record<string, string | boolean | undefined>>,
    flags: GlobalFlags,
    output: OutputWatch,
  ) {
    this.io = io;
    this.args = args;
    this.#options = options;
    this.flags = flags;
    this.#output = output;
  }

  /** A string option's value, if given. */
  string(name: string): string | undefined {
    const value = this.#options[name];
    return typeof value === 'string' ? value : undefined;
  }

  /** Whether a boolean option was given. */
  flag(name: string): boolean {
    return this.#options[name] === true;
  }

  /**
   * Writes one line to stdout (results, `--verbose` lines). Control, bidi and other invisible characters are
   * spelled out: the line may hold vault names, which can contain them.
   */
  print(line: string): void {
    if (this.#output.closed) return;
    this.#bar?.clear();
    this.io.stdout.write(`${terminalSafe(line)}\n`);
  }

  /** Writes a value as indented JSON to stdout, with unsafe characters escaped (see {@link terminalSafeJson}). */
  printJson(value: unknown): void {
    if (this.#output.closed) return;
    this.#bar?.clear();
    this.io.stdout.write(`${terminalSafeJson(value)}\n`);
  }

  /** Writes a warning line to stderr: something was skipped or is wrong, but the command carried on. */
  warn(message: string): void {
    if (this.#output.closed) return;
    this.#bar?.clear();
    this.io.stderr.write(`coffer: warning: ${terminalSafe(oneLine(message))}\n`);
  }

  /**
   * Reports problems from the engine, one warning each, naming the item unless the message already does. A problem
   * already reported in this run (damage of the index found at unlock, then again by `verify`) is not repeated.
   */
  warnProblems(problems: readonly Problem[]): void {
    for (const problem of problems) {
      const text = problem.message.includes(problem.path)
        ? problem.message
        : `${problem.path}: ${problem.message}`;
      if (this.#problemsWarned.has(text)) continue;
      this.#problemsWarned.add(text);
      this.warn(text);
    }
  }

  /** The libsodium backend; the warning about a fallback to the slower build comes out as this command's own. */
  #loadSodium(): Promise<SodiumBackend> {
    return loadSodium((message) => {
      this.warn(message);
    });
  }

  #passphraseContext(): PassphraseContext {
    return {
      env: this.io.env,
      passphraseStdin: this.flags.passphraseStdin,
      stdin: this.io.stdin,
      stdinIsTTY: this.io.isTTY.stdin,
      promptOutput: this.io.stderr,
    };
  }

  /**
   * Creates a vault and closes it again. The passphrase is asked for twice at a prompt.
   */
  async createVault(dir: string, options: Omit<CreateOptions, 'sodium'>): Promise<void> {
    const source = choosePassphraseSource(this.#passphraseContext());
    const sodium = await this.#loadSodium();
    const passphrase = await readPassphrase(sodium, source, this.#passphraseContext(), true);
    let vault: Vault;
    try {
      vault = await Vault.create(dir, passphrase, { ...options, sodium });
    } finally {
      passphrase.fill(0);
    }
    vault.close();
  }

  /**
   * Where the secret that unlocks comes from: the recovery key (COFFER_RECOVERY_KEY or --recovery-key-stdin) when
   * one is given, else the passphrase's sources.
   * @throws {@link UsageError} when both stdin flags are given, or there is no source at all.
   */
  #chooseSecretSource(): { recovery: false; source: PassphraseSource } | { recovery: true; text?: string } {
    if (this.flags.recoveryKeyStdin && this.flags.passphraseStdin) {
      throw new UsageError('Give either --passphrase-stdin or --recovery-key-stdin, not both.');
    }
    const fromEnv = this.io.env[RECOVERY_KEY_ENV];
    if (fromEnv !== undefined) return { recovery: true, text: fromEnv };
    if (this.flags.recoveryKeyStdin) return { recovery: true };
    return { recovery: false, source: choosePassphraseSource(this.#passphraseContext()) };
  }

  /**
   * Reads and parses the recovery key; a malformed one (a typo) is a usage error, reported before the vault is
   * opened and never taken for a wrong key.
   */
  async #readRecoveryKey(sodium: SodiumBackend, text: string | undefined): Promise<RecoveryKey> {
    const printed = text ?? (await readStdinPassphrase(this.io.stdin));
    try {
      return RecoveryKey.parse(sodium, printed);
    } catch (error) {
      if (error instanceof InvalidArgumentError) throw new UsageError(error.message);
      throw error;
    }
  }

  /**
   * Reads the secret that unlocks (passphrase or recovery key) and runs `unlock` with it, wiping it afterwards.
   * The recovery key is read first of all; a passphrase only once `beforeRead` (opening the vault) is done, so
   * "in use" or "not a vault" is reported before anyone types.
   */
  async #withSecret<T>(
    beforeRead: (sodium: SodiumBackend) => Promise<void>,
    unlock: (
      secret: { passphrase: Buffer } | { recoveryKey: RecoveryKey },
      sodium: SodiumBackend,
    ) => Promise<T>,
  ): Promise<T> {
    const choice = this.#chooseSecretSource();
    const sodium = await this.#loadSodium();
    if (choice.recovery) {
      const recoveryKey = await this.#readRecoveryKey(sodium, choice.text);
      try {
        await beforeRead(sodium);
        return await unlock({ recoveryKey }, sodium);
      } finally {
        recoveryKey.wipe(sodium);
      }
    }
    await beforeRead(sodium);
    const passphrase = await readPassphrase(sodium, choice.source, this.#passphraseContext(), false);
    try {
      return await unlock({ passphrase }, sodium);
    } finally {
      passphrase.fill(0);
    }
  }

  /**
   * Opens and unlocks a vault, runs `work`, and always closes it (which releases the lock and wipes the keys).
   * The secret's source is checked first, so a missing one (or a malformed recovery key) is reported before
   * anything is opened; the vault is opened before a passphrase is read, so "in use" or "not a vault" is reported
   * before anyone types.
   */
  async withVault<T>(dir: string, work: (vault: Vault) => Promise<T> | T): Promise<T> {
    let vault: Vault | undefined;
    try {
      return await this.#withSecret(
        async (sodium) => {
          vault = await Vault.open(dir, { sodium });
          for (const warning of vault.warnings) this.warn(warning);
          this.#openedWithWarnings = vault.warnings.length > 0;
        },
        async (secret) => {
          const opened = vault as Vault;
          const damaged =
            'passphrase' in secret
              ? await opened.unlock(secret.passphrase)
              : await opened.unlockWithRecoveryKey(secret.recoveryKey);
          // Damage of the index as a whole is said as it is; it is not an entry left out.
          const whole = damaged.filter((problem) => problem.path === INDEX_PROBLEM_PATH);
          this.#indexDamaged = whole.length > 0;
          this.#damagedEntries = damaged.length - whole.length;
          if (this.#damagedEntries > 0) {
            const count = this.#damagedEntries;
            this.warn(
              `${count} entr${count === 1 ? 'y' : 'ies'} of the vault index could not be read ` +
                `and ${count === 1 ? 'is' : 'are'} left out. Run "coffer verify" for details.`,
            );
          }
          this.warnProblems(whole);
          this.#rememberState(opened, true);
          return await work(opened);
        },
      );
    } finally {
      if (vault && !vault.locked) this.#rememberState(vault, false);
      if (vault) {
        const logProblems = vault.takeLogProblems();
        this.#logProblems += logProblems.length;
        this.warnProblems(logProblems);
      }
      vault?.close();
    }
  }

  /**
   * Compares the vault's index with the state this computer last saw of it (kept in the state folder, outside the
   * vault: FORMAT.md section 8.8) and warns when it went backwards, then remembers the state it has now. Warns once:
   * the next run compares with the state found now. A memory that cannot be read or written is a warning too.
   */
  #rememberState(vault: Vault, compare: boolean): void {
    try {
      const memory = new SeenStates(defaultStateDir(this.io.env));
      const now = vault.indexState();
      const warning = compare ? rollbackWarning(memory.recall(now.vaultId), now) : undefined;
      if (warning !== undefined) {
        this.warn(warning);
        this.#openedWithWarnings = true;
      }
      memory.remember(now);
    } catch (error) {
      this.warn(
        `Could not check whether this vault was put back to an older copy: ${(error as Error).message}. ` +
          'Check that the state folder (COFFER_STATE_DIR, or XDG_STATE_HOME) can be written.',
      );
      this.#openedWithWarnings = true;
    }
  }

  /**
   * Puts a header file back into a vault folder (which may not open as it is), once the passphrase or recovery key
   * given unlocks it.
   */
  async importHeader(dir: string, headerBytes: Buffer): Promise<void> {
    const logProblems = await this.#withSecret(
      () => Promise.resolve(),
      (secret, sodium) =>
        Vault.importHeader(
          dir,
          headerBytes,
          'passphrase' in secret ? secret.passphrase : secret.recoveryKey,
          {
            sodium,
          },
        ),
    );
    this.#logProblems += logProblems.length;
    this.warnProblems(logProblems);
  }

  /**
   * A new passphrase: COFFER_NEW_PASSPHRASE, else asked twice at a prompt. Check the source with
   * {@link Context.newPassphraseSource} before unlocking, so a missing one is reported before anyone types.
   * The caller wipes the buffer.
   */
  async readNewPassphrase(source: PassphraseSource): Promise<Buffer> {
    const sodium = await this.#loadSodium();
    return readPassphrase(sodium, source, this.#passphraseContext(), true, NEW_PASSPHRASE_WORDS);
  }

  /** Where a new passphrase will come from; see {@link Context.readNewPassphrase}. */
  newPassphraseSource(): PassphraseSource {
    return chooseNewPassphraseSource(this.#passphraseContext());
  }

  /**
   * The end of a command's closing summary ("Done: …") when the vault index had unreadable entries: the command
   * did what it could, and says that it found damage.
   */
  damageNote(): string {
    const count = this.#damagedEntries;
    if (count === 0 && this.#indexDamaged)
      return ' Damage found: the vault index was changed outside Coffer; run "coffer verify" for details.';
    if (count === 0) return '';
    return (
      ` Damage found: ${count} entr${count === 1 ? 'y' : 'ies'} of the vault index could not be read and ` +
      `${count === 1 ? 'was' : 'were'} left out; run "coffer verify" for details.`
    );
  }

  /**
   * The exit code of a command that ended with `code`. Damage found (unreadable index entries) is exit 4 even
   * when everything else worked: a script must not take a vault with damage for a healthy one. A vault opened with
   * a warning (read from a rolled-back copy of its index, or gone back to an older copy since this computer last
   * saw it), or an operation done but not recorded in the activity log, makes a success exit 1 (done with
   * warnings).
   */
  exitCode(code: number): number {
    const damage = this.#damagedEntries > 0 || this.#indexDamaged;
    if (damage && (code === EXIT.ok || code === EXIT.failure)) return EXIT.integrity;
    const warned = this.#openedWithWarnings || this.#logProblems > 0;
    return warned && code === EXIT.ok ? EXIT.failure : code;
  }

  /**
   * Runs a long operation with a progress bar (when stderr is a terminal) and cancel handling: the first Ctrl-C,
   * SIGTERM or SIGHUP aborts through the signal and the engine stops cleanly; a second one exits at once. The
   * output closing (see {@link OutputWatch}) aborts it too.
   * @param cancelled - What to tell the user when the operation was cancelled.
   * @throws {@link CliError} with exit code 128 + the signal's number (130 for Ctrl-C) when cancelled.
   */
  async job<T>(
    cancelled: string,
    run: (options: Required<Pick<JobOptions, 'signal' | 'onProgress'>>) => Promise<T>,
  ): Promise<T> {
    const controller = new AbortController();
    let stoppedBy: StopSignal = 'SIGINT';
    const unsubscribe = this.io.onInterrupt?.((signal) => {
      if (controller.signal.aborted) {
        this.#bar?.finish();
        this.io.stderr.write('coffer: interrupted\n');
        this.io.exit?.(SIGNAL_EXIT[signal]);
        return;
      }
      stoppedBy = signal;
      controller.abort();
      if (this.io.isTTY.stderr && signal === 'SIGINT') {
        this.#bar?.clear();
        this.io.stderr.write('coffer: stopping after the current step (press Ctrl-C again to quit now)\n');
      }
    });
    const unsubscribeOutput = this.#output.onClosed(() => {
      controller.abort();
    });
    const bar = this.io.isTTY.stderr
      ? new ProgressBar(this.io.stderr, {
          // A terminal of unknown size (0 columns, e.g. under script(1) without a real terminal) gets 80.
          columns: () => {
            const columns = this.io.columns?.() ?? 0;
            return columns > 0 ? columns : 80;
          },
        })
      : undefined;
    this.#bar = bar;
    try {
      return await run({
        signal: controller.signal,
        onProgress: (progress) => {
          bar?.update(progress);
        },
      });
    } catch (error) {
      if (error instanceof CancelledError) throw new CliError(cancelled, SIGNAL_EXIT[stoppedBy]);
      throw error;
    } finally {
      bar?.finish();
      this.#bar = undefined;
      unsubscribe?.();
      unsubscribeOutput();
    }
  }
}
