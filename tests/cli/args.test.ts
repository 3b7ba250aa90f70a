import { describe, expect, it } from 'vitest';

import { helpText, parseCommandLine } from '../../src/cli/args.js';
import { UsageError } from '../../src/cli/errors.js';

describe('parseCommandLine', () => {
  it('accepts global flags before and after the command, and option values that look like commands', () => {
    expect(parseCommandLine(['--verbose', 'add', 'v', 'a', 'b', '--to', 'ls', '--passphrase-stdin'])).toEqual(
      {
        kind: 'run',
        command: 'add',
        args: ['v', 'a', 'b'],
        options: { verbose: true, to: 'ls', 'passphrase-stdin': true },
        flags: { passphraseStdin: true, recoveryKeyStdin: false, verbose: true, debug: false },
      },
    );
  });

  it('takes everything after -- as arguments', () => {
    const parsed = parseCommandLine(['rm', 'v', '--', '--odd-name']);
    expect(parsed).toMatchObject({ kind: 'run', args: ['v', '--odd-name'] });
  });

  it('recognises help and version', () => {
    expect(parseCommandLine(['--help'])).toEqual({ kind: 'help' });
    expect(parseCommandLine(['-h'])).toEqual({ kind: 'help' });
    expect(parseCommandLine(['ls', '--help'])).toEqual({ kind: 'help', command: 'ls' });
    expect(parseCommandLine(['--version'])).toEqual({ kind: 'version' });
  });

  it('refuses a flag that belongs to another command', () => {
    expect(() => parseCommandLine(['ls', 'v', '--overwrite'])).toThrow(UsageError);
  });

  it('refuses --passphrase in any position before --', () => {
    expect(() => parseCommandLine(['add', 'v', 'f', '--passphrase', 'x'])).toThrow(/not accepted/u);
    expect(parseCommandLine(['add', 'v', '--', '--passphrase'])).toMatchObject({
      args: ['v', '--passphrase'],
    });
  });

  it('checks --kdf against the engine presets', () => {
    expect(parseCommandLine(['init', 'v', '--kdf', 'sensitive'])).toMatchObject({
      options: { kdf: 'sensitive' },
    });
    expect(() => parseCommandLine(['init', 'v', '--kdf', 'weak'])).toThrow(/use one of interactive/u);
  });

  it('checks --padding against the engine schemes', () => {
    expect(parseCommandLine(['init', 'v', '--padding', 'none'])).toMatchObject({
      options: { padding: 'none' },
    });
    expect(() => parseCommandLine(['init', 'v', '--padding', 'zeros'])).toThrow(/use one of padme, none/u);
  });

  it('help for a command lists its options and the global ones', () => {
    const text = helpText('ls');
    expect(text).toContain('-r, --recursive');
    expect(text).toContain('--json');
    expect(text).toContain('--passphrase-stdin');
  });
});
