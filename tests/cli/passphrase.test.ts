import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';

import { describe, expect, it } from 'vitest';

import { main } from '../../src/cli/main.js';
import { promptHidden, readStdinPassphrase } from '../../src/cli/passphrase.js';
import { Capture, fakeIo, PASSPHRASE, requireBuiltCli, runCli, tempDir } from './helpers.js';

requireBuiltCli();

/** A fake terminal on stdin: what is typed is pushed after the CLI has switched it to raw mode. */
function fakeTerminal(): { stdin: PassThrough; rawModes: boolean[]; type: (text: string) => void } {
  const stdin = new PassThrough();
  const rawModes: boolean[] = [];
  return {
    stdin,
    rawModes,
    type: (text) => {
      stdin.write(text);
    },
  };
}

/** Types each answer once the CLI has written a prompt ending in ": ". */
function answerPrompts(stderr: Capture, type: (text: string) => void, answers: string[]): void {
  const pending = [...answers];
  stderr.onWrite = (chunk) => {
    if (chunk.endsWith(': ')) {
      const answer = pending.shift();
      if (answer !== undefined) {
        setImmediate(() => {
          type(answer);
        });
      }
    }
  };
}

describe('passphrase from standard input', () => {
  it('--passphrase-stdin reads all of stdin and strips one trailing newline', async () => {
    const cwd = tempDir();
    const init = await runCli(['init', 'vault', '--kdf', 'interactive', '--passphrase-stdin'], {
      cwd,
      passphrase: null,
      input: 'pass with spaces  \n',
    });
    expect(init).toMatchObject({ code: 0, stderr: '' });
    // The same passphrase without the newline, from the environment, unlocks it: the newline was not part of it.
    expect(await runCli(['ls', 'vault'], { cwd, passphrase: 'pass with spaces  ' })).toMatchObject({
      code: 0,
    });
    const crlf = await runCli(['ls', 'vault', '--passphrase-stdin'], {
      cwd,
      passphrase: null,
      input: 'pass with spaces  \r\n',
    });
    expect(crlf).toMatchObject({ code: 0, stderr: '' });
    const wrong = await runCli(['ls', 'vault', '--passphrase-stdin'], {
      cwd,
      passphrase: null,
      input: 'nope\n',
    });
    expect(wrong.code).toBe(3);
  });

  it('strips exactly one newline, keeping other whitespace', async () => {
    const read = (text: string): Promise<string> => readStdinPassphrase(Readable.from([Buffer.from(text)]));
    expect(await read('abc\n\n')).toBe('abc\n');
    expect(await read('abc\r\n')).toBe('abc');
    expect(await read(' abc\t')).toBe(' abc\t');
    expect(await read('abc\r')).toBe('abc\r');
  });
});

describe('no passphrase source', () => {
  it('is a usage error naming the three ways to give one, before the vault is touched', async () => {
    const cwd = tempDir();
    const result = await runCli(['init', 'vault'], { cwd, passphrase: null });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^coffer: [^\n]+\n$/u);
    expect(result.stderr).toContain('COFFER_PASSPHRASE');
    expect(result.stderr).toContain('--passphrase-stdin');
    expect(result.stderr).toContain('terminal');
    expect(existsSync(join(cwd, 'vault'))).toBe(false);
  });

  it('an empty COFFER_PASSPHRASE is refused as a usage error', async () => {
    const cwd = tempDir();
    const result = await runCli(['init', 'vault', '--kdf', 'interactive'], { cwd, passphrase: '' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/passphrase is empty/u);
  });
});

describe('terminal prompt', () => {
  it('does not echo, supports Backspace, and leaves raw mode afterwards', async () => {
    const terminal = fakeTerminal();
    const output = new Capture();
    const answer = promptHidden(
      Object.assign(terminal.stdin, { setRawMode: (raw: boolean) => terminal.rawModes.push(raw) }),
      output,
      'Passphrase: ',
    );
    terminal.type('sekrit');
    terminal.type('x\u007f');
    terminal.type('é\r');
    expect(await answer).toBe('sekrité');
    expect(output.text).toBe('Passphrase: \n');
    expect(terminal.rawModes).toEqual([true, false]);
  });

  it('Ctrl-C cancels with exit code 130', async () => {
    const terminal = fakeTerminal();
    const answer = promptHidden(
      Object.assign(terminal.stdin, { setRawMode: (raw: boolean) => terminal.rawModes.push(raw) }),
      new Capture(),
      'Passphrase: ',
    );
    terminal.type('abc\u0003');
    await expect(answer).rejects.toMatchObject({ exitCode: 130 });
    expect(terminal.rawModes).toEqual([true, false]);
  });

  it('init asks twice and creates the vault when both match', async () => {
    const cwd = tempDir();
    const terminal = fakeTerminal();
    const fake = fakeIo({ env: {}, tty: terminal });
    answerPrompts(fake.stderr, terminal.type, [`${PASSPHRASE}\r`, `${PASSPHRASE}\r`]);
    const code = await main(['init', join(cwd, 'vault'), '--kdf', 'interactive'], fake.io);
    expect(fake.stderr.text).toBe('Passphrase: \nRepeat the passphrase: \n');
    expect(code).toBe(0);
    expect(fake.stderr.text).not.toContain(PASSPHRASE);
    // And the passphrase typed is the one the vault has.
    const check = fakeIo();
    expect(await main(['ls', join(cwd, 'vault')], check.io)).toBe(0);
  });

  it('init refuses two different passphrases and creates nothing', async () => {
    const cwd = tempDir();
    const terminal = fakeTerminal();
    const fake = fakeIo({ env: {}, tty: terminal });
    answerPrompts(fake.stderr, terminal.type, ['one\r', 'two\r']);
    const code = await main(['init', join(cwd, 'vault'), '--kdf', 'interactive'], fake.io);
    expect(code).toBe(1);
    expect(fake.stderr.text).toMatch(/coffer: The two passphrases differ/u);
    expect(existsSync(join(cwd, 'vault'))).toBe(false);
  });

  it('an existing vault asks once', async () => {
    const cwd = tempDir();
    expect(await main(['init', join(cwd, 'vault'), '--kdf', 'interactive'], fakeIo().io)).toBe(0);
    const terminal = fakeTerminal();
    const fake = fakeIo({ env: {}, tty: terminal });
    answerPrompts(fake.stderr, terminal.type, [`${PASSPHRASE}\r`]);
    expect(await main(['info', join(cwd, 'vault')], fake.io)).toBe(0);
    expect(fake.stderr.text).toBe('Passphrase: \n');
    expect(fake.stdout.text).toMatch(/Format version:\s+1/u);
  });
});
