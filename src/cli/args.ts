import { parseArgs } from 'node:util';

// Not from core/index.js, which loads the whole engine: --help and --version load this module too.
import { DEFAULT_KDF_PRESET, KDF_PRESETS } from '../core/crypto/kdf.js';
import { CONTENT_PADDINGS, DEFAULT_CONTENT_PADDING } from '../core/crypto/padding.js';
import { ON_EXISTING_CHOICES } from '../core/types.js';
import { UsageError } from './errors.js';

/** The commands, in the order help lists them. */
export const COMMAND_NAMES = [
  'init',
  'add',
  'ls',
  'restore',
  'mkdir',
  'mv',
  'rm',
  'verify',
  'info',
  'passwd',
  'keys',
  'recovery-key',
  'header',
  'log',
  'rotate',
] as const;

export type CommandName = (typeof COMMAND_NAMES)[number];

interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  /** Shown in help after the option, for string options. */
  readonly valueName?: string;
  /** Accepted values of a string option; anything else is a usage error. */
  readonly choices?: readonly string[];
  readonly description: string;
}

interface CommandSpec {
  /** Positional arguments as shown in help, after the command name. */
  readonly synopsis: string;
  readonly summary: string;
  /** Extra paragraphs for `coffer <command> --help`. */
  readonly details?: string;
  readonly minArgs: number;
  readonly maxArgs: number;
  readonly options: Readonly<Record<string, OptionSpec>>;
}

const KDF_NAMES = Object.keys(KDF_PRESETS);

/** The `--kdf <preset>` option, with what it sets in each command. */
function kdfOption(description: string): OptionSpec {
  return { type: 'string', valueName: KDF_NAMES.join('|'), choices: KDF_NAMES, description };
}

/** Flags every command accepts. */
const GLOBAL_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  'passphrase-stdin': {
    type: 'boolean',
    description: 'Read the passphrase from standard input (all of it; one trailing newline is removed).',
  },
  'recovery-key-stdin': {
    type: 'boolean',
    description: 'Unlock with the recovery key, read from standard input, instead of a passphrase.',
  },
  verbose: {
    type: 'boolean',
    description: 'Print one line per file as add or restore finishes it ("added /a.txt").',
  },
  debug: { type: 'boolean', description: 'Show stack traces with errors.' },
  help: { type: 'boolean', short: 'h', description: 'Show help.' },
  version: { type: 'boolean', description: 'Print the version.' },
};

const COMMANDS: Readonly<Record<CommandName, CommandSpec>> = {
  init: {
    synopsis: '<vault-dir>',
    summary: 'Create a new, empty vault in a new or empty folder.',
    details:
      'The passphrase cannot be recovered or reset: without it the files in the vault are lost. In a terminal ' +
      'it is asked for twice.',
    minArgs: 1,
    maxArgs: 1,
    options: {
      kdf: kdfOption(
        `Key-derivation strength (default ${DEFAULT_KDF_PRESET}); stronger is slower to unlock.`,
      ),
      padding: {
        type: 'string',
        valueName: CONTENT_PADDINGS.join('|'),
        choices: CONTENT_PADDINGS,
        description:
          `How stored files are padded so their sizes show only roughly (default ${DEFAULT_CONTENT_PADDING}: ` +
          'about 1.3 % more disk on a mix of system files); fixed for the life of the vault.',
      },
    },
  },
  add: {
    synopsis: '<vault-dir> <path>...',
    summary: 'Encrypt files and folders (recursively) into the vault.',
    details:
      'Symbolic links, special files and names that cannot be stored are skipped with a warning (exit code 1); ' +
      'the rest is added.',
    minArgs: 2,
    maxArgs: Infinity,
    options: {
      to: {
        type: 'string',
        valueName: 'vault-folder',
        description: 'Vault folder to add into, created if missing (default /).',
      },
      'on-existing': {
        type: 'string',
        valueName: 'choice',
        choices: ON_EXISTING_CHOICES,
        description:
          'When a name is already in the vault: fail (default: not added, a warning), skip, keep-both (a ' +
          'numbered name, "report (2).pdf") or replace (a file by a file). A folder onto a folder merges.',
      },
    },
  },
  ls: {
    synopsis: '<vault-dir> [<vault-folder>]',
    summary: 'List a vault folder (default /).',
    minArgs: 1,
    maxArgs: 2,
    options: {
      recursive: { type: 'boolean', short: 'r', description: 'Also list everything below it.' },
      json: {
        type: 'boolean',
        description: 'Print a JSON array of { path, type, size, mtime } (mtime in ms since the epoch).',
      },
    },
  },
  restore: {
    synopsis: '<vault-dir> <vault-path>... --to <dest-dir>',
    summary: 'Decrypt files and folders from the vault into a folder on disk.',
    details:
      'Use "/" to restore everything. Damaged files are reported and not written (exit code 4); the rest is ' +
      'restored.',
    minArgs: 2,
    maxArgs: Infinity,
    options: {
      to: { type: 'string', valueName: 'dest-dir', description: 'Folder to restore into (required).' },
      overwrite: { type: 'boolean', description: 'Replace existing files (otherwise they are left alone).' },
    },
  },
  mkdir: {
    synopsis: '<vault-dir> <vault-folder>...',
    summary: 'Create vault folders, with any missing parents.',
    minArgs: 2,
    maxArgs: Infinity,
    options: {},
  },
  mv: {
    synopsis: '<vault-dir> <vault-path>... <vault-folder>',
    summary: 'Move files and folders into a vault folder, or rename one with --rename.',
    details: 'With --rename: coffer mv <vault-dir> <vault-path> <new-name> --rename',
    minArgs: 3,
    maxArgs: Infinity,
    options: {
      rename: { type: 'boolean', description: 'Rename <vault-path> in place to <new-name>.' },
    },
  },
  rm: {
    synopsis: '<vault-dir> <vault-path>...',
    summary: 'Delete files and folders (folders with everything in them) from the vault.',
    minArgs: 2,
    maxArgs: Infinity,
    options: {},
  },
  verify: {
    synopsis: '<vault-dir>',
    summary: 'Check the vault for damage (exit code 4 when any is found).',
    details:
      'Stored files (packs, blob files) that no entry names are listed and kept, with exit code 1: they may ' +
      'belong to an index that has not arrived yet, or to another copy of the index. --repair brings their ' +
      'contents back: to the entry that lost them, or as /lost+found/recovered-<id> files; ' +
      '--delete-unreferenced --yes deletes them.',
    minArgs: 1,
    maxArgs: 1,
    options: {
      'read-data': {
        type: 'boolean',
        description: 'Also decrypt and authenticate every byte of every file (reads the whole vault).',
      },
      repair: {
        type: 'boolean',
        description:
          'Bring the contents of stored files no entry names back into the vault: to the entry that lost them, ' +
          'else under /lost+found.',
      },
      'delete-unreferenced': {
        type: 'boolean',
        description:
          'Delete the stored files no entry names (after --repair, those it could not bring back).',
      },
      yes: { type: 'boolean', description: 'Confirm --delete-unreferenced.' },
    },
  },
  info: {
    synopsis: '<vault-dir>',
    summary: 'Show the format, key-derivation settings, counts and sizes.',
    minArgs: 1,
    maxArgs: 1,
    options: { json: { type: 'boolean', description: 'Print the information as JSON.' } },
  },
  passwd: {
    synopsis: '<vault-dir>',
    summary: 'Change the passphrase you unlock with (only its key slot is rewritten).',
    details:
      `The new passphrase comes from COFFER_NEW_PASSPHRASE, else it is asked for twice. The old one stops ` +
      'working at once, except with header copies made before (coffer header export): they keep the ' +
      'passphrases they had.',
    minArgs: 1,
    maxArgs: 1,
    options: {
      kdf: kdfOption("Key-derivation strength of the new passphrase (default: the old one's)."),
    },
  },
  keys: {
    synopsis: '<vault-dir> list|add|remove [<slot>]',
    summary: 'List the key slots, add a passphrase, or remove a slot by its number.',
    details:
      'A vault holds at most 8 key slots. "add" takes the new passphrase as passwd does. "remove <slot>" ' +
      'refuses the last slot and the slot you unlocked with, so what you just typed always still opens the vault.',
    minArgs: 2,
    maxArgs: 3,
    options: {
      kdf: kdfOption(`Key-derivation strength of an added passphrase (default ${DEFAULT_KDF_PRESET}).`),
      json: { type: 'boolean', description: 'list: print the slots as JSON.' },
    },
  },
  'recovery-key': {
    synopsis: '<vault-dir>',
    summary: 'Make a new recovery key, print it once, and revoke the previous one.',
    details:
      'Write the key down and keep it apart from the vault: it opens the vault like a passphrase ' +
      '(COFFER_RECOVERY_KEY or --recovery-key-stdin with any command). Coffer keeps no copy.',
    minArgs: 1,
    maxArgs: 1,
    options: { json: { type: 'boolean', description: 'Print {"recoveryKey": "..."}.' } },
  },
  header: {
    synopsis: '<vault-dir> export|import <file>',
    summary: "Save the vault's header to a file, or put a saved one back.",
    details:
      'An exported header opens the vault with the passphrases and recovery key it held when exported, even after ' +
      'they are changed or removed: keep it as safe as they are, and export again after each change. import ' +
      "refuses a file that is not a Coffer header (exit 1), another vault's header or a damaged one (exit 4), " +
      "one the passphrase does not open (exit 3), and one that lacks a key the vault's data is sealed under " +
      '(exported before a key rotation; exit 1), writing nothing.',
    minArgs: 3,
    maxArgs: 3,
    options: {},
  },
  log: {
    synopsis: '<vault-dir>',
    summary: "Show the vault's activity log: unlocks, changes, restores, checks, key changes.",
    details:
      'The log is sealed inside the vault and keeps the newest 10,000 entries; older ones are dropped and ' +
      'counted. Failed unlock attempts are counted and shown with the next unlock. Entries that are damaged, ' +
      'missing, reordered or replayed, or sealed under a key the header in use lacks (an older header put back), ' +
      'are reported (exit code 4). Reading the log unlocks the vault, which is ' +
      'logged too: on a vault that can be written, that repairs a last entry cut off by a crash (shown as ' +
      '"log repaired after a crash"); on one that cannot, such an entry is reported with exit code 1.',
    minArgs: 1,
    maxArgs: 1,
    options: {
      json: {
        type: 'boolean',
        description:
          'Print { entries: [{ seq, time, kind, outcome, counts, flags, keyId }], dropped, problems }.',
      },
    },
  },
  rotate: {
    synopsis: '<vault-dir>',
    summary:
      'Add a new data key: new data is written under it, what is stored keeps its key and still reads.',
    details:
      'Only the vault header is rewritten (atomically); no stored byte is re-encrypted. "coffer info" lists the ' +
      'key ids, the last one being the key new data is written with.\n\n' +
      'With --reencrypt, everything stored is then re-encrypted under that key and the older keys are removed ' +
      'from the header and its backup. A vault that already has several keys (an earlier rotation, or a ' +
      're-encryption that was stopped) is not rotated again: the re-encryption continues towards its newest key. ' +
      'It can be stopped (Ctrl-C, exit code 130) or cut off by a crash at any point: every file still reads, ' +
      'and running it again continues where it stopped. Anything damaged stays under its old key, which is kept ' +
      '(exit code 4).\n\n' +
      'Refused (exit code 4, nothing written) while the vault names a key id above every one the header holds: ' +
      'the header is older than the data; import the newer one first ("coffer header <vault-dir> import <file>").',
    minArgs: 1,
    maxArgs: 1,
    options: {
      reencrypt: {
        type: 'boolean',
        description: 'Re-encrypt everything stored under the new key and remove the older keys.',
      },
      json: {
        type: 'boolean',
        description:
          'Print { keyId, previousKeyId } or, with --reencrypt, { keyId, rotated, removedKeyIds, ' +
          'filesReencrypted, bytesReencrypted, recordsResealed, logEntriesResealed, problems }.',
      },
    },
  },
};

/** Flags that apply whatever the command. */
export interface GlobalFlags {
  readonly passphraseStdin: boolean;
  readonly recoveryKeyStdin: boolean;
  readonly verbose: boolean;
  readonly debug: boolean;
}

/** What the command line asks for. */
export type CommandLine =
  | { readonly kind: 'help'; readonly command?: CommandName }
  | { readonly kind: 'version' }
  | {
      readonly kind: 'run';
      readonly command: CommandName;
      /** Positional arguments after the command name. */
      readonly args: readonly string[];
      readonly options: Readonly<Record<string, string | boolean | undefined>>;
      readonly flags: GlobalFlags;
    };

type ParseOptions = Record<string, { type: 'string' | 'boolean'; short?: string }>;

function parseOptionsOf(specs: Readonly<Record<string, OptionSpec>>): ParseOptions {
  const out: ParseOptions = {};
  for (const [name, spec] of Object.entries(specs)) {
    out[name] = spec.short === undefined ? { type: spec.type } : { type: spec.type, short: spec.short };
  }
  return out;
}

function isCommandName(name: string): name is CommandName {
  return (COMMAND_NAMES as readonly string[]).includes(name);
}

/**
 * Refuses a passphrase given as an argument before anything else looks at the arguments, so the refusal never
 * depends on the command and the value is never echoed back in an error message.
 */
function refusePassphraseArgument(argv: readonly string[]): void {
  for (const arg of argv) {
    if (arg === '--') return;
    if (arg === '--passphrase' || arg.startsWith('--passphrase=')) {
      throw new UsageError(
        '--passphrase is not accepted: a passphrase on the command line is visible to other programs and kept ' +
          'in shell history. Set COFFER_PASSPHRASE, pipe it with --passphrase-stdin, or type it when asked.',
      );
    }
    if (arg === '--recovery-key' || arg.startsWith('--recovery-key=')) {
      throw new UsageError(
        '--recovery-key is not accepted: a key on the command line is visible to other programs and kept in ' +
          'shell history. Set COFFER_RECOVERY_KEY or pipe it with --recovery-key-stdin.',
      );
    }
  }
}

/** Node's parseArgs messages, reworded to name the command and where to look for help. */
function usageErrorFrom(error: unknown, command: CommandName): UsageError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const quoted = /'([^']*)'/.exec(message)?.[1];
  const help = `See "coffer ${command} --help".`;
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return new UsageError(`Unknown option "${quoted ?? message}" for "coffer ${command}". ${help}`);
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return new UsageError(`${message.replace(/\.$/u, '')}. ${help}`);
    default:
      return new UsageError(`${message} ${help}`);
  }
}

/**
 * Parses the command line strictly: unknown commands and options, missing or extra arguments and bad option values
 * are usage errors.
 * @param argv - The arguments after the program name.
 * @throws {@link UsageError} describing what is wrong.
 */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  refusePassphraseArgument(argv);
  // A lenient first pass only finds the command, so global flags may come before or after it; its options are
  // the union of every command's, so an option value is never mistaken for the command name.
  const everyOption: Record<string, OptionSpec> = { ...GLOBAL_OPTIONS };
  for (const spec of Object.values(COMMANDS)) Object.assign(everyOption, spec.options);
  const first = parseArgs({
    args: [...argv],
    options: parseOptionsOf(everyOption),
    strict: false,
    allowPositionals: true,
  });
  const name = first.positionals[0];
  if (name === undefined) {
    if (first.values.version === true) return { kind: 'version' };
    if (first.values.help === true) return { kind: 'help' };
    throw new UsageError('No command given. Run "coffer --help" for the list of commands.');
  }
  if (!isCommandName(name)) {
    throw new UsageError(
      `Unknown command "${name}". The commands are: ${COMMAND_NAMES.join(', ')}. Run "coffer --help" for more.`,
    );
  }
  const spec = COMMANDS[name];
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: parseOptionsOf({ ...GLOBAL_OPTIONS, ...spec.options }),
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    throw usageErrorFrom(error, name);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help === true) return { kind: 'help', command: name };
  if (values.version === true) return { kind: 'version' };
  const args = parsed.positionals.slice(1);
  const help = `See "coffer ${name} --help".`;
  if (args.length < spec.minArgs) {
    throw new UsageError(`Missing arguments: usage is "coffer ${name} ${spec.synopsis}". ${help}`);
  }
  if (args.length > spec.maxArgs) {
    throw new UsageError(`Too many arguments: usage is "coffer ${name} ${spec.synopsis}". ${help}`);
  }
  for (const [option, optionSpec] of Object.entries(spec.options)) {
    const value = values[option];
    if (typeof value === 'string' && optionSpec.choices && !optionSpec.choices.includes(value)) {
      throw new UsageError(
        `Invalid value "${value}" for --${option}: use one of ${optionSpec.choices.join(', ')}. ${help}`,
      );
    }
    if (value === '') throw new UsageError(`--${option} needs a value. ${help}`);
  }
  return {
    kind: 'run',
    command: name,
    args,
    options: values,
    flags: {
      passphraseStdin: values['passphrase-stdin'] === true,
      recoveryKeyStdin: values['recovery-key-stdin'] === true,
      verbose: values.verbose === true,
      debug: values.debug === true,
    },
  };
}

function optionLines(specs: Readonly<Record<string, OptionSpec>>): string[] {
  const rows = Object.entries(specs).map(([name, spec]) => {
    const flag = `${spec.short === undefined ? '    ' : `-${spec.short}, `}--${name}`;
    return [
      spec.type === 'string' ? `${flag} <${spec.valueName ?? 'value'}>` : flag,
      spec.description,
    ] as const;
  });
  const width = Math.max(...rows.map(([flag]) => flag.length));
  return rows.map(([flag, description]) => `  ${flag.padEnd(width)}  ${description}`);
}

const PASSPHRASE_HELP =
  'The passphrase is read from the COFFER_PASSPHRASE environment variable, else from standard input with ' +
  '--passphrase-stdin, else asked for (not echoed) when run in a terminal. It is never accepted as an argument. ' +
  'To unlock with the recovery key instead, set COFFER_RECOVERY_KEY or use --recovery-key-stdin.';

const EXIT_HELP =
  'Exit codes: 0 success; 1 failure, or done with warnings; 2 usage error; 3 wrong passphrase; ' +
  '4 damaged data found; 5 vault in use by another process; 130 interrupted (Ctrl-C); 143/129 stopped by ' +
  'SIGTERM/SIGHUP; 141 the output was closed (piped into head).';

/** The text of `coffer --help`, or of `coffer <command> --help`. */
export function helpText(command?: CommandName): string {
  if (command !== undefined) {
    const spec = COMMANDS[command];
    const lines = [`Usage: coffer ${command} ${spec.synopsis} [options]`, '', spec.summary];
    if (spec.details !== undefined) lines.push('', spec.details);
    if (Object.keys(spec.options).length > 0) lines.push('', 'Options:', ...optionLines(spec.options));
    lines.push('', 'Global options:', ...optionLines(GLOBAL_OPTIONS), '', PASSPHRASE_HELP, '', EXIT_HELP);
    return `${lines.join('\n')}\n`;
  }
  const rows = COMMAND_NAMES.map((name) => [`${name} ${COMMANDS[name].synopsis}`, COMMANDS[name].summary]);
  const width = Math.max(...rows.map(([usage]) => usage?.length ?? 0));
  return `${[
    'coffer: encrypted local file vaults',
    '',
    'Usage: coffer <command> <vault-dir> [arguments] [options]',
    '',
    'Commands:',
    ...rows.map(([usage, summary]) => `  ${(usage ?? '').padEnd(width)}  ${summary ?? ''}`),
    '',
    'Global options:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'Vault paths start with "/" (the vault\'s root); "Photos/a.jpg" means "/Photos/a.jpg".',
    'Run "coffer <command> --help" for the options of a command.',
    '',
    PASSPHRASE_HELP,
    '',
    EXIT_HELP,
  ].join('\n')}\n`;
}
