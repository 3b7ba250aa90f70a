import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';

// Not from core/index.js, which loads the whole engine; commands load it below, when they run.
import { CofferError } from '../core/errors.js';
import { helpText, parseCommandLine } from './args.js';
import type { CliIo } from './context.js';
import { CliError, EXIT, exitCodeFor } from './errors.js';
import { oneLine, terminalSafe } from './format.js';

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
 * 4 integrity failure, 5 vault in use, 130 interrupted.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  // Known before parsing, so even a usage error can be debugged.
  const debug = argv.includes('--debug');
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
        const ctx = new Context(io, commandLine.args, commandLine.options, commandLine.flags);
        return await HANDLERS[commandLine.command](ctx);
      }
    }
  } catch (error) {
    io.stderr.write(`coffer: ${terminalSafe(oneLine(describeError(error)))}\n`);
    if (debug) io.stderr.write(`${stackOf(error)}\n`);
    return exitCodeFor(error);
  }
}

/** The real process as a {@link CliIo}: standard streams, environment, SIGINT and `process.exit`. */
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
      process.on('SIGINT', listener);
      return () => {
        process.off('SIGINT', listener);
      };
    },
    exit: (code) => {
      process.exit(code);
    },
  };
}
