/**
 * FORMAT.md section 8.2: a write interrupted mid-commit leaves a hot journal beside the index, and the index's own
 * pages may be half-written. A writable open plays the journal back in place; a read-only open (read-only media, or
 * asked for) reads a private, rolled-back copy and says so. Neither ever reads the half-written index.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { Vault, type VaultEntry } from '../../src/core/index.js';
import { INTERRUPTED_WRITE_WARNING } from '../../src/core/vault/index-open.js';
import { nativeSodium } from '../helpers/backends.js';
import { leaveHotJournal, recordsIgnoringJournal } from '../helpers/interrupted.js';
import { collect, newVault, passphrase, tempDir, track, writeTree } from '../helpers/vault.js';

const FILES: Record<string, string | Buffer> = {
  'docs/a.txt': 'alpha',
  'docs/b.txt': 'bravo',
  'large.bin': Buffer.alloc(1024 * 1024 + 5000, 9),
};
for (let i = 0; i < 200; i++) FILES[`many/f${i}.txt`] = `file number ${i}`;

/** A closed vault holding {@link FILES}, left by a crash mid-commit; with its listing before the crash. */
async function crashedVault(): Promise<{ dir: string; root: string; before: VaultEntry[] }> {
  const { vault, dir, root } = await newVault();
  await writeTree(join(root, 'in'), FILES);
  const sources = ['docs', 'large.bin', 'many'].map((name) => join(root, 'in', name));
  expect((await vault.add(sources)).problems).toEqual([]);
  const before = vault.listRecursive('/');
  vault.close();
  leaveHotJournal(dir);
  // The index alone is half-written: a reader that ignored the journal would read zeroed records.
  expect(recordsIgnoringJournal(dir).every((record) => record.every((byte) => byte === 0))).toBe(true);
  return { dir, root, before };
}

// The private copies go to the system temp folder: point it at a folder of this test's own to see them go.
let privateTemp = '';
const copies = (): string[] => readdirSync(privateTemp).filter((name) => name.startsWith('coffer-index-'));
const savedTmpdir = process.env.TMPDIR;
beforeEach(() => {
  privateTemp = tempDir();
  process.env.TMPDIR = privateTemp;
});
afterEach(() => {
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
});

describe('a vault left by a write interrupted mid-commit', () => {
  it('opened read-only: read from a rolled-back private copy, with a warning; the vault folder is untouched', async () => {
    const { dir, root, before } = await crashedVault();
    const index = readFileSync(join(dir, 'index.sqlite'));
    const journal = readFileSync(join(dir, 'index.sqlite-journal'));

    const vault = track(await Vault.open(dir, { sodium: nativeSodium, readOnly: true }));
    expect(vault.warnings).toEqual([INTERRUPTED_WRITE_WARNING]);
    expect((await vault.info()).warnings).toEqual([INTERRUPTED_WRITE_WARNING]);
    // The copy is private to its owner while it is in use.
    const [copy = ''] = copies();
    expect(copy).toMatch(/^coffer-index-/u);
    expect(statSync(join(privateTemp, copy)).mode & 0o777).toBe(0o700);

    expect(await vault.unlock(passphrase())).toEqual([]);
    expect(vault.listRecursive('/')).toEqual(before);
    expect((await collect(vault.read('/docs/a.txt'))).toString()).toBe('alpha');
    const restored = await vault.restore(['/docs', '/large.bin'], join(root, 'out'));
    expect(restored).toMatchObject({ filesRestored: 3, problems: [] });
    expect(readFileSync(join(root, 'out', 'large.bin')).equals(FILES['large.bin'] as Buffer)).toBe(true);
    expect(await vault.verify({ readData: true })).toMatchObject({ ok: true, problems: [] });
    vault.close();

    expect(readFileSync(join(dir, 'index.sqlite')).equals(index)).toBe(true);
    expect(readFileSync(join(dir, 'index.sqlite-journal')).equals(journal)).toBe(true);
    expect(copies()).toEqual([]);
  });

  it('a copy left by a process killed with the vault open goes at the next open; copies in use and strangers stay', async () => {
    const { dir, root } = await crashedVault();
    const script = `
      import('${join(process.cwd(), 'src/core/index.ts')}').then(async ({ Vault }) => {
        await Vault.open(process.argv[1], { readOnly: true });
        process.kill(process.pid, 'SIGKILL');
      });`;
    const killed = promisify(execFile)(process.execPath, ['--import', 'tsx', '-e', script, dir], {
      env: { ...process.env, TMPDIR: privateTemp },
    });
    await expect(killed).rejects.toMatchObject({ signal: 'SIGKILL' });
    const [left = '', ...others] = copies();
    expect(others).toEqual([]);
    const deadPid = /^coffer-index-([0-9]+)-/u.exec(left)?.[1];
    expect(Number(deadPid)).not.toBe(process.pid);
    // Named like a dead process's copy, but a link, or holding something a copy never holds: not removed.
    const linked = `coffer-index-${deadPid}-linked`;
    const stranger = `coffer-index-${deadPid}-others`;
    await writeTree(join(root, 'elsewhere'), { 'index.sqlite': 'not a copy' });
    await symlink(join(root, 'elsewhere'), join(privateTemp, linked));
    await mkdir(join(privateTemp, stranger));
    await writeFile(join(privateTemp, stranger, 'notes.txt'), 'mine');

    const vault = track(await Vault.open(dir, { sodium: nativeSodium, readOnly: true }));
    const mine = copies().filter((name) => name.startsWith(`coffer-index-${process.pid}-`));
    expect(mine).toHaveLength(1);
    expect(copies().sort()).toEqual([...mine, linked, stranger].sort());
    expect(readFileSync(join(root, 'elsewhere', 'index.sqlite'), 'utf8')).toBe('not a copy');
    // A second open in this process (another vault) keeps the copy of the one still open here.
    const other = await newVault();
    other.vault.close();
    track(await Vault.open(other.dir, { sodium: nativeSodium })).close();
    expect(copies()).toContain(mine[0]);
    vault.close();
    expect(copies().sort()).toEqual([linked, stranger].sort());
  });

  it('opened writable: SQLite rolls it back in place, with no warning and no copy', async () => {
    const { dir, before } = await crashedVault();
    const vault = track(await Vault.open(dir, { sodium: nativeSodium }));
    expect(vault.warnings).toEqual([]);
    expect(copies()).toEqual([]);
    expect(await vault.unlock(passphrase())).toEqual([]);
    expect(vault.listRecursive('/')).toEqual(before);
    vault.close();
    expect(existsSync(join(dir, 'index.sqlite-journal'))).toBe(false);
    // Rolled back for good: the index alone now holds the committed records.
    expect(recordsIgnoringJournal(dir).some((record) => record.some((byte) => byte !== 0))).toBe(true);
  });

  it('a healthy vault opened read-only is read in place, with no warning', async () => {
    const { vault, dir } = await newVault();
    vault.close();
    const reopened = track(await Vault.open(dir, { sodium: nativeSodium, readOnly: true }));
    expect(reopened.warnings).toEqual([]);
    expect(copies()).toEqual([]);
  });
});
