import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

import { encodePassphrase, type SodiumBackend } from '../core/index.js';
import { CliError, EXIT, UsageError } from './errors.js';

/** The environment variable a passphrase may come from. */
const PASSPHRASE_ENV = 'COFFER_PASSPHRASE';
/** The environment variable a new passphrase (passwd, keys add) may come from. */
const NEW_PASSPHRASE_ENV = 'COFFER_NEW_PASSPHRASE';
/** The environment variable a recovery key may come from, in place of the passphrase. */
export const RECOVERY_KEY_ENV = 'COFFER_RECOVERY_KEY';

/** Standard input as the prompt needs it: a readable stream that may be a terminal. */
export type PromptInput = Readable & { setRawMode?: (raw: boolean) => unknown };

/** Where the passphrase comes from; decided before the vault is touched, read only once it is needed. */
export type PassphraseSource =
  | { readonly kind: 'env'; readonly value: string; readonly variable?: string }
  | { readonly kind: 'stdin' }
  | { readonly kind: 'prompt' };

/** What a prompt says, for the passphrase that unlocks (default) or a new one. */
export interface PromptWords {
  readonly prompt: string;
  readonly repeat: string;
  /** Said when the two entries differ. */
  readonly mismatch: string;
}

const UNLOCK_WORDS: PromptWords = {
  prompt: 'Passphrase: ',
  repeat: 'Repeat the passphrase: ',
  mismatch: 'The two passphrases differ; nothing was created. Try again.',
};

/** The prompt's words for a new passphrase (passwd, keys add). */
export const NEW_PASSPHRASE_WORDS: PromptWords = {
  prompt: 'New passphrase: ',
  repeat: 'Repeat the new passphrase: ',
  mismatch: 'The two new passphrases differ; nothing was changed. Try again.',
};

/**
 * Picks where a new passphrase comes from: COFFER_NEW_PASSPHRASE, else a prompt (asked twice) when standard input
 * is a terminal.
 * @throws {@link UsageError} when there is neither.
 */
export function chooseNewPassphraseSource(context: PassphraseContext): PassphraseSource {
  const fromEnv = context.env[NEW_PASSPHRASE_ENV];
  if (fromEnv !== undefined) return { kind: 'env', value: fromEnv, variable: NEW_PASSPHRASE_ENV };
  if (context.stdinIsTTY && typeof context.stdin.setRawMode === 'function') return { kind: 'prompt' };
  throw new UsageError(
    `A new passphrase is needed and there is no way to ask for it (not run in a terminal). Set ` +
      `${NEW_PASSPHRASE_ENV}, or run coffer in a terminal to type it twice.`,
  );
}

/** What {@link choosePassphraseSource} looks at. */
export interface PassphraseContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly passphraseStdin: boolean;
  readonly stdin: PromptInput;
  readonly stdinIsTTY: boolean;
  /** Where the prompt is written: stderr, so it never ends up in redirected output. */
  readonly promptOutput: Writable;
}

/**
 * Picks the passphrase source: the environment variable, else `--passphrase-stdin`, else a prompt when standard
 * input is a terminal.
 * @throws {@link UsageError} when there is none, naming the three ways to give one.
 */
export function choosePassphraseSource(context: PassphraseContext): PassphraseSource {
  const fromEnv = context.env[PASSPHRASE_ENV];
  if (fromEnv !== undefined) return { kind: 'env', value: fromEnv };
  if (context.passphraseStdin) return { kind: 'stdin' };
  if (context.stdinIsTTY && typeof context.stdin.setRawMode === 'function') return { kind: 'prompt' };
  throw new UsageError(
    `A passphrase is needed and there is no way to ask for it (not run in a terminal). Set ${PASSPHRASE_ENV}, ` +
      'pipe it to standard input with --passphrase-stdin, or run coffer in a terminal to type it.',
  );
}

/**
 * Reads the passphrase from its source and encodes it for the engine. The caller owns the returned buffer and
 * must wipe it (`fill(0)`) as soon as the vault is unlocked or created.
 * @param confirm - Ask twice at a prompt and refuse a mismatch (for a new vault, where a typo would be fatal).
 * @throws {@link UsageError} for an empty passphrase; {@link CliError} for a mismatch or a cancelled prompt.
 */
export async function readPassphrase(
  sodium: SodiumBackend,
  source: PassphraseSource,
  context: PassphraseContext,
  confirm: boolean,
  words: PromptWords = UNLOCK_WORDS,
): Promise<Buffer> {
  let text: string;
  switch (source.kind) {
    case 'env':
      text = source.value;
      break;
    case 'stdin':
      text = await readStdinPassphrase(context.stdin);
      break;
    case 'prompt': {
      const input = context.stdin as PromptInput & { setRawMode: (raw: boolean) => unknown };
      text = await promptHidden(input, context.promptOutput, words.prompt);
      if (confirm && text !== '') {
        const again = await promptHidden(input, context.promptOutput, words.repeat);
        if (again !== text) throw new CliError(words.mismatch, EXIT.failure);
      }
      break;
    }
  }
  if (text === '') {
    const where = source.kind === 'env' ? ` (${source.variable ?? PASSPHRASE_ENV} is set but empty)` : '';
    throw new UsageError(`The passphrase is empty${where}. Give a passphrase.`);
  }
  return encodePassphrase(sodium, text);
}

/**
 * All of standard input as the passphrase, less one trailing newline (what `echo` or a here-string adds). Other
 * whitespace is kept: it may be part of the passphrase.
 */
export async function readStdinPassphrase(stdin: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stdin) {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer));
    }
    const all = Buffer.concat(chunks);
    let end = all.length;
    if (end > 0 && all[end - 1] === 0x0a) end--;
    if (end > 0 && all[end - 1] === 0x0d && end < all.length) end--;
    const text = all.toString('utf8', 0, end);
    all.fill(0);
    return text;
  } finally {
    for (const chunk of chunks) chunk.fill(0);
  }
}

const ENTER = new Set(['\r', '\n']);
const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const CTRL_U = '\u0015';
const BACKSPACE = new Set(['\u007f', '\b']);

/**
 * Asks for a secret on a terminal without echoing it: raw mode, so the terminal neither shows the characters nor
 * keeps them in its line buffer. Backspace and Ctrl-U edit; Enter finishes.
 * @throws {@link CliError} with exit code 130 on Ctrl-C, or on Ctrl-D at an empty line.
 */
export async function promptHidden(
  input: PromptInput & { setRawMode: (raw: boolean) => unknown },
  output: Writable,
  prompt: string,
): Promise<string> {
  output.write(prompt);
  const decoder = new StringDecoder('utf8');
  // Code points, so Backspace removes a whole character and never half of a surrogate pair.
  const typed: string[] = [];
  input.setRawMode(true);
  try {
    return await new Promise<string>((resolve, reject) => {
      const finish = (error?: CliError): void => {
        input.off('data', onData);
        input.off('end', onEnd);
        if (error) reject(error);
        else resolve(typed.join(''));
      };
      const onEnd = (): void => {
        finish(new CliError('No passphrase was entered.', EXIT.interrupted));
      };
      const onData = (chunk: Buffer | string): void => {
        const text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
        for (const ch of text) {
          if (ENTER.has(ch)) {
            finish();
            return;
          }
          if (ch === CTRL_C || (ch === CTRL_D && typed.length === 0)) {
            finish(new CliError('Cancelled.', EXIT.interrupted));
            return;
          }
          if (BACKSPACE.has(ch)) typed.pop();
          else if (ch === CTRL_U) typed.length = 0;
          // Other control characters (arrow keys, Escape sequences) are not part of a typed passphrase.
          else if (ch >= ' ' && ch !== '\u007f') typed.push(ch);
        }
      };
      input.on('data', onData);
      input.on('end', onEnd);
      input.resume();
    });
  } finally {
    input.setRawMode(false);
    input.pause();
    output.write('\n');
  }
}
