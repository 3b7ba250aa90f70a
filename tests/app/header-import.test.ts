import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { HEADER_BACKUP_FILE, HEADER_FILE } from '../../src/core/vault/layout.js';
import { tempDir } from '../helpers/vault.js';
import { codeOf, newApp, newVaultIn, PASSPHRASE, pickFolder, type TestApp } from './helpers.js';

const NEW_PASSPHRASE = 'a new passphrase for the vault';

/** Saves a header backup from the Security page; its path. */
async function saveBackup(app: TestApp, vaultId: string): Promise<string> {
  const backups = tempDir();
  const folder = await pickFolder(app, backups, { purpose: 'header-backup', vaultId });
  const saved = await app.call('security.exportHeader', { vaultId, folder });
  return join(saved.folder, saved.fileName);
}

/** A handle for a header backup file the "user" picks on the Unlock screen. */
async function pickBackup(app: TestApp, vaultId: string, path: string): Promise<string> {
  app.dialogs.files.push([path]);
  const picked = await app.call('dialog.pickFiles', { purpose: 'header-restore', vaultId });
  if (!picked) throw new Error('nothing picked');
  return picked.handle;
}

describe('restoring a header backup into a locked vault', () => {
  it('puts the backup back: its passphrase opens the vault again, the later one no longer does', async () => {
    const app = await newApp();
    const { vaultId, parent } = await newVaultIn(app);
    const backup = await saveBackup(app, vaultId);
    await app.call('security.changePassphrase', {
      vaultId,
      current: PASSPHRASE,
      passphrase: NEW_PASSPHRASE,
      kdf: 'interactive',
    });
    await app.call('vault.lock', { vaultId });

    const file = await pickBackup(app, vaultId, backup);
    const imported = await app.call('security.importHeader', {
      vaultId,
      file,
      secretKind: 'passphrase',
      secret: PASSPHRASE,
    });

    expect(imported.logProblems).toEqual([]);
    const dir = join(parent, 'vault');
    expect(readFileSync(join(dir, HEADER_FILE))).toEqual(readFileSync(backup));
    expect(readFileSync(join(dir, HEADER_BACKUP_FILE))).toEqual(readFileSync(backup));
    expect(codeOf(await app.raw('vault.unlock', { vaultId, passphrase: NEW_PASSPHRASE }))).toBe(
      'WRONG_PASSPHRASE',
    );
    expect(codeOf(await app.raw('vault.unlock', { vaultId, passphrase: PASSPHRASE }))).toBe('ok');
    const log = await app.call('security.activityLog', { vaultId });
    expect(log.entries.map((entry) => entry.kind)).toContain('header-imported');
  });

  it("refuses another vault's header, a wrong passphrase, an unlocked vault and a raw path; nothing changes", async () => {
    const app = await newApp();
    const { vaultId, parent } = await newVaultIn(app);
    const other = await newVaultIn(app);
    const foreign = await saveBackup(app, other.vaultId);
    const own = await saveBackup(app, vaultId);
    const dir = join(parent, 'vault');
    const headerBefore = readFileSync(join(dir, HEADER_FILE));
    const importing = async (file: string, secret = PASSPHRASE) =>
      codeOf(await app.raw('security.importHeader', { vaultId, file, secretKind: 'passphrase', secret }));

    // Unlocked: the open session's header would go stale under it.
    expect(await importing(await pickBackup(app, vaultId, own))).toBe('INVALID_ARGUMENT');
    await app.call('vault.lock', { vaultId });

    expect(await importing(await pickBackup(app, vaultId, foreign))).toBe('INTEGRITY');
    expect(await importing(await pickBackup(app, vaultId, own), 'not the passphrase')).toBe(
      'WRONG_PASSPHRASE',
    );
    // The window never names a path, nor uses a handle for another purpose or another vault.
    expect(await importing(own)).toBe('INVALID_ARGUMENT');
    expect(await importing(await pickFolder(app, tempDir(), { purpose: 'header-backup', vaultId }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(await importing(await pickBackup(app, other.vaultId, own))).toBe('INVALID_ARGUMENT');

    expect(readFileSync(join(dir, HEADER_FILE))).toEqual(headerBefore);
    expect(codeOf(await app.raw('vault.unlock', { vaultId, passphrase: PASSPHRASE }))).toBe('ok');
  });

  it('opens the backup with its recovery key too; a mistyped key is refused', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    const { recoveryKey } = await app.call('security.makeRecoveryKey', { vaultId, current: PASSPHRASE });
    const backup = await saveBackup(app, vaultId);
    await app.call('vault.lock', { vaultId });
    const importing = async (secret: string) =>
      app.raw('security.importHeader', {
        vaultId,
        file: await pickBackup(app, vaultId, backup),
        secretKind: 'recovery-key',
        secret,
      });

    // The last character changed to another one (a fixed 'X' would be no typo for keys that end in X).
    const typo = `${recoveryKey.slice(0, -1)}${recoveryKey.endsWith('A') ? 'B' : 'A'}`;
    expect(codeOf(await importing(typo))).toBe('INVALID_ARGUMENT');
    expect(codeOf(await importing(recoveryKey))).toBe('ok');
    expect(codeOf(await app.raw('vault.unlockWithRecoveryKey', { vaultId, recoveryKey }))).toBe('ok');
  });

  it('takes one file only as a header backup', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    const backup = await saveBackup(app, vaultId);
    app.dialogs.files.push([backup, backup]);
    expect(codeOf(await app.raw('dialog.pickFiles', { purpose: 'header-restore', vaultId }))).toBe(
      'INVALID_ARGUMENT',
    );
  });
});
