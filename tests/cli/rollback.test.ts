import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { toFormat10 } from '../helpers/index-format.js';
import { requireBuiltCli, runCli, tempDir, type RunResult } from './helpers.js';

requireBuiltCli();

/**
 * A whole vault folder put back from an older copy is a valid vault: only the memory kept outside it, in the CLI's
 * state folder (FORMAT.md section 8.8), can tell. Each test has a state folder of its own, as one computer.
 */
function computer(): { cwd: string; run: (...args: string[]) => Promise<RunResult> } {
  const cwd = tempDir();
  const env = { COFFER_STATE_DIR: join(cwd, 'state') };
  return { cwd, run: (...args) => runCli(args, { cwd, env }) };
}

/** Expects exit 0, naming the CLI's stderr when not (a rare exit 1 after `init` once went unexplained here). */
function expectOk(result: RunResult): void {
  expect(result.code, result.stderr).toBe(0);
}

/** Replaces the vault folder with a copy taken earlier. */
function putBack(cwd: string, copy: string): void {
  rmSync(join(cwd, 'vault'), { recursive: true });
  cpSync(join(cwd, copy), join(cwd, 'vault'), { recursive: true });
}

describe('rollback memory outside the vault', () => {
  it('warns (exit 1) when the vault folder was put back to an older copy, once', async () => {
    const { cwd, run } = computer();
    expectOk(await run('init', 'vault', '--kdf', 'interactive'));
    expectOk(await run('mkdir', 'vault', '/first'));
    cpSync(join(cwd, 'vault'), join(cwd, 'older'), { recursive: true });
    expectOk(await run('mkdir', 'vault', '/second'));
    expect(await run('ls', 'vault')).toMatchObject({ code: 0, stderr: '' });

    putBack(cwd, 'older');
    const rolledBack = await run('ls', 'vault');
    expect(rolledBack.code).toBe(1);
    expect(rolledBack.stdout).toMatch(/first/u);
    expect(rolledBack.stderr).toMatch(
      /^coffer: warning: This vault is older than when this computer last opened it/u,
    );
    // Warned once: the state found is what the next run compares with.
    expect(await run('ls', 'vault')).toMatchObject({ code: 0, stderr: '' });
  });

  it('warns when the vault is at the same change but in another state (a copy changed elsewhere)', async () => {
    const { cwd, run } = computer();
    expectOk(await run('init', 'vault', '--kdf', 'interactive'));
    cpSync(join(cwd, 'vault'), join(cwd, 'copy'), { recursive: true });
    expectOk(await run('mkdir', 'vault', '/here'));
    // The copy is changed on another computer (another state folder), as many times.
    const elsewhere = { cwd, env: { COFFER_STATE_DIR: join(cwd, 'other-state') } };
    expectOk(await runCli(['mkdir', 'copy', '/there'], elsewhere));

    putBack(cwd, 'copy');
    const forked = await run('ls', 'vault');
    expect(forked.code).toBe(1);
    expect(forked.stdout).toMatch(/there/u);
    expect(forked.stderr).toMatch(
      /is not the one this computer last opened: its index is at the same change/u,
    );
  });

  it('says nothing when the vault only moved forward, even changed by another computer', async () => {
    const { cwd, run } = computer();
    expectOk(await run('init', 'vault', '--kdf', 'interactive'));
    expectOk(await run('ls', 'vault'));
    const elsewhere = { cwd, env: { COFFER_STATE_DIR: join(cwd, 'other-state') } };
    expectOk(await runCli(['mkdir', 'vault', '/there'], elsewhere));
    expect(await run('ls', 'vault')).toMatchObject({ code: 0, stderr: '' });
  });

  it('verify says damage of the index found at unlock once, not again as its own finding', async () => {
    const { cwd, run } = computer();
    expectOk(await run('init', 'vault', '--kdf', 'interactive'));
    expectOk(await run('mkdir', 'vault', '/first'));
    const index = join(cwd, 'vault', 'index.sqlite');
    const older = new Database(index, { readonly: true });
    const meta = older
      .prepare('SELECT key, value FROM meta WHERE key IN (?, ?)')
      .all('generation', 'tree_snapshot');
    older.close();
    expectOk(await run('mkdir', 'vault', '/second'));
    // The generation and snapshot put back without the rest: the commitment was sealed at another generation.
    const db = new Database(index);
    for (const row of meta as { key: string; value: Buffer }[]) {
      db.prepare('UPDATE meta SET value = ? WHERE key = ?').run(row.value, row.key);
    }
    db.close();
    const verified = await run('verify', 'vault');
    expect(verified.code).toBe(4);
    expect(verified.stderr.split('sealed at generation').length - 1).toBe(1);
  });

  it('warns when the index was put back to a copy from before the vault was upgraded to format 1.1', async () => {
    const { cwd, run } = computer();
    expectOk(await run('init', 'vault', '--kdf', 'interactive'));
    expectOk(await run('mkdir', 'vault', '/first'));
    // An index in format 1.0, as one from before the upgrade would be: its generation is not authenticated, and
    // the upgrade at the next unlock seals whatever it claims.
    await toFormat10(join(cwd, 'vault'));
    const downgraded = await run('ls', 'vault');
    expect(downgraded.code).toBe(1);
    expect(downgraded.stdout).toMatch(/first/u);
    expect(downgraded.stderr).toMatch(
      /^coffer: warning: This vault is older than when this computer last opened it: its index was in format 1\.1/u,
    );
    expect(await run('ls', 'vault')).toMatchObject({ code: 0, stderr: '' });
  });
});
