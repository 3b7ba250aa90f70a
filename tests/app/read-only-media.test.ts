/**
 * Issue 13 in the window's back end: a vault left by a crash mid-commit, on read-only media, opens and unlocks,
 * lists as it was before the interrupted write, and the unlock's notices and its details carry the warning
 * (FORMAT.md section 8.2).
 */
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { Vault } from '../../src/core/index.js';
import { INTERRUPTED_WRITE_WARNING } from '../../src/core/vault/index-open.js';
import { unlockNotices } from '../../src/renderer/unlock-notices.js';
import { nativeSodium } from '../helpers/backends.js';
import { leaveHotJournal } from '../helpers/interrupted.js';
import {
  announceSkip,
  canMount,
  mountTmpfs,
  mountUnavailableReason,
  remountReadOnly,
  unmountAll,
} from '../helpers/mounts.js';
import { passphrase, tempDir, writeTree } from '../helpers/vault.js';
import { codeOf, newApp, PASSPHRASE, pickFolder } from './helpers.js';

describe('a vault left by a crash mid-commit, on read-only media, in the app', () => {
  afterEach(() => {
    unmountAll();
  });

  if (!canMount) announceSkip('the app read-only media test', mountUnavailableReason ?? 'mount unavailable');
  it.skipIf(!canMount)('opens, lists what was committed and warns at unlock and in its details', async () => {
    const mount = mountTmpfs(16 * 1024 * 1024);
    const dir = join(mount, 'vault');
    const source = tempDir();
    await writeTree(source, { 'a.txt': 'alpha', 'b.txt': 'bravo' });
    const created = await Vault.create(dir, passphrase(), { kdf: 'interactive', sodium: nativeSodium });
    expect((await created.add([join(source, 'a.txt'), join(source, 'b.txt')])).problems).toEqual([]);
    created.close();
    leaveHotJournal(dir);
    remountReadOnly(mount);

    const app = await newApp();
    const folder = await pickFolder(app, dir, { purpose: 'open-vault' });
    const summary = await app.call('vault.open', { folder });
    expect(summary.readOnly).toBe(true);
    const { vaultId } = summary;
    const unlocked = await app.call('vault.unlock', { vaultId, passphrase: PASSPHRASE });
    expect(unlocked).toMatchObject({
      problems: [],
      openWarnings: [INTERRUPTED_WRITE_WARNING],
      rollbackWarning: null,
    });
    expect(unlockNotices(unlocked)).toEqual([INTERRUPTED_WRITE_WARNING]);
    expect((await app.call('entries.list', { vaultId, path: '/' })).map((entry) => entry.name)).toEqual([
      'a.txt',
      'b.txt',
    ]);
    expect((await app.call('vault.info', { vaultId })).info.warnings).toEqual([INTERRUPTED_WRITE_WARNING]);
    // An add is refused before its picker opens: the answer queued for the picker is still there.
    app.dialogs.files.push([join(source, 'a.txt')]);
    expect(codeOf(await app.raw('dialog.pickFiles', { purpose: 'add-files', vaultId }))).toBe('READ_ONLY');
    expect(app.dialogs.files).toHaveLength(1);
    await app.call('vault.close', { vaultId });
  });
});
