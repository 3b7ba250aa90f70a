import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { ACTIVITY_LOG_FILE, HEADER_FILE } from '../../src/core/vault/layout.js';
import { tempDir } from '../helpers/vault.js';
import { codeOf, newApp, newVaultIn, PASSPHRASE, pickFolder, type TestApp } from './helpers.js';

const NEW_PASSPHRASE = 'a new passphrase for the vault';
const EXTRA_PASSPHRASE = 'the second way into this vault';

/** Locks the vault and tries to unlock it with `passphrase`; the result's code ('ok' when it opened). */
async function unlocksWith(app: TestApp, vaultId: string, passphrase: string): Promise<string> {
  await app.call('vault.lock', { vaultId });
  return codeOf(await app.raw('vault.unlock', { vaultId, passphrase }));
}

describe('the Security page in the back end', () => {
  it('changes the passphrase only after the current one is confirmed', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    const change = (current: string) =>
      app.raw('security.changePassphrase', {
        vaultId,
        current,
        passphrase: NEW_PASSPHRASE,
        kdf: 'interactive',
      });

    expect(codeOf(await change('not the passphrase'))).toBe('WRONG_PASSPHRASE');
    expect(await unlocksWith(app, vaultId, PASSPHRASE)).toBe('ok');

    expect(codeOf(await change(PASSPHRASE))).toBe('ok');
    expect(await unlocksWith(app, vaultId, PASSPHRASE)).toBe('WRONG_PASSPHRASE');
    expect(await unlocksWith(app, vaultId, NEW_PASSPHRASE)).toBe('ok');
  });

  it('adds a passphrase that unlocks, refuses to remove the one in use, and removes the other', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    const add = (current: string) =>
      app.raw('security.addPassphrase', {
        vaultId,
        current,
        passphrase: EXTRA_PASSPHRASE,
        kdf: 'interactive',
      });
    expect(codeOf(await add('wrong'))).toBe('WRONG_PASSPHRASE');
    expect((await app.call('vault.info', { vaultId })).info.slots).toHaveLength(1);

    const added = await app.call('security.addPassphrase', {
      vaultId,
      current: PASSPHRASE,
      passphrase: EXTRA_PASSPHRASE,
      kdf: 'interactive',
    });
    expect(added).toEqual({ index: 1, logProblems: [] });
    expect(await unlocksWith(app, vaultId, EXTRA_PASSPHRASE)).toBe('ok');

    // Unlocked with the second slot now: the current passphrase is that one, not the first.
    expect(codeOf(await app.raw('security.makeRecoveryKey', { vaultId, current: PASSPHRASE }))).toBe(
      'WRONG_PASSPHRASE',
    );
    expect(codeOf(await app.raw('security.removeSlot', { vaultId, index: 1 }))).toBe('INVALID_ARGUMENT');
    expect(codeOf(await app.raw('security.removeSlot', { vaultId, index: 0 }))).toBe('ok');
    expect(await unlocksWith(app, vaultId, PASSPHRASE)).toBe('WRONG_PASSPHRASE');
    expect(await unlocksWith(app, vaultId, EXTRA_PASSPHRASE)).toBe('ok');
    expect(codeOf(await app.raw('security.removeSlot', { vaultId, index: 0 }))).toBe('INVALID_ARGUMENT');
  });

  it('makes a recovery key that unlocks, and then asks for that key as the current secret', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    const { recoveryKey } = await app.call('security.makeRecoveryKey', { vaultId, current: PASSPHRASE });
    expect(recoveryKey).toMatch(/^[A-Z2-7]{5}(-[A-Z2-7]{5}){7}$/u);
    await app.call('vault.lock', { vaultId });
    await app.call('vault.unlockWithRecoveryKey', { vaultId, recoveryKey });

    const add = (current: string) =>
      app.raw('security.addPassphrase', { vaultId, current, passphrase: NEW_PASSPHRASE, kdf: 'interactive' });
    expect(codeOf(await add(PASSPHRASE))).toBe('INVALID_ARGUMENT'); // not a recovery key's shape
    expect(codeOf(await add(recoveryKey.toLowerCase()))).toBe('ok');
    expect(await unlocksWith(app, vaultId, NEW_PASSPHRASE)).toBe('ok');
  });

  it('lists the activity log, newest changes included, and hands over what the log could not record', async () => {
    const app = await newApp();
    const { vaultId, parent } = await newVaultIn(app);
    await app.call('security.changePassphrase', { vaultId, current: PASSPHRASE, passphrase: NEW_PASSPHRASE });
    const log = await app.call('security.activityLog', { vaultId });
    expect(log.entries.map((entry) => entry.kind)).toContain('passphrase-changed');
    expect(log.dropped).toBe(0);
    expect(log.problems).toEqual([]);
    expect(await app.call('security.logProblems', { vaultId })).toEqual([]);

    // Another vault's log (one byte of its vault id changed): the next entry cannot be written, but the change
    // itself is done. (A folder in its place would stop the change: every write checks the vault folder first.)
    const logFile = join(parent, 'vault', ACTIVITY_LOG_FILE);
    const foreignLog = readFileSync(logFile);
    foreignLog[20] = (foreignLog[20] ?? 0) ^ 1;
    writeFileSync(logFile, foreignLog);
    const added = await app.call('security.addPassphrase', {
      vaultId,
      current: NEW_PASSPHRASE,
      passphrase: EXTRA_PASSPHRASE,
      kdf: 'interactive',
    });
    expect(added.logProblems).toHaveLength(1);
    expect(added.logProblems[0]?.path).toBe('(activity log)');
    await app.call('entries.mkdir', { vaultId, path: '/Taxes' });
    expect(await app.call('security.logProblems', { vaultId })).toHaveLength(1);
    expect(await app.call('security.logProblems', { vaultId })).toEqual([]);
  });
});

describe('a header backup from the Security page', () => {
  it('is the header in use, saved as a new file in the picked folder, never over another', async () => {
    const app = await newApp();
    const { vaultId, parent } = await newVaultIn(app);
    const backups = tempDir();
    const save = async () => {
      const folder = await pickFolder(app, backups, { purpose: 'header-backup', vaultId });
      return app.call('security.exportHeader', { vaultId, folder });
    };
    const first = await save();
    const second = await save();
    expect(first.fileName).toMatch(/^vault header \d{4}-\d{2}-\d{2}\.coffer-header$/u);
    expect(second.fileName).toBe(first.fileName.replace('.coffer-header', ' (2).coffer-header'));
    expect(readdirSync(backups).sort()).toEqual([first.fileName, second.fileName].sort());
    const saved = readFileSync(join(backups, first.fileName));
    expect(saved).toEqual(readFileSync(join(parent, 'vault', HEADER_FILE)));

    // A handle for another purpose (or a raw path) is refused: the window never names where it goes.
    const restoreHandle = await pickFolder(app, backups, { purpose: 'restore-destination', vaultId });
    expect(codeOf(await app.raw('security.exportHeader', { vaultId, folder: restoreHandle }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(codeOf(await app.raw('security.exportHeader', { vaultId, folder: backups }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(readdirSync(backups)).toHaveLength(2);
  });
});
