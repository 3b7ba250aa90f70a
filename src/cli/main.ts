import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';

// Not from core/index.js, which loads the whole engine; commands load it below, when they run.
import { CofferError } from '../core/errors.js';
import { helpText, parseCommandLine } from './args.js';
import type { CliIo, Context } from './context.js';
import { CliError, EXIT, exitCodeFor } from './errors.js';
import { oneLine, terminalSafe } from './format.js';
import { OutputWatch } from './output.js';

export type { CliIo } from './context.js';
export { EXIT } from './errors.js';

/** The package version, read at run time: package.json is outside the compiled tree. */
function version(): string {
  // The same relative path works from src/cli (tests) and from dist/bundle (the installed command).
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  const parsed = JSON.parse(text) as { version?: unknown };
  return typeof parsed.version === 'string' ? parsed.version : 'unknown';
}

/** The one-line message for an error; unexpected ones say so, since they are bugs rather than user mistakes. */
function describeError(error: unknown): string {
  if (error instanceof CliError || error instanceof CofferError) return error.message;
  const message = error instanceof Error ? error.message : String(error);
  return `unexpected error: ${message} (run again with --debug for details)`;
}

function stackOf(error: unknown): string {
  const lines: string[] = [];
  for (let at: unknown = error, depth = 0; at !== undefined && depth < 8; depth++) {
    lines.push(at instanceof Error ? (at.stack ?? `${at.name}: ${at.message}`) : `thrown: ${inspect(at)}`);
    at = at instanceof Error ? at.cause : undefined;
    if (at !== undefined) lines.push('caused by:');
  }
  return lines.join('\n');
}

/**
 * Runs one `coffer` command line to completion.
 * @param argv - The arguments after the program name (`process.argv.slice(2)`).
 * @param io - The streams, environment and terminal state to use; {@link processIo} for the real process.
 * @returns The exit code: 0 success, 1 failure or partial success, 2 usage error, 3 wrong passphrase,
 * 4 integrity failure or damage found, 5 vault in use, 129/130/143 cancelled by SIGHUP/Ctrl-C/SIGTERM, 141 the
 * output was closed (`| head`).
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const output = new OutputWatch([io.stdout, io.stderr]);
  const code = await runCommandLine(argv, io, output);
  await output.settle();
  const failure = output.failure;
  if (failure === undefined) return code;
  if (failure.quiet) return EXIT.outputClosed;
  io.stderr.write(`coffer: could not write the output (${failure.code}); it is incomplete.\n`);
  return code === EXIT.ok ? EXIT.failure : code;
}

async function runCommandLine(argv: readonly string[], io: CliIo, output: OutputWatch): Promise<number> {
  // Known before parsing, so even a usage error can be debugged.
  const debug = argv.includes('--debug');
  let ctx: Context | undefined;
  try {
    const commandLine = parseCommandLine(argv);
    switch (commandLine.kind) {
      case 'help':
        io.stdout.write(helpText(commandLine.command));
        return EXIT.ok;
      case 'version':
        io.stdout.write(`coffer ${version()}\n`);
        return EXIT.ok;
      case 'run': {
        // Imported here rather than at the top, so --help, --version and usage errors skip loading the engine.
        const [{ HANDLERS }, { Context }] = await Promise.all([
          import('./commands/index.js'),
          import('./context.js'),
        ]);
        ctx = new Context(io, commandLine.args, commandLine.options, commandLine.flags, output);
        return ctx.exitCode(await HANDLERS[commandLine.command](ctx));
      }
    }
  } catch (error) {
    // Nobody is reading any more (the pipe closed): stop quietly, as a Unix tool ended by SIGPIPE does.
    if (!output.closed) {
      io.stderr.write(`coffer: ${terminalSafe(oneLine(describeError(error)))}\n`);
      if (debug) io.stderr.write(`${stackOf(error)}\n`);
    }
    const code = exitCodeFor(error);
    return ctx ? ctx.exitCode(code) : code;
  }
}

/** The real process as a {@link CliIo}: standard streams, environment, SIGINT/SIGTERM/SIGHUP and `process.exit`. */
export function processIo(): CliIo {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    isTTY: {
      stdin: process.stdin.isTTY,
      stdout: process.stdout.isTTY,
      stderr: process.stderr.isTTY,
    },
    columns: () => process.stderr.columns,
    onInterrupt: (listener) => {
      const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((signal) => {
        const handler = (): void => {
          listener(signal);
        };
        process.on(signal, handler);
        return () => process.off(signal, handler);
      });
      return () => {
        for (const unsubscribe of handlers) unsubscribe();
      };
    },
    exit: (code) => {
      process.exit(code);
    },
  };
}
