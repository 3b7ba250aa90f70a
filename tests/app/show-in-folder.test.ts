import { readdirSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it, vi } from 'vitest';

import { tempDir } from '../helpers/vault.js';
import { WAIT_FOR_IO } from '../helpers/wait.js';
import {
  addFiles,
  codeOf,
  newApp,
  newVaultIn,
  pickFolder,
  recordingShell,
  startHeldAdd,
  type TestApp,
} from './helpers.js';

async function restore(app: TestApp, vaultId: string, paths: string[], into: string): Promise<string> {
  const destination = await pickFolder(app, into, { purpose: 'restore-destination', vaultId });
  const { jobId } = await app.call('job.restore', { vaultId, paths, destination });
  await app.jobEvents(jobId);
  return jobId;
}

describe('showing a finished restore in its folder', () => {
  it('shows the restored item that the user chose the folder for, by job id only', async () => {
    const shell = recordingShell();
    const app = await newApp({ shell });
    expect(await app.call('app.capabilities', {})).toMatchObject({ showInFolder: true });
    const { vaultId } = await newVaultIn(app);
    await addFiles(app, vaultId, { 'a.txt': 'alpha', 'b.txt': 'beta' });
    const out = tempDir();
    const jobId = await restore(app, vaultId, ['/b.txt', '/a.txt'], out);

    expect(await app.call('job.showInFolder', { jobId })).toBeNull();
    expect(shell.opened).toEqual([{ action: 'show', path: join(out, 'b.txt') }]);

    // Everything ("/") has no one item to select: the destination itself is shown.
    const everything = tempDir();
    await app.call('job.showInFolder', { jobId: await restore(app, vaultId, ['/'], everything) });
    expect(shell.opened[1]).toEqual({ action: 'show', path: everything });

    // A folder chosen after an item inside it (search results sorted by name, say): the folder is what went there.
    await app.call('entries.mkdir', { vaultId, path: '/Reports' });
    await app.call('entries.mkdir', { vaultId, path: '/Reports/Old' });
    const reports = tempDir();
    await app.call('job.showInFolder', {
      jobId: await restore(app, vaultId, ['/Reports/Old', '/Reports'], reports),
    });
    expect(shell.opened[2]).toEqual({ action: 'show', path: join(reports, 'Reports') });
  });

  it('shows a chosen item by the name it had when the restore ran, renamed while the restore waited', async () => {
    const shell = recordingShell();
    const app = await newApp({ shell });
    const { vaultId } = await newVaultIn(app);
    await addFiles(app, vaultId, { 'chosen.txt': 'alpha', 'doomed.txt': 'beta' });
    // An add whose bytes are still arriving, a delete waiting for it, and the restore waiting behind the delete.
    const add = await startHeldAdd(app, vaultId);
    const removing = app.call('entries.remove', { vaultId, paths: ['/doomed.txt'] });
    const out = tempDir();
    const destination = await pickFolder(app, out, { purpose: 'restore-destination', vaultId });
    const { jobId } = await app.call('job.restore', { vaultId, paths: ['/chosen.txt'], destination });
    await vi.waitFor(async () => {
      expect(await app.call('job.list', {})).toContainEqual(
        expect.objectContaining({ jobId, waiting: true }),
      );
    }, WAIT_FOR_IO);
    await app.call('entries.rename', { vaultId, path: '/chosen.txt', newName: 'renamed.txt' });
    add.arrive();
    await Promise.all([app.jobEvents(add.jobId), removing, app.jobEvents(jobId)]);

    expect(readdirSync(out)).toEqual(['renamed.txt']);
    await app.call('job.showInFolder', { jobId });
    expect(shell.opened).toEqual([{ action: 'show', path: join(out, 'renamed.txt') }]);
  });

  it('knows only finished restores, and forgets them when the vault locks', async () => {
    const app = await newApp({ shell: recordingShell() });
    const { vaultId } = await newVaultIn(app);
    await addFiles(app, vaultId, { 'a.txt': 'alpha' });
    const check = await app.call('job.verify', { vaultId });
    await app.jobEvents(check.jobId);
    expect(codeOf(await app.raw('job.showInFolder', { jobId: check.jobId }))).toBe('INVALID_ARGUMENT');
    expect(codeOf(await app.raw('job.showInFolder', { jobId: '/tmp' }))).toBe('INVALID_ARGUMENT');

    const jobId = await restore(app, vaultId, ['/a.txt'], tempDir());
    await app.call('vault.lock', { vaultId });
    expect(codeOf(await app.raw('job.showInFolder', { jobId }))).toBe('INVALID_ARGUMENT');
  });

  it('is NOT_SUPPORTED where the host has no shell', async () => {
    const app = await newApp();
    expect(await app.call('app.capabilities', {})).toMatchObject({ showInFolder: false });
    const { vaultId } = await newVaultIn(app);
    await addFiles(app, vaultId, { 'a.txt': 'alpha' });
    const jobId = await restore(app, vaultId, ['/a.txt'], tempDir());
    expect(codeOf(await app.raw('job.showInFolder', { jobId }))).toBe('NOT_SUPPORTED');
  });
});
