import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it, vi } from 'vitest';

import { IndexDb } from '../../src/core/vault/index-db.js';
import { Vault } from '../../src/core/vault/vault.js';
import { channels, PREVIEW_MAX_BYTES, type JobEvent } from '../../src/shared/contract.js';
import { requireBuiltCli } from '../cli/helpers.js';
import { restoreInAnotherProcess } from '../helpers/restore-record.js';
import { tempDir, writeTree } from '../helpers/vault.js';
import { WAIT_FOR_IO } from '../helpers/wait.js';
import {
  addFiles,
  appReportingEveryProgress,
  codeOf,
  newApp,
  newVaultIn,
  PASSPHRASE,
  pickFolder,
  startHeldAdd,
  type TestApp,
} from './helpers.js';
import { startedJobId } from '../helpers/job-add.js';

/** Adds a tree of files from disk through the picker and waits for the job to end. */
async function addTree(
  app: TestApp,
  vaultId: string,
  files: Record<string, string | Buffer>,
): Promise<JobEvent[]> {
  const source = tempDir();
  await writeTree(source, files);
  app.dialogs.files.push(Object.keys(files).map((name) => join(source, name)));
  const picked = await app.call('dialog.pickFiles', { purpose: 'add-files', vaultId });
  if (!picked) throw new Error('nothing picked');
  const jobId = startedJobId(await app.call('job.add', { vaultId, source: picked.handle, destination: '/' }));
  return app.jobEvents(jobId);
}

/** A folder of three files large enough to be stored one by one, so a job can be stopped between them. */
async function threeLargeFiles(): Promise<string> {
  const source = tempDir();
  const big = Buffer.alloc(3 * 1024 * 1024, 1);
  await writeTree(source, { 'a.bin': big, 'b.bin': big, 'c.bin': big });
  return source;
}

/** The bytes of a dropped file that a page never sends. */
function bytesThatNeverCome(): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => new Promise<IteratorResult<Uint8Array>>(() => undefined),
    }),
  };
}

requireBuiltCli(); // the killed restore runs the compiled engine

describe('starting the back end', () => {
  it('removes the partial plaintext that a killed restore of this app left in its destination', async () => {
    const dataDir = tempDir();
    const out = tempDir();
    const { temp, kill } = await restoreInAnotherProcess(join(dataDir, 'state'), join(out, 'photo.jpg'));
    await kill();
    expect(existsSync(temp)).toBe(true);
    await newApp({ dataDir });
    expect(existsSync(temp)).toBe(false);
  });
});

describe('requests of the wrong shape', () => {
  it('answers INVALID_ARGUMENT for an unknown channel, a wrong shape, extra keys or wrong types', async () => {
    const app = await newApp();
    const bad: [string, unknown][] = [
      ['vault.explode', {}],
      ['__proto__', {}],
      ['toString', {}],
      ['vault.info', null],
      ['vault.info', 'v-1'],
      ['vault.info', {}],
      ['vault.info', { vaultId: 7 }],
      ['vault.info', { vaultId: 'v', extra: true }],
      ['entries.list', { vaultId: 'v', path: '' }],
      ['settings.set', { autoLockMinutes: -1 }],
      ['settings.set', { theme: 'neon' }],
      ['job.verify', { vaultId: 'v', readData: 'yes' }],
      ['dialog.pickFolder', { purpose: 'restore-destination' }],
      ['preview.read', { vaultId: 'v', path: '/a', length: PREVIEW_MAX_BYTES + 1 }],
    ];
    for (const [channel, payload] of bad)
      expect(codeOf(await app.raw(channel, payload)), channel).toBe('INVALID_ARGUMENT');
  });

  it('never echoes a passphrase in an error', async () => {
    const app = await newApp();
    const secret = 'my-secret-passphrase-123';
    for (const payload of [
      { vaultId: 'v', passphrase: secret, extra: 1 },
      { vaultId: 'v', passphrase: secret },
      { folder: 'h', name: 'x', passphrase: secret, kdf: 'weak' },
    ]) {
      const result = await app.raw(
        'passphrase' in payload && 'folder' in payload ? 'vault.create' : 'vault.unlock',
        payload,
      );
      expect(result.ok).toBe(false);
      expect(JSON.stringify(result)).not.toContain(secret);
    }
  });

  it('answers INVALID_ARGUMENT for unknown vault and job ids on every channel that takes them', async () => {
    const app = await newApp();
    expect(codeOf(await app.raw('vault.info', { vaultId: 'v-unknown' }))).toBe('INVALID_ARGUMENT');
    expect(codeOf(await app.raw('vault.unlock', { vaultId: 'v-unknown', passphrase: 'x' }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(codeOf(await app.raw('entries.list', { vaultId: 'v-unknown', path: '/' }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(codeOf(await app.raw('job.cancel', { jobId: 'j-unknown' }))).toBe('INVALID_ARGUMENT');
    expect(codeOf(await app.raw('recent.forget', { recentId: 'r-unknown' }))).toBe('INVALID_ARGUMENT');
    expect(codeOf(await app.raw('vault.open', { recentId: 'r-unknown' }))).toBe('INVALID_ARGUMENT');
  });

  it('lists every channel of the contract and handles each (none is left unimplemented)', async () => {
    const app = await newApp();
    for (const channel of channels) {
      const result = await app.raw(channel, {});
      // An empty request is either valid or refused by its schema; never an internal error or an unknown channel.
      expect(result.ok || !result.message.startsWith('Unknown request'), channel).toBe(true);
      expect(codeOf(result), channel).not.toBe('INTERNAL');
    }
  });
});

describe('vaults', () => {
  it('warns at unlock when the vault folder was put back to an older copy since this computer saw it', async () => {
    const app = await newApp();
    const { vaultId, parent } = await newVaultIn(app);
    await app.call('entries.mkdir', { vaultId, path: '/first' });
    await app.call('vault.lock', { vaultId });
    cpSync(join(parent, 'vault'), join(parent, 'older'), { recursive: true });
    await app.call('vault.unlock', { vaultId, passphrase: PASSPHRASE });
    await app.call('entries.mkdir', { vaultId, path: '/second' });
    await app.call('vault.close', { vaultId });

    rmSync(join(parent, 'vault'), { recursive: true });
    cpSync(join(parent, 'older'), join(parent, 'vault'), { recursive: true });
    app.dialogs.folders.push(join(parent, 'vault'));
    const picked = await app.call('dialog.pickFolder', { purpose: 'open-vault' });
    const reopened = await app.call('vault.open', { folder: picked?.handle ?? '' });
    const unlocked = await app.call('vault.unlock', { vaultId: reopened.vaultId, passphrase: PASSPHRASE });
    expect(unlocked.problems).toEqual([]);
    expect(unlocked.rollbackWarning).toMatch(/older than when this computer last opened it/);
    await app.call('vault.lock', { vaultId: reopened.vaultId });
    // Shown once: the state found is what the next unlock compares with.
    expect(
      await app.call('vault.unlock', { vaultId: reopened.vaultId, passphrase: PASSPHRASE }),
    ).toMatchObject({
      problems: [],
      rollbackWarning: null,
    });
  });

  it('tells the window whether its host takes dropped folders (by path: Electron) or not (the preview)', async () => {
    expect(await (await newApp({ folderDrops: true })).call('app.capabilities', {})).toMatchObject({
      folderDrops: true,
    });
    expect(await (await newApp()).call('app.capabilities', {})).toMatchObject({ folderDrops: false });
  });

  it('says in words, without the system error, when what this computer remembers of a vault cannot be read', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    await app.call('vault.lock', { vaultId });
    const memory = join(app.dataDir, 'state', 'seen-vaults');
    const [remembered] = readdirSync(memory);
    if (remembered === undefined) throw new Error('the vault was not remembered');
    rmSync(join(memory, remembered));
    mkdirSync(join(memory, remembered)); // reading it fails (EISDIR), as an unreadable file would
    const warned = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const unlocked = await app.call('vault.unlock', { vaultId, passphrase: PASSPHRASE });
      expect(unlocked.rollbackWarning).toMatch(
        /could not read what this computer remembers about this vault/,
      );
      expect(unlocked.rollbackWarning).not.toMatch(/EISDIR|seen-vaults/);
      expect(warned).toHaveBeenCalledWith(
        expect.stringMatching(/could not read the vault's remembered state: .*EISDIR/),
      );
    } finally {
      warned.mockRestore();
    }
  });

  it('reads the sealed tree snapshot when a vault is opened, before the passphrase comes', async () => {
    const app = await newApp();
    const { vaultId, parent } = await newVaultIn(app);
    await app.call('entries.mkdir', { vaultId, path: '/kept' });
    await app.call('vault.close', { vaultId });
    const snapshotReads = vi.spyOn(IndexDb.prototype, 'snapshot');
    try {
      app.dialogs.folders.push(join(parent, 'vault'));
      const picked = await app.call('dialog.pickFolder', { purpose: 'open-vault' });
      const opened = await app.call('vault.open', { folder: picked?.handle ?? '' });
      await new Promise((resolve) => setImmediate(resolve));
      expect(snapshotReads).toHaveBeenCalledTimes(1);
      const unlocked = await app.call('vault.unlock', { vaultId: opened.vaultId, passphrase: PASSPHRASE });
      // The root's entries come with the unlock's answer, as entries.list gives them.
      expect(unlocked.root.map((entry) => entry.name)).toEqual(['kept']);
      expect(await app.call('entries.list', { vaultId: opened.vaultId, path: '/' })).toEqual(unlocked.root);
    } finally {
      snapshotReads.mockRestore();
    }
  });

  it('creates, locks, refuses a wrong passphrase, unlocks, closes, and tells the window', async () => {
    const app = await newApp();
    const { vaultId, parent } = await newVaultIn(app);
    expect(existsSync(join(parent, 'vault', 'coffer.header'))).toBe(true);
    const info = await app.call('vault.info', { vaultId });
    expect(info).toMatchObject({ name: 'vault', location: join(parent, 'vault'), locked: false });
    expect(info.info.files).toBe(0);
    await app.call('vault.lock', { vaultId });
    expect(app.events).toContainEqual({
      event: 'locked',
      payload: { vaultId, reason: 'user', stoppedJobs: [] },
    });
    expect(codeOf(await app.raw('entries.list', { vaultId, path: '/' }))).toBe('VAULT_LOCKED');
    expect(codeOf(await app.raw('vault.unlock', { vaultId, passphrase: 'wrong' }))).toBe('WRONG_PASSPHRASE');
    expect(await app.call('vault.unlock', { vaultId, passphrase: PASSPHRASE })).toEqual({
      problems: [],
      openWarnings: [],
      rollbackWarning: null,
      headerOlderThanData: false,
      root: [],
    });
    expect(await app.call('entries.list', { vaultId, path: '/' })).toEqual([]);
    expect((await app.call('vault.listOpen', {})).map((vault) => vault.vaultId)).toEqual([vaultId]);
    await app.call('vault.close', { vaultId });
    expect(app.events).toContainEqual({ event: 'closed', payload: { vaultId } });
    expect(codeOf(await app.raw('vault.info', { vaultId }))).toBe('INVALID_ARGUMENT');
    expect(await app.call('vault.listOpen', {})).toEqual([]);
  });

  it("pads stored sizes unless the window's create form asked it not to", async () => {
    const app = await newApp();
    const parent = tempDir();
    // What the vault records, and its details show; the padding itself is the engine's (tests/core/padding.test.ts).
    const paddingOf = async (contentPadding?: 'padme' | 'none'): Promise<string> => {
      const name = contentPadding ?? 'default';
      const { vaultId } = await app.call('vault.create', {
        folder: await pickFolder(app, parent, { purpose: 'create-vault' }),
        name,
        passphrase: PASSPHRASE,
        kdf: 'interactive',
        ...(contentPadding ? { contentPadding } : {}),
      });
      const { info } = await app.call('vault.info', { vaultId });
      await app.call('vault.close', { vaultId });
      return info.contentPadding;
    };
    expect(await paddingOf()).toBe('padme');
    expect(await paddingOf('padme')).toBe('padme');
    expect(await paddingOf('none')).toBe('none');
    const folder = await pickFolder(app, parent, { purpose: 'create-vault' });
    const unknown = await app.raw('vault.create', {
      folder,
      name: 'other',
      passphrase: PASSPHRASE,
      contentPadding: 'zeros',
    });
    expect(codeOf(unknown)).toBe('INVALID_ARGUMENT');
  });

  it('refuses a vault name that could escape the picked folder', async () => {
    const app = await newApp();
    const parent = tempDir();
    const folder = await pickFolder(app, parent, { purpose: 'create-vault' });
    for (const name of ['../outside', 'a/b', '.', '..']) {
      const result = await app.raw('vault.create', {
        folder,
        name,
        passphrase: PASSPHRASE,
        kdf: 'interactive',
      });
      expect(codeOf(result), name).toBe('INVALID_NAME');
    }
    expect(readdirSync(parent)).toEqual([]);
  });

  it('wipes the passphrase buffer it handed to the engine', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    await app.call('vault.lock', { vaultId });
    const unlock = vi.spyOn(Vault.prototype, 'unlock');
    try {
      await app.call('vault.unlock', { vaultId, passphrase: PASSPHRASE });
      const given = unlock.mock.calls[0]?.[0];
      expect(given?.length).toBe(Buffer.byteLength(PASSPHRASE));
      expect(given?.every((byte) => byte === 0)).toBe(true);
    } finally {
      unlock.mockRestore();
    }
  });

  it('reopens through the recent list, marks a vault gone from disk missing, and forgets it', async () => {
    const dataDir = tempDir();
    const first = await newApp({ dataDir });
    const { vaultId, parent } = await newVaultIn(first);
    await first.call('vault.close', { vaultId });
    const [recent] = await first.call('recent.list', {});
    expect(recent).toMatchObject({ name: 'vault', location: join(parent, 'vault'), missing: false });
    if (!recent) throw new Error('no recent vault');

    const second = await newApp({ dataDir });
    const reopened = await second.call('vault.open', { recentId: recent.recentId });
    expect(reopened).toMatchObject({ locked: true, recentId: recent.recentId });
    await second.call('vault.unlock', { vaultId: reopened.vaultId, passphrase: PASSPHRASE });
    await second.call('vault.close', { vaultId: reopened.vaultId });

    await rm(join(parent, 'vault'), { recursive: true });
    expect((await second.call('recent.list', {}))[0]?.missing).toBe(true);
    expect(codeOf(await second.raw('vault.open', { recentId: recent.recentId }))).toBe('NOT_FOUND');
    await second.call('recent.forget', { recentId: recent.recentId });
    expect(await second.call('recent.list', {})).toEqual([]);
  });

  it('opens a vault whose header is lost but whose header backup is there, and says so at its first unlock', async () => {
    const app = await newApp();
    const { vaultId, parent } = await newVaultIn(app);
    await app.call('vault.close', { vaultId });
    await rm(join(parent, 'vault', 'coffer.header'));
    const [recent] = await app.call('recent.list', {});
    expect(recent?.missing).toBe(false);
    if (!recent) throw new Error('no recent vault');
    const reopened = await app.call('vault.open', { recentId: recent.recentId });
    const usedBackup = /its backup \(coffer\.header\.bak\) is used instead/u;
    const first = await app.call('vault.unlock', { vaultId: reopened.vaultId, passphrase: PASSPHRASE });
    expect(first.openWarnings).toEqual([expect.stringMatching(usedBackup)]);
    const { info } = await app.call('vault.info', { vaultId: reopened.vaultId });
    expect(info.warnings.join(' ')).toMatch(usedBackup);
    // That unlock wrote the header again: the next unlock of this open has nothing new to say about it.
    expect(existsSync(join(parent, 'vault', 'coffer.header'))).toBe(true);
    await app.call('vault.lock', { vaultId: reopened.vaultId });
    const again = await app.call('vault.unlock', { vaultId: reopened.vaultId, passphrase: PASSPHRASE });
    expect(again.openWarnings).toEqual([]);
  });

  it('adds a picked vault folder to the recent list only when it is a vault, and marks entries missing', async () => {
    const app = await newApp();
    const { vaultId, parent } = await newVaultIn(app);
    await app.call('vault.close', { vaultId });
    const notVault = await pickFolder(app, tempDir(), { purpose: 'open-vault' });
    expect(codeOf(await app.raw('recent.add', { folder: notVault }))).toBe('NOT_A_VAULT');
    const folder = await pickFolder(app, join(parent, 'vault'), { purpose: 'open-vault' });
    const added = await app.call('recent.add', { folder });
    expect(await app.call('recent.markMissing', { recentId: added.recentId })).toMatchObject({
      missing: true,
    });
    // The folder is there, so the next look clears the mark.
    expect((await app.call('recent.list', {}))[0]?.missing).toBe(false);
  });
});

describe('browsing and changes', () => {
  it('makes folders, renames, moves, lists, stats, searches, draws the tree, counts and removes', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    await app.call('entries.mkdir', { vaultId, path: '/Docs/Old' });
    await app.call('entries.mkdir', { vaultId, path: '/Photos' });
    await addTree(app, vaultId, { 'report.txt': 'quarterly numbers' });
    await app.call('entries.move', { vaultId, paths: ['/report.txt'], destination: '/Docs' });
    expect(
      await app.call('entries.rename', { vaultId, path: '/Docs/report.txt', newName: 'Report.md' }),
    ).toMatchObject({
      path: '/Docs/Report.md',
      size: 17,
    });
    expect((await app.call('entries.list', { vaultId, path: '/Docs' })).map((entry) => entry.name)).toEqual([
      'Old',
      'Report.md',
    ]);
    expect(await app.call('entries.stat', { vaultId, path: '/Docs/Report.md' })).toMatchObject({
      type: 'file',
    });
    expect((await app.call('entries.search', { vaultId, query: 'repo' })).map((entry) => entry.path)).toEqual(
      ['/Docs/Report.md'],
    );
    const tree = await app.call('entries.tree', { vaultId });
    expect(tree.children.map((child) => [child.path, child.children.map((c) => c.path)])).toEqual([
      ['/Docs', ['/Docs/Old']],
      ['/Photos', []],
    ]);
    const shallow = await app.call('entries.tree', { vaultId, depth: 1 });
    expect(shallow.children[0]).toMatchObject({ path: '/Docs', children: [], truncated: true });
    expect(await app.call('vault.totals', { vaultId })).toEqual({ files: 1, folders: 3, totalBytes: 17 });
    expect(await app.call('entries.remove', { vaultId, paths: ['/Docs'] })).toEqual({ removed: 3 });
    expect(await app.call('vault.totals', { vaultId })).toEqual({ files: 0, folders: 1, totalBytes: 0 });
    expect(codeOf(await app.raw('entries.stat', { vaultId, path: '/Docs' }))).toBe('NOT_FOUND');
    expect(codeOf(await app.raw('entries.rename', { vaultId, path: '/Photos', newName: 'a/b' }))).toBe(
      'INVALID_NAME',
    );
    expect(codeOf(await app.raw('entries.tree', { vaultId, path: '/Nope' }))).toBe('NOT_FOUND');
    await app.call('vault.lock', { vaultId });
    expect(codeOf(await app.raw('vault.totals', { vaultId }))).toBe('VAULT_LOCKED');
  });

  it('reads a bounded byte range of a file for preview', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251));
    await addTree(app, vaultId, { 'data.bin': bytes });
    const range = await app.call('preview.read', { vaultId, path: '/data.bin', offset: 100, length: 50 });
    expect(Buffer.from(range.bytes).equals(bytes.subarray(100, 150))).toBe(true);
    expect(range.fileSize).toBe(3000);
    const tail = await app.call('preview.read', { vaultId, path: '/data.bin', offset: 2990, length: 100 });
    expect(Buffer.from(tail.bytes).equals(bytes.subarray(2990))).toBe(true);
    expect(
      (await app.call('preview.read', { vaultId, path: '/data.bin', offset: 3000, length: 1 })).bytes.length,
    ).toBe(0);
    expect(
      codeOf(await app.raw('preview.read', { vaultId, path: '/data.bin', offset: 3001, length: 1 })),
    ).toBe('INVALID_ARGUMENT');
    expect(codeOf(await app.raw('preview.read', { vaultId, path: '/', length: 1 }))).toBe('INVALID_ARGUMENT');
  });
});

describe('jobs', () => {
  it('says that a job waits for another on the vault to end, and when its turn came', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    const { jobId: add, arrive } = await startHeldAdd(app, vaultId);
    // A check runs alone: it waits for the add, and says so once it has waited a while.
    const check = await app.call('job.verify', { vaultId, readData: false });
    await vi.waitFor(() => {
      expect(app.events.some(({ payload }) => (payload as JobEvent).type === 'waiting')).toBe(true);
    }, WAIT_FOR_IO);
    expect(await app.call('job.list', {})).toContainEqual(
      expect.objectContaining({ jobId: check.jobId, waiting: true }),
    );
    arrive();
    const [added, checked] = await Promise.all([app.jobEvents(add), app.jobEvents(check.jobId)]);
    expect(added.some((event) => event.type === 'waiting')).toBe(false);
    expect(checked.map((event) => event.type).slice(0, 3)).toEqual(['started', 'waiting', 'waiting']);
    expect(checked.filter((event) => event.type === 'waiting').map((event) => event.waiting)).toEqual([
      true,
      false,
    ]);
    expect(checked.at(-1)).toMatchObject({ type: 'ended', status: 'done' });
  });

  it('adds picked files, restores them byte-identical, verifies, with events in the contract order', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    const files = { 'a.txt': 'alpha', 'b.bin': Buffer.alloc(2 * 1024 * 1024 + 3, 7) };
    const added = await addTree(app, vaultId, files);
    expect(added[0]?.type).toBe('started');
    expect(added.at(-1)).toMatchObject({
      type: 'ended',
      status: 'done',
      result: { kind: 'add', report: { filesAdded: 2 } },
    });
    expect((await app.call('entries.list', { vaultId, path: '/' })).map((entry) => entry.path)).toEqual([
      '/a.txt',
      '/b.bin',
    ]);
    expect(added.some((event) => event.type === 'progress')).toBe(true);

    const out = tempDir();
    const destination = await pickFolder(app, out, { purpose: 'restore-destination', vaultId });
    const { jobId } = await app.call('job.restore', { vaultId, paths: ['/a.txt', '/b.bin'], destination });
    expect((await app.jobEvents(jobId)).at(-1)).toMatchObject({
      status: 'done',
      result: { kind: 'restore' },
    });
    expect(readFileSync(join(out, 'a.txt'), 'utf8')).toBe('alpha');
    expect(readFileSync(join(out, 'b.bin')).equals(files['b.bin'])).toBe(true);

    // An existing file is a problem of the report, sent as its own event before the end.
    const again = await app.call('job.restore', { vaultId, paths: ['/a.txt'], destination });
    const events = await app.jobEvents(again.jobId);
    expect(events.filter((event) => event.type === 'problem')).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ status: 'done' });

    const verify = await app.call('job.verify', { vaultId, readData: true });
    expect((await app.jobEvents(verify.jobId)).at(-1)).toMatchObject({
      status: 'done',
      result: { kind: 'verify', report: { ok: true, filesChecked: 2 } },
    });
    expect(await app.call('job.list', {})).toEqual([]);
  });

  it('adds dropped bytes once: the handle is used up, and belongs to the vault that used it', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    const dropped = app.backend.registerDroppedBytes([
      { name: 'hello.txt', size: 5, mtime: 1_600_000_000_000, bytes: Buffer.from('hello') },
    ]);
    if (!dropped.ok) throw new Error(dropped.message);
    expect(dropped.value.count).toBe(1);
    const jobId = startedJobId(await app.call('job.add', { vaultId, source: dropped.value.handle }));
    expect((await app.jobEvents(jobId)).at(-1)).toMatchObject({ status: 'done' });
    expect(await app.call('entries.stat', { vaultId, path: '/hello.txt' })).toMatchObject({
      size: 5,
      mtime: 1_600_000_000_000,
    });
    expect(codeOf(await app.raw('job.add', { vaultId, source: dropped.value.handle }))).toBe(
      'INVALID_ARGUMENT',
    );
  });

  it('asked to, names the taken paths of a drop instead of adding it, without using it up; then keeps both, skips or replaces as asked', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    const drop = (text: string): string => {
      const dropped = app.backend.registerDroppedBytes([
        { name: 'Memo.txt', size: text.length, mtime: 1_600_000_000_000, bytes: Buffer.from(text) },
        { name: 'fresh.txt', size: 1, mtime: 1_600_000_000_000, bytes: Buffer.from('f') },
      ]);
      if (!dropped.ok) throw new Error(dropped.message);
      return dropped.value.handle;
    };
    const add = async (source: string, onExisting: 'skip' | 'keep-both' | 'replace'): Promise<void> => {
      const jobId = startedJobId(await app.call('job.add', { vaultId, source, onExisting }));
      expect((await app.jobEvents(jobId)).at(-1)).toMatchObject({ status: 'done' });
    };
    const read = async (path: string): Promise<string> =>
      Buffer.from(
        (await app.call('preview.read', { vaultId, path, offset: 0, length: 100 })).bytes,
      ).toString();
    const first = drop('one');
    // Nothing taken: 'ask' starts the add.
    const firstJob = startedJobId(await app.call('job.add', { vaultId, source: first, onExisting: 'ask' }));
    expect((await app.jobEvents(firstJob)).at(-1)).toMatchObject({ status: 'done' });

    const second = drop('two!');
    expect(await app.call('job.add', { vaultId, source: second, onExisting: 'ask' })).toEqual({
      taken: { count: 2, paths: ['/Memo.txt', '/fresh.txt'] },
    });
    expect(await app.call('job.list', {})).toEqual([]); // nothing started
    await add(second, 'keep-both'); // the same handle still works: asking did not use it up
    expect(
      (await app.call('entries.list', { vaultId, path: '/' })).map((entry) => entry.name).sort(),
    ).toEqual(['Memo (2).txt', 'Memo.txt', 'fresh (2).txt', 'fresh.txt']);

    await add(drop('three'), 'skip');
    expect(await read('/Memo.txt')).toBe('one');
    await add(drop('four!'), 'replace');
    expect(await read('/Memo.txt')).toBe('four!');
    expect(await read('/Memo (2).txt')).toBe('two!');
    expect(codeOf(await app.raw('job.add', { vaultId, source: first, onExisting: 'merge' }))).toBe(
      'INVALID_ARGUMENT',
    );
  });

  it('asked to, names the taken paths of picked files or a picked folder, and starts when none is taken', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    await addFiles(app, vaultId, { 'a.txt': 'one' });
    const source = tempDir();
    await writeTree(source, { 'a.txt': 'two', 'b.txt': 'new', 'Docs/c.txt': 'c' });
    app.dialogs.files.push([join(source, 'a.txt'), join(source, 'b.txt')]);
    const picked = await app.call('dialog.pickFiles', { purpose: 'add-files', vaultId });
    if (!picked) throw new Error('nothing picked');
    expect(await app.call('job.add', { vaultId, source: picked.handle, onExisting: 'ask' })).toEqual({
      taken: { count: 1, paths: ['/a.txt'] },
    });
    const docs = await pickFolder(app, join(source, 'Docs'), { purpose: 'add-folder', vaultId });
    const added = startedJobId(await app.call('job.add', { vaultId, source: docs, onExisting: 'ask' }));
    expect((await app.jobEvents(added)).at(-1)).toMatchObject({ status: 'done' });
    const again = await pickFolder(app, join(source, 'Docs'), { purpose: 'add-folder', vaultId });
    expect(await app.call('job.add', { vaultId, source: again, onExisting: 'ask' })).toEqual({
      taken: { count: 1, paths: ['/Docs/c.txt'] }, // folders merge: only the file inside is taken
    });
    expect(await app.call('entries.stat', { vaultId, path: '/a.txt' })).toMatchObject({ size: 3 });
  });

  it('forgets a drop whose taken names were asked about when the vault locks before the answer', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    await addFiles(app, vaultId, { 'Memo.txt': 'one' });
    const dropped = app.backend.registerDroppedBytes([
      { name: 'Memo.txt', size: 3, mtime: 1_600_000_000_000, bytes: Buffer.from('two') },
    ]);
    if (!dropped.ok) throw new Error(dropped.message);
    const source = dropped.value.handle;
    expect(await app.call('job.add', { vaultId, source, onExisting: 'ask' })).toMatchObject({
      taken: { count: 1 },
    });
    // The person is being asked what to do when the vault locks: the dropped plaintext must not outlive it.
    await app.call('vault.lock', { vaultId });
    await app.call('vault.unlock', { vaultId, passphrase: PASSPHRASE });
    expect(codeOf(await app.raw('job.add', { vaultId, source, onExisting: 'replace' }))).toBe(
      'INVALID_ARGUMENT',
    );
  });

  it('refuses a drop that is incomplete, larger than announced, empty or malformed', async () => {
    const app = await newApp();
    expect(codeOf(app.backend.registerDroppedBytes([]))).toBe('INVALID_ARGUMENT');
    expect(
      codeOf(app.backend.registerDroppedBytes([{ name: 'a', size: 10, mtime: 0, bytes: Buffer.from('x') }])),
    ).toBe('INVALID_ARGUMENT');
    expect(
      codeOf(app.backend.registerDroppedBytes([{ name: 'a', size: 1, mtime: 0, bytes: Buffer.from('xy') }])),
    ).toBe('INVALID_ARGUMENT');
    expect(
      codeOf(app.backend.registerDroppedBytes([{ name: 'a', size: -1, mtime: 0, bytes: Buffer.alloc(0) }])),
    ).toBe('INVALID_ARGUMENT');
    expect(codeOf(app.backend.registerDroppedPaths(['relative/path']))).toBe('INVALID_ARGUMENT');
    expect(codeOf(app.backend.registerDroppedPaths([]))).toBe('INVALID_ARGUMENT');
  });

  it('adds dropped paths', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    const source = tempDir();
    await writeTree(source, { 'dir/x.txt': 'x' });
    const dropped = app.backend.registerDroppedPaths([join(source, 'dir')]);
    if (!dropped.ok) throw new Error(dropped.message);
    const jobId = startedJobId(await app.call('job.add', { vaultId, source: dropped.value.handle }));
    expect((await app.jobEvents(jobId)).at(-1)).toMatchObject({ status: 'done' });
    expect(await app.call('entries.stat', { vaultId, path: '/dir/x.txt' })).toMatchObject({ size: 1 });
  });

  it('cancels a running job: it ends cancelled and keeps no unfinished file', async () => {
    const app = await appReportingEveryProgress();
    const { vaultId } = await newVaultIn(app);
    const source = await threeLargeFiles();
    app.dialogs.folders.push(source);
    const picked = await app.call('dialog.pickFolder', { purpose: 'add-folder', vaultId });
    if (!picked) throw new Error('nothing picked');
    let cancelled = false;
    app.backend.onEvent((event, payload) => {
      const job = payload as JobEvent;
      if (event === 'job' && job.type === 'progress' && job.progress.filesDone > 0 && !cancelled) {
        cancelled = true;
        void app.backend.handle('job.cancel', { jobId: job.jobId });
      }
    });
    const jobId = startedJobId(await app.call('job.add', { vaultId, source: picked.handle }));
    const events = await app.jobEvents(jobId);
    const stored = (
      await app.call('entries.list', { vaultId, path: `/${source.split('/').at(-1) ?? ''}` })
    ).map((entry) => entry.name);
    expect(stored.length).toBeLessThan(3);
    // The count the window shows is of the files that got in.
    expect(events.at(-1)).toEqual({
      jobId,
      vaultId,
      kind: 'add',
      type: 'ended',
      status: 'cancelled',
      filesFinished: stored.length,
    });
    expect(codeOf(await app.raw('job.cancel', { jobId }))).toBe('INVALID_ARGUMENT');
  });

  it('says how many files a stopped restore had put at its destination: those that are there', async () => {
    const app = await appReportingEveryProgress();
    const { vaultId } = await newVaultIn(app);
    const source = await threeLargeFiles();
    app.dialogs.files.push(['a.bin', 'b.bin', 'c.bin'].map((name) => join(source, name)));
    const picked = await app.call('dialog.pickFiles', { purpose: 'add-files', vaultId });
    if (!picked) throw new Error('nothing picked');
    const added = startedJobId(await app.call('job.add', { vaultId, source: picked.handle }));
    expect((await app.jobEvents(added)).at(-1)).toMatchObject({ status: 'done' });
    const out = tempDir();
    const destination = await pickFolder(app, out, { purpose: 'restore-destination', vaultId });
    let cancelled = false;
    app.backend.onEvent((event, payload) => {
      const job = payload as JobEvent;
      if (
        event === 'job' &&
        job.kind === 'restore' &&
        job.type === 'progress' &&
        job.progress.filesDone > 0
      ) {
        if (cancelled) return;
        cancelled = true;
        void app.backend.handle('job.cancel', { jobId: job.jobId });
      }
    });
    const { jobId } = await app.call('job.restore', {
      vaultId,
      paths: ['/a.bin', '/b.bin', '/c.bin'],
      destination,
    });
    const end = (await app.jobEvents(jobId)).at(-1);
    const restored = readdirSync(out);
    expect(restored.length).toBeLessThan(3);
    expect(end).toMatchObject({ type: 'ended', status: 'cancelled', filesFinished: restored.length });
  });

  it('counts a dropped file that got in before a stop, while the next one’s bytes had not come', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    const big = Buffer.alloc(3 * 1024 * 1024, 1);
    const dropped = app.backend.registerDroppedBytes([
      { name: 'first.bin', size: big.length, mtime: 0, bytes: big },
      { name: 'late.txt', size: 5, mtime: 0, bytes: bytesThatNeverCome() },
    ]);
    if (!dropped.ok) throw new Error(dropped.message);
    const jobId = startedJobId(await app.call('job.add', { vaultId, source: dropped.value.handle }));
    // A large file's row is committed once its blob is in place, before the next file is read.
    await vi.waitFor(async () => {
      expect(await app.call('entries.list', { vaultId, path: '/' })).toHaveLength(1);
    }, WAIT_FOR_IO);
    await app.call('job.cancel', { jobId });
    expect((await app.jobEvents(jobId)).at(-1)).toMatchObject({ status: 'cancelled', filesFinished: 1 });
    expect((await app.call('entries.list', { vaultId, path: '/' })).map((entry) => entry.name)).toEqual([
      'first.bin',
    ]);
  }, 15_000);

  it('cancels an add of dropped files that waits for bytes that have not come: at once, nothing added', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    const dropped = app.backend.registerDroppedBytes([
      { name: 'late.txt', size: 5, mtime: 0, bytes: bytesThatNeverCome() },
    ]);
    if (!dropped.ok) throw new Error(dropped.message);
    const jobId = startedJobId(await app.call('job.add', { vaultId, source: dropped.value.handle }));
    await app.call('job.cancel', { jobId });
    expect((await app.jobEvents(jobId)).at(-1)).toMatchObject({ type: 'ended', status: 'cancelled' });
    expect(await app.call('entries.list', { vaultId, path: '/' })).toEqual([]);
  }, 15_000);

  it('stops every job of a vault when it is locked, wipes its handles, and says why and what it stopped', async () => {
    const app = await appReportingEveryProgress();
    const { vaultId } = await newVaultIn(app);
    const source = await threeLargeFiles();
    const restoreTo = await pickFolder(app, tempDir(), { purpose: 'restore-destination', vaultId });
    app.dialogs.files.push(['a.bin', 'b.bin', 'c.bin'].map((name) => join(source, name)));
    const picked = await app.call('dialog.pickFiles', { purpose: 'add-files', vaultId });
    if (!picked) throw new Error('nothing picked');
    let locking = false;
    let runningWhenLocked = false;
    app.backend.onEvent((event, payload) => {
      const job = payload as JobEvent;
      if (event === 'job' && job.type === 'progress' && job.progress.filesDone > 0 && !locking) {
        locking = true;
        runningWhenLocked = app.backend.jobsRunning();
        void app.backend.handle('vault.lock', { vaultId });
      }
    });
    const jobId = startedJobId(await app.call('job.add', { vaultId, source: picked.handle }));
    expect((await app.jobEvents(jobId)).at(-1)).toMatchObject({ status: 'cancelled' });
    await vi.waitFor(() => {
      expect(app.events).toContainEqual({
        event: 'locked',
        payload: { vaultId, reason: 'user', stoppedJobs: [{ kind: 'add', begun: true }] },
      });
    }, WAIT_FOR_IO);
    expect(await app.call('job.list', {})).toEqual([]);
    expect([runningWhenLocked, app.backend.jobsRunning()]).toEqual([true, false]);
    expect((await app.call('vault.info', { vaultId })).locked).toBe(true);
    await app.call('vault.unlock', { vaultId, passphrase: PASSPHRASE });
    // A choice made before the lock must be made again.
    expect(codeOf(await app.raw('job.restore', { vaultId, paths: ['/a.bin'], destination: restoreTo }))).toBe(
      'INVALID_ARGUMENT',
    );
  });

  it('says a lock stopped a delete and an add that waited for an add, which did nothing', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    await app.call('entries.mkdir', { vaultId, path: '/Old stuff' });
    const add = await startHeldAdd(app, vaultId);
    const removing = app.raw('entries.remove', { vaultId, paths: ['/Old stuff'] });
    const waitingAdd = await startHeldAdd(app, vaultId);
    await vi.waitFor(() => {
      const waiting: unknown = expect.objectContaining({ jobId: waitingAdd.jobId, type: 'waiting' });
      expect(app.events).toContainEqual({ event: 'job', payload: waiting });
    }, WAIT_FOR_IO);
    await app.call('vault.lock', { vaultId });
    expect(codeOf(await removing)).toBe('CANCELLED');
    expect(app.events).toContainEqual({
      event: 'locked',
      payload: {
        vaultId,
        reason: 'user',
        stoppedJobs: [
          { kind: 'add', begun: true },
          { kind: 'add', begun: false },
          { kind: 'delete', begun: false },
        ],
      },
    });
    add.arrive();
    waitingAdd.arrive();
    await app.call('vault.unlock', { vaultId, passphrase: PASSPHRASE });
    expect((await app.call('entries.list', { vaultId, path: '/' })).map((entry) => entry.name)).toEqual([
      'Old stuff',
    ]);

    // A delete that ended before the lock is not among what the lock stopped.
    await app.call('entries.remove', { vaultId, paths: ['/Old stuff'] });
    await app.call('vault.lock', { vaultId });
    expect(app.events.at(-1)).toEqual({
      event: 'locked',
      payload: { vaultId, reason: 'user', stoppedJobs: [] },
    });
  });

  it('lockAll locks every unlocked vault with the reason, and refuses jobs on a locked vault', async () => {
    const app = await newApp();
    const one = await newVaultIn(app);
    const two = await newVaultIn(app);
    await app.backend.lockAll('idle');
    for (const { vaultId } of [one, two]) {
      expect(app.events).toContainEqual({
        event: 'locked',
        payload: { vaultId, reason: 'idle', stoppedJobs: [] },
      });
      expect(codeOf(await app.raw('job.verify', { vaultId }))).toBe('VAULT_LOCKED');
    }
  });
});

describe('paths on disk come only from the user', () => {
  it('refuses a raw path where a handle is expected, and creates or writes nothing there', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    await addTree(app, vaultId, { 'secret.txt': 'top secret' });
    const target = tempDir();
    expect(
      codeOf(
        await app.raw('vault.create', {
          folder: target,
          name: 'v',
          passphrase: PASSPHRASE,
          kdf: 'interactive',
        }),
      ),
    ).toBe('INVALID_ARGUMENT');
    expect(codeOf(await app.raw('vault.open', { folder: target }))).toBe('INVALID_ARGUMENT');
    expect(codeOf(await app.raw('recent.add', { folder: target }))).toBe('INVALID_ARGUMENT');
    expect(
      codeOf(await app.raw('job.restore', { vaultId, paths: ['/secret.txt'], destination: target })),
    ).toBe('INVALID_ARGUMENT');
    expect(codeOf(await app.raw('job.add', { vaultId, source: '/etc/passwd' }))).toBe('INVALID_ARGUMENT');
    expect(readdirSync(target)).toEqual([]);
    expect(codeOf(await app.raw('entries.stat', { vaultId, path: '/passwd' }))).toBe('NOT_FOUND');
  });

  it('refuses a handle of another purpose', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    await addTree(app, vaultId, { 'a.txt': 'a' });
    const addFolder = await pickFolder(app, tempDir(), { purpose: 'add-folder', vaultId });
    const openVault = await pickFolder(app, tempDir(), { purpose: 'open-vault' });
    const restoreTo = await pickFolder(app, tempDir(), { purpose: 'restore-destination', vaultId });
    expect(codeOf(await app.raw('job.restore', { vaultId, paths: ['/a.txt'], destination: addFolder }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(codeOf(await app.raw('job.restore', { vaultId, paths: ['/a.txt'], destination: openVault }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(codeOf(await app.raw('job.add', { vaultId, source: restoreTo }))).toBe('INVALID_ARGUMENT');
    expect(
      codeOf(
        await app.raw('vault.create', {
          folder: restoreTo,
          name: 'v',
          passphrase: PASSPHRASE,
          kdf: 'interactive',
        }),
      ),
    ).toBe('INVALID_ARGUMENT');
  });

  it('refuses a handle of another vault', async () => {
    const app = await newApp();
    const one = await newVaultIn(app);
    const two = await newVaultIn(app);
    await addTree(app, two.vaultId, { 'a.txt': 'a' });
    const restoreTo = tempDir();
    const ofOne = await pickFolder(app, restoreTo, { purpose: 'restore-destination', vaultId: one.vaultId });
    const result = await app.raw('job.restore', {
      vaultId: two.vaultId,
      paths: ['/a.txt'],
      destination: ofOne,
    });
    expect(codeOf(result)).toBe('INVALID_ARGUMENT');
    expect(readdirSync(restoreTo)).toEqual([]);
    // A drop belongs to the first vault that uses it.
    const dropped = app.backend.registerDroppedPaths([restoreTo]);
    if (!dropped.ok) throw new Error(dropped.message);
    expect(
      codeOf(
        await app.raw('job.add', {
          vaultId: one.vaultId,
          source: dropped.value.handle,
          destination: '/nope',
        }),
      ),
    ).toBe('NOT_FOUND');
  });

  it('refuses an expired handle', async () => {
    let now = 1_000_000;
    const app = await newApp({ now: () => now, handleTtlMs: 60_000 });
    const { vaultId } = await newVaultIn(app);
    await addTree(app, vaultId, { 'a.txt': 'a' });
    const restoreTo = tempDir();
    const handle = await pickFolder(app, restoreTo, { purpose: 'restore-destination', vaultId });
    now += 60_001;
    expect(codeOf(await app.raw('job.restore', { vaultId, paths: ['/a.txt'], destination: handle }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(readdirSync(restoreTo)).toEqual([]);
  });

  it('answers null when the user cancels a dialog', async () => {
    const app = await newApp();
    expect(await app.call('dialog.pickFolder', { purpose: 'open-vault' })).toBeNull();
  });
});
