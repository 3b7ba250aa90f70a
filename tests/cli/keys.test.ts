import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { PASSPHRASE, requireBuiltCli, runCli, tempDir, type RunOptions, type RunResult } from './helpers.js';

requireBuiltCli();

/** passwd, keys, recovery-key, header, and unlocking with the recovery key, through the built CLI. */
describe('coffer key commands', () => {
  let cwd: string;
  const cli = (args: string[], options: Partial<RunOptions> = {}): Promise<RunResult> =>
    runCli(args, { cwd, ...options });
  const headers = (vault = 'vault'): string[] =>
    ['coffer.header', 'coffer.header.bak'].map((name) =>
      readFileSync(join(cwd, vault, name)).toString('hex'),
    );
  const opensWith = async (passphrase: string): Promise<number | null> =>
    (await cli(['ls', 'vault'], { passphrase })).code;

  beforeEach(async () => {
    cwd = tempDir();
    expect((await cli(['init', 'vault', '--kdf', 'interactive'])).code).toBe(0);
  });

  it('passwd changes the passphrase: the old one fails (exit 3), the new one opens', async () => {
    const result = await cli(['passwd', 'vault', '--kdf', 'interactive'], {
      env: { COFFER_NEW_PASSPHRASE: 'a new passphrase' },
    });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/Changed the passphrase of key slot 0/u);
    expect(await opensWith(PASSPHRASE)).toBe(3);
    expect(await opensWith('a new passphrase')).toBe(0);
  });

  it('passwd with a wrong current passphrase (3), or no way to get the new one (2), changes nothing', async () => {
    const before = headers();
    const wrong = await cli(['passwd', 'vault'], {
      passphrase: 'wrong',
      env: { COFFER_NEW_PASSPHRASE: 'x' },
    });
    expect(wrong.code).toBe(3);
    const noNew = await cli(['passwd', 'vault']);
    expect(noNew.code).toBe(2);
    expect(noNew.stderr).toMatch(/COFFER_NEW_PASSPHRASE/u);
    expect(headers()).toEqual(before);
  });

  it('keys add, list and remove; refuses the slot in use, the last slot, a bad number and a ninth slot', async () => {
    const add = (passphrase: string): Promise<RunResult> =>
      cli(['keys', 'vault', 'add', '--kdf', 'interactive'], { env: { COFFER_NEW_PASSPHRASE: passphrase } });
    expect((await add('second')).stdout).toMatch(/Added key slot 1: passphrase, Argon2id, 2 passes/u);
    const list = await cli(['keys', 'vault', 'list', '--json']);
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({ index: 0, kind: 'passphrase', unlockedWith: true }),
      expect.objectContaining({ index: 1, kind: 'passphrase', unlockedWith: false }),
    ]);
    const before = headers();
    const own = await cli(['keys', 'vault', 'remove', '0']);
    expect(own.code).toBe(1);
    expect(own.stderr).toMatch(/just unlocked with/u);
    expect((await cli(['keys', 'vault', 'remove', 'first'])).code).toBe(2);
    expect((await cli(['keys', 'vault', 'remove', '5'])).code).toBe(1);
    expect(headers()).toEqual(before);

    expect((await cli(['keys', 'vault', 'remove', '0'], { passphrase: 'second' })).code).toBe(0);
    expect(await opensWith(PASSPHRASE)).toBe(3);
    const last = await cli(['keys', 'vault', 'remove', '0'], { passphrase: 'second' });
    expect(last.code).toBe(1);
    expect(last.stderr).toMatch(/only key slot/u);

    for (let i = 1; i < 8; i++)
      expect(
        (
          await cli(['keys', 'vault', 'add', '--kdf', 'interactive'], {
            passphrase: 'second',
            env: { COFFER_NEW_PASSPHRASE: `pw ${i}` },
          })
        ).code,
      ).toBe(0);
    const full = headers();
    const ninth = await cli(['keys', 'vault', 'add', '--kdf', 'interactive'], {
      passphrase: 'second',
      env: { COFFER_NEW_PASSPHRASE: 'ninth' },
    });
    expect(ninth.code).toBe(1);
    expect(ninth.stderr).toMatch(/at most 8 key slots/u);
    expect(headers()).toEqual(full);
  });

  it('recovery-key prints a key that unlocks any command; a typo is a usage error; a new key revokes the old', async () => {
    const made = await cli(['recovery-key', 'vault', '--json']);
    expect(made.code).toBe(0);
    const { recoveryKey } = JSON.parse(made.stdout) as { recoveryKey: string };
    expect(recoveryKey).toMatch(/^[A-Z2-7]{5}(-[A-Z2-7]{5}){7}$/u);
    const withKey = (key: string): Promise<RunResult> =>
      cli(['ls', 'vault'], { passphrase: null, env: { COFFER_RECOVERY_KEY: key } });
    expect((await withKey(recoveryKey)).code).toBe(0);
    expect(
      (await cli(['ls', 'vault', '--recovery-key-stdin'], { passphrase: null, input: `${recoveryKey}\n` }))
        .code,
    ).toBe(0);
    const typo = await withKey(`${recoveryKey.slice(0, -1)}${recoveryKey.endsWith('A') ? 'B' : 'A'}`);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/typo/u);
    expect((await withKey('not a key')).code).toBe(2);

    const text = await cli(['recovery-key', 'vault'], {
      passphrase: null,
      env: { COFFER_RECOVERY_KEY: recoveryKey },
    });
    expect(text.code).toBe(0);
    const second = text.stdout.split('\n')[0] ?? '';
    expect(second).toMatch(/^[A-Z2-7]{5}(-[A-Z2-7]{5}){7}$/u);
    const revoked = await withKey(recoveryKey);
    expect(revoked.code).toBe(3);
    expect(revoked.stderr).toMatch(/Wrong recovery key/u);
    expect((await withKey(second)).code).toBe(0);
    expect(await opensWith(PASSPHRASE)).toBe(0);
  });

  it('info --json lists the slots and key ids', async () => {
    await cli(['recovery-key', 'vault']);
    const info = JSON.parse((await cli(['info', 'vault', '--json'])).stdout) as Record<string, unknown>;
    expect(info.slots).toEqual([
      {
        index: 0,
        kind: 'passphrase',
        kdf: { opslimit: 2, memlimitKiB: 65536, preset: 'interactive' },
        unlockedWith: true,
      },
      { index: 1, kind: 'recovery-key', unlockedWith: false },
    ]);
    expect(info.keyIds).toEqual([1]);
  });

  it('info says the vault is read only while the header in use is older than the data', async () => {
    expect((await cli(['header', 'vault', 'export', 'older.header'])).code).toBe(0);
    expect((await cli(['rotate', 'vault'])).code).toBe(0);
    expect((await cli(['info', 'vault'])).stdout).toMatch(/^Read-only: {8}no$/mu);
    writeFileSync(join(cwd, 'vault', 'coffer.header'), readFileSync(join(cwd, 'older.header')));
    const info = await cli(['info', 'vault']);
    expect(info.stdout).toMatch(
      /^Read-only: {8}yes, until coffer\.header\.bak is imported \(the header in use is older than the data\)$/mu,
    );
    expect(JSON.parse((await cli(['info', 'vault', '--json'])).stdout)).toMatchObject({
      readOnly: false,
      headerOlderThanData: true,
    });
  });

  it('header export and import: an old export opens with the old passphrase again; bad imports change nothing', async () => {
    expect((await cli(['header', 'vault', 'export', 'saved.header'])).code).toBe(0);
    expect((await cli(['header', 'vault', 'export', 'saved.header'])).code).toBe(1);
    await cli(['passwd', 'vault'], { env: { COFFER_NEW_PASSPHRASE: 'new' } });
    expect((await cli(['init', 'other', '--kdf', 'interactive'])).code).toBe(0);
    expect((await cli(['header', 'other', 'export', 'other.header'])).code).toBe(0);
    const damaged = readFileSync(join(cwd, 'saved.header'));
    damaged[40] = (damaged[40] ?? 0) ^ 1;
    writeFileSync(join(cwd, 'damaged.header'), damaged);

    const before = headers();
    const foreign = await cli(['header', 'vault', 'import', 'other.header']);
    expect(foreign.code).toBe(4);
    expect(foreign.stderr).toMatch(/different file or vault/u);
    expect((await cli(['header', 'vault', 'import', 'damaged.header'])).code).toBe(4);
    expect((await cli(['header', 'vault', 'import', 'saved.header'], { passphrase: 'nope' })).code).toBe(3);
    expect((await cli(['header', 'vault', 'import', 'missing.header'])).code).toBe(1);
    expect(headers()).toEqual(before);

    expect((await cli(['header', 'vault', 'import', 'saved.header'])).code).toBe(0);
    // The import is in the activity log, sealed under the keys the imported header holds; the refused ones are not.
    const log = await cli(['log', 'vault', '--json']);
    expect(log).toMatchObject({ code: 0, stderr: '' });
    const entries = (JSON.parse(log.stdout) as { entries: { kind: string; counts: object }[] }).entries;
    expect(entries.filter((entry) => entry.kind === 'header-imported')).toEqual([
      expect.objectContaining({ counts: { slots: 1 }, outcome: 'done' }),
    ]);
    expect(entries.slice(-2).map((entry) => entry.kind)).toEqual(['header-imported', 'unlock']);
    expect((await cli(['log', 'vault'])).stdout).toMatch(/vault header imported \(1 key slot now\)/u);
    expect(await opensWith(PASSPHRASE)).toBe(0);
    expect(await opensWith('new')).toBe(3);
  });

  it('a damaged header falls back to its backup with a warning (exit 1), and is repaired', async () => {
    const header = readFileSync(join(cwd, 'vault', 'coffer.header'));
    const damaged = Buffer.from(header);
    damaged[40] = (damaged[40] ?? 0) ^ 1;
    writeFileSync(join(cwd, 'vault', 'coffer.header'), damaged);
    const result = await cli(['ls', 'vault']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/warning: The vault header \(coffer\.header\) is damaged; its backup/u);
    expect(readFileSync(join(cwd, 'vault', 'coffer.header')).equals(header)).toBe(true);
    expect(await cli(['ls', 'vault'])).toMatchObject({ code: 0, stderr: '' });
  });
});
