import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { OPEN_COPIES_DIR } from '../../src/app/open-copies.js';
import { tempDir } from '../helpers/vault.js';
import { addFiles, codeOf, newApp, newVaultIn, recordingShell } from './helpers.js';

const mode = (path: string): number => statSync(path).mode & 0o777;

describe('opening a file with the default app', () => {
  it('writes a private decrypted copy, hands only that to the shell, and removes it at lock', async () => {
    const shell = recordingShell();
    const app = await newApp({ shell });
    expect(await app.call('app.capabilities', {})).toMatchObject({ openWithApp: true });
    const { vaultId } = await newVaultIn(app);
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    await addFiles(app, vaultId, { 'report.pdf': bytes });

    expect(await app.call('entries.openWithApp', { vaultId, path: '/report.pdf' })).toBeNull();
    const [copy] = shell.opened.map((request) => request.path);
    if (copy === undefined) throw new Error('nothing opened');
    const root = join(app.dataDir, OPEN_COPIES_DIR);
    expect(dirname(dirname(copy))).toBe(root);
    expect(copy.endsWith('/report.pdf')).toBe(true);
    expect(readFileSync(copy).equals(bytes)).toBe(true);
    expect(mode(root)).toBe(0o700);
    expect(mode(dirname(copy))).toBe(0o700);
    expect(mode(copy)).toBe(0o600);
    // Only the finished copy is there: no partial file beside it.
    expect(readdirSync(dirname(copy))).toEqual(['report.pdf']);

    await app.call('vault.lock', { vaultId });
    expect(existsSync(dirname(copy))).toBe(false);
  });

  it('removes copies when the vault closes and when the back end is disposed (quit)', async () => {
    const shell = recordingShell();
    const app = await newApp({ shell });
    const { vaultId } = await newVaultIn(app);
    await addFiles(app, vaultId, { 'a.txt': Buffer.from('alpha') });
    await app.call('entries.openWithApp', { vaultId, path: '/a.txt' });
    await app.call('vault.close', { vaultId });
    expect(existsSync(shell.opened[0]?.path ?? '')).toBe(false);

    const second = await newVaultIn(app);
    await addFiles(app, second.vaultId, { 'b.txt': Buffer.from('beta') });
    await app.call('entries.openWithApp', { vaultId: second.vaultId, path: '/b.txt' });
    expect(existsSync(shell.opened[1]?.path ?? '')).toBe(true);
    await app.backend.dispose();
    expect(existsSync(join(app.dataDir, OPEN_COPIES_DIR))).toBe(false);
  });

  it('removes copies a killed run left behind when the back end starts', async () => {
    const dataDir = tempDir();
    const left = join(dataDir, OPEN_COPIES_DIR, 'abc');
    mkdirSync(left, { recursive: true });
    writeFileSync(join(left, 'secret.txt'), 'plaintext');
    await newApp({ dataDir });
    expect(existsSync(join(dataDir, OPEN_COPIES_DIR))).toBe(false);
  });

  it('leaves no copy when no app can open the file, and answers NOT_SUPPORTED', async () => {
    const shell = recordingShell(true);
    const app = await newApp({ shell });
    const { vaultId } = await newVaultIn(app);
    await addFiles(app, vaultId, { 'x.weird': Buffer.from('x') });
    expect(codeOf(await app.raw('entries.openWithApp', { vaultId, path: '/x.weird' }))).toBe('NOT_SUPPORTED');
    expect(shell.opened).toHaveLength(1);
    expect(readdirSync(join(app.dataDir, OPEN_COPIES_DIR))).toEqual([]);
  });

  it('is NOT_SUPPORTED without a shell, refuses folders, and needs an unlocked vault', async () => {
    const app = await newApp();
    expect(await app.call('app.capabilities', {})).toMatchObject({ openWithApp: false });
    const { vaultId } = await newVaultIn(app);
    await addFiles(app, vaultId, { 'a.txt': Buffer.from('alpha') });
    expect(codeOf(await app.raw('entries.openWithApp', { vaultId, path: '/a.txt' }))).toBe('NOT_SUPPORTED');

    const withShell = await newApp({ shell: recordingShell() });
    const other = await newVaultIn(withShell);
    await withShell.call('entries.mkdir', { vaultId: other.vaultId, path: '/docs' });
    expect(
      codeOf(await withShell.raw('entries.openWithApp', { vaultId: other.vaultId, path: '/docs' })),
    ).toBe('INVALID_ARGUMENT');
    await withShell.call('vault.lock', { vaultId: other.vaultId });
    expect(codeOf(await withShell.raw('entries.openWithApp', { vaultId: other.vaultId, path: '/a' }))).toBe(
      'VAULT_LOCKED',
    );
  });
});
