import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { INDEX_PROBLEM_PATH } from '../../src/core/types.js';
import { HEADER_BACKUP_FILE, HEADER_FILE } from '../../src/core/vault/layout.js';
import { tempDir } from '../helpers/vault.js';
import { addFiles, codeOf, newApp, newVaultIn, PASSPHRASE, pickFolder, type TestApp } from './helpers.js';

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

describe('a header older than the data, put back by hand', () => {
  /**
   * A vault with before.txt under key 1 and after.txt under key 2, whose header saved before the rotation (with a
   * recovery key) was copied over coffer.header while it was closed; opened again and unlocked.
   */
  async function withOlderHeader() {
    const app = await newApp();
    const { vaultId: first, parent } = await newVaultIn(app);
    await addFiles(app, first, { 'before.txt': 'under key 1' });
    const { recoveryKey } = await app.call('security.makeRecoveryKey', {
      vaultId: first,
      current: PASSPHRASE,
    });
    const older = await saveBackup(app, first);
    await app.call('vault.rotateKey', { vaultId: first });
    await addFiles(app, first, { 'after.txt': 'under key 2' });
    await app.call('vault.close', { vaultId: first });
    const dir = join(parent, 'vault');
    copyFileSync(older, join(dir, HEADER_FILE));
    const { vaultId } = await app.call('vault.open', {
      folder: await pickFolder(app, dir, { purpose: 'open-vault' }),
    });
    return {
      app,
      vaultId,
      dir,
      recoveryKey,
      unlocked: await app.call('vault.unlock', { vaultId, passphrase: PASSPHRASE }),
    };
  }

  it('says so apart from the problems, and refuses every change as the request, before any dialog', async () => {
    const { app, vaultId, dir, unlocked } = await withOlderHeader();
    expect(unlocked.headerOlderThanData).toBe(true);
    // The entry under key 2 is left out; the header's own problem is not among them (the window words it).
    expect(unlocked.problems.map(({ path }) => path)).not.toContain(INDEX_PROBLEM_PATH);
    expect(unlocked.problems).toHaveLength(1);
    expect(unlocked.root.map(({ name }) => name)).toEqual(['before.txt']);
    expect((await app.call('vault.info', { vaultId })).info.headerOlderThanData).toBe(true);
    // A window opened again on the unlocked vault (its lock on close turned off) learns it from the summary.
    expect(
      await app.call('vault.open', { folder: await pickFolder(app, dir, { purpose: 'open-vault' }) }),
    ).toMatchObject({ vaultId, locked: false, headerOlderThanData: true });
    // Asked again while unlocked, the unlock says the same.
    expect(await app.call('vault.unlock', { vaultId, passphrase: PASSPHRASE })).toEqual(unlocked);
    const kept = [HEADER_FILE, HEADER_BACKUP_FILE, 'index.sqlite', 'activity.log'];
    const before = kept.map((name) => readFileSync(join(dir, name)));

    // The pickers are not shown: the answers queued for them are still there afterwards.
    app.dialogs.files.push([join(dir, HEADER_FILE)]);
    app.dialogs.folders.push(tempDir());
    expect(codeOf(await app.raw('dialog.pickFiles', { purpose: 'add-files', vaultId }))).toBe('INTEGRITY');
    expect(codeOf(await app.raw('dialog.pickFolder', { purpose: 'add-folder', vaultId }))).toBe('INTEGRITY');
    expect(app.dialogs.files).toHaveLength(1);
    expect(app.dialogs.folders).toHaveLength(1);
    const dropped = app.backend.registerDroppedBytes([
      { name: 'new.txt', size: 3, mtime: 1_600_000_000_000, bytes: Buffer.from('new') },
    ]);
    if (!dropped.ok) throw new Error(dropped.message);
    const jobsBefore = app.events.filter(({ event }) => event === 'job').length;
    expect(codeOf(await app.raw('job.add', { vaultId, source: dropped.value.handle }))).toBe('INTEGRITY');
    expect(app.events.filter(({ event }) => event === 'job')).toHaveLength(jobsBefore);
    for (const [channel, request] of [
      ['entries.mkdir', { vaultId, path: '/new folder' }],
      ['entries.rename', { vaultId, path: '/before.txt', newName: 'renamed.txt' }],
      ['entries.remove', { vaultId, paths: ['/before.txt'] }],
    ] as const)
      expect(codeOf(await app.raw(channel, request))).toBe('INTEGRITY');
    expect(kept.map((name) => readFileSync(join(dir, name)))).toEqual(before);
  });

  it('says the same when unlocked with the recovery key', async () => {
    const { app, vaultId, unlocked, recoveryKey } = await withOlderHeader();
    await app.call('vault.lock', { vaultId });
    const withRecoveryKey = await app.call('vault.unlockWithRecoveryKey', { vaultId, recoveryKey });
    expect(withRecoveryKey).toMatchObject({ headerOlderThanData: true, problems: unlocked.problems });
    expect(withRecoveryKey.root.map(({ name }) => name)).toEqual(['before.txt']);
    expect(codeOf(await app.raw('entries.mkdir', { vaultId, path: '/new folder' }))).toBe('INTEGRITY');
  });

  it('ends once coffer.header.bak is restored: every file is listed and changes are made again', async () => {
    const { app, vaultId, dir } = await withOlderHeader();
    await app.call('vault.lock', { vaultId });
    await app.call('security.importHeader', {
      vaultId,
      file: await pickBackup(app, vaultId, join(dir, HEADER_BACKUP_FILE)),
      secretKind: 'passphrase',
      secret: PASSPHRASE,
    });
    // The header backup's file dialog opened in the vault folder, where coffer.header.bak is; the adds' did not.
    expect(app.dialogs.filesStartIn).toEqual([undefined, undefined, dir]);
    expect((await app.call('vault.listOpen', {}))[0]).toMatchObject({
      locked: true,
      headerOlderThanData: false,
    });
    const unlocked = await app.call('vault.unlock', { vaultId, passphrase: PASSPHRASE });
    expect(unlocked).toMatchObject({ headerOlderThanData: false, problems: [] });
    expect(unlocked.root.map(({ name }) => name)).toEqual(['after.txt', 'before.txt']);
    await app.call('entries.mkdir', { vaultId, path: '/new folder' });
  });
});
