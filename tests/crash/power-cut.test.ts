/**
 * A simulated power cut at every moment of add, delete, move, rename, making folders, a passphrase change, adding
 * and removing a passphrase, making a recovery key (which must open the vault from the moment it is shown), a key
 * rotation, a re-encryption, a restore and a repair that brings back files left there unsynced
 * (`verify --repair`): the vault folder (and the restore's destination) is rebuilt as a cut could leave it
 * (tests/helpers/power-cut.ts: only what was fsynced survives; SQLite's files as they were), then the vault must
 * open, unlock with the passphrases before the operation or those after it, pass
 * `verify --read-data` with nothing unreferenced, and hold each operation whole or not at all; after the last
 * moment (the CLI has said it is done, and exits), the operation must be there. A restored file is never there
 * with other bytes than its own. A SIGKILL (crash.test.ts) loses nothing the kernel has; a power cut loses
 * whatever was not fsynced, so the order of fsyncs, renames and commits is what is tested here.
 *
 * Each cut is rebuilt twice: with the names each folder had when it was last fsynced, and with the names as they
 * were at the cut (a file system that wrote its metadata early, keeping a rename or an unlink but not the bytes
 * behind it). The add and the restore are large enough to run on worker threads, which write and fsync packs and
 * restored files themselves.
 *
 * What the model rests on: SQLite makes the index durable itself, in rollback-journal mode with exclusive locking
 * and synchronous=FULL (tests/core/vault-basics.test.ts checks those settings); file bytes are matched by inode
 * number, so the folders are on tmpfs, which does not hand a freed inode number out again soon; the hook reads
 * `/proc/self/fd`, so Linux only. Elsewhere the test is skipped and says so.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

import { describe, expect, it } from 'vitest';

import { Vault } from '../../src/core/index.js';
import { requireBuiltCli } from '../cli/helpers.js';
import { nativeSodium } from '../helpers/backends.js';
import type { PowerCutEvent } from '../helpers/power-cut-hook.js';
import {
  afterCut,
  before,
  compiledHook,
  recordRun,
  type Before,
  type KeptNames,
} from '../helpers/power-cut.js';
import { collect, passphrase, PASSPHRASE, tempDir, writeTree } from '../helpers/vault.js';

requireBuiltCli();

const NEW_PASSPHRASE = 'a new passphrase after the power cut';
const TMPFS = '/dev/shm';
const RUNS_HERE = process.platform === 'linux' && existsSync(TMPFS);
if (!RUNS_HERE) console.warn('power-cut test skipped: it needs Linux (/proc/self/fd) and tmpfs at /dev/shm');
const KEPT: readonly KeptNames[] = ['synced names', 'names at the cut'];

type Operation =
  | 'add'
  | 'rm'
  | 'mv'
  | 'rename'
  | 'mkdir'
  | 'passwd'
  | 'keys add'
  | 'keys remove'
  | 'recovery-key'
  | 'rotate'
  | 'reencrypt'
  | 'restore';
const OPERATIONS: Operation[] = [
  'add',
  'rm',
  'mv',
  'rename',
  'mkdir',
  'passwd',
  'keys add',
  'keys remove',
  'recovery-key',
  'rotate',
  'reencrypt',
  'restore',
];
/** Operations whose output says something done that a cut must keep from then on (what was added, a new key). */
const SAYS_DONE: readonly Operation[] = ['add', 'recovery-key'];

/**
 * Which passphrases may open the vault after a cut: sets of them, one of which must be exactly the set that does
 * (the operation's `before` or its `after`; only its `after` once reported done).
 */
function openers(operation: Operation, done: boolean): string[][] {
  const change: Partial<Record<Operation, { before: string[]; after: string[] }>> = {
    passwd: { before: [PASSPHRASE], after: [NEW_PASSPHRASE] },
    'keys add': { before: [PASSPHRASE], after: [PASSPHRASE, NEW_PASSPHRASE] },
    'keys remove': { before: [PASSPHRASE, NEW_PASSPHRASE], after: [PASSPHRASE] },
  };
  const { before: then, after } = change[operation] ?? { before: [PASSPHRASE], after: [PASSPHRASE] };
  return done ? [after] : [then, after];
}

/**
 * What the vault holds before `operation`: small files (packed) and a large one (a blob file of its own); for a
 * restore, enough small files that the workers restore them.
 */
function seedFiles(operation: Operation): Record<string, Buffer> {
  const seed: Record<string, Buffer> = {
    'docs/a.txt': Buffer.from('a'),
    'docs/b.bin': randomBytes(100_000),
    'keep/c.txt': Buffer.from('c'),
    'keep/d.bin': randomBytes(1_200_000),
  };
  if (operation === 'restore') for (let i = 0; i < 200; i++) seed[`keep/many/m${i}.txt`] = randomBytes(200);
  return seed;
}

/** The vault paths of `files` (relative paths) and of the folders they are in, sorted. */
function vaultPaths(files: Record<string, Buffer>): string[] {
  const paths = new Set<string>();
  for (const file of Object.keys(files)) {
    const parts = file.split('/');
    for (let depth = 1; depth <= parts.length; depth++) paths.add(`/${parts.slice(0, depth).join('/')}`);
  }
  return [...paths].sort();
}

/** Files to add: small ones (packed by worker threads) and large ones (blob files). */
function sourceFiles(): Record<string, Buffer> {
  const files: Record<string, Buffer> = {};
  // More than one worker batch of small files (256), so the workers seal and write packs.
  for (let i = 0; i < 300; i++) files[`small/s${i}.bin`] = randomBytes(randomInt(0, 3000));
  for (let i = 0; i < 3; i++) files[`large/l${i}.bin`] = randomBytes(randomInt(1_100_000, 2_500_000));
  return files;
}

/** The passphrases, of the two, that open `dir` (only the old one is tried where no operation adds another). */
async function openingPassphrases(dir: string, operation: Operation): Promise<string[]> {
  const opening: string[] = [];
  const candidates = openers(operation, false).flat();
  for (const candidate of new Set(candidates)) {
    const attempt = await Vault.open(dir, { sodium: nativeSodium });
    try {
      await attempt.unlock(passphrase(candidate));
      opening.push(candidate);
    } catch (error) {
      if ((error as { code?: string }).code !== 'WRONG_PASSPHRASE') throw error;
    } finally {
      attempt.close();
    }
  }
  return opening;
}

/** Every vault file below `prefix` holds the bytes `files` gives for its path below it. */
async function expectBytes(
  vault: Vault,
  paths: Iterable<string>,
  prefix: string,
  files: Record<string, Buffer>,
) {
  for (const path of paths) {
    if (!path.startsWith(prefix) || vault.stat(path).type !== 'file') continue;
    const bytes = files[path.slice(prefix.length)] ?? Buffer.alloc(1);
    expect((await collect(vault.read(path))).equals(bytes), `${path}: its bytes`).toBe(true);
  }
}

/**
 * The restored files found below `dir` (temp files aside): each must hold its own bytes, and those `said`
 * restored (vault paths) must be there.
 */
function expectRestored(
  dir: string,
  seed: Record<string, Buffer>,
  done: boolean,
  said: readonly string[],
): void {
  const found = existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile() && !entry.name.startsWith('.coffer-'))
        .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    : [];
  for (const path of found) {
    expect(readFileSync(join(dir, path)).equals(seed[path] ?? Buffer.alloc(1)), `restored ${path}`).toBe(
      true,
    );
  }
  for (const path of said) expect(found, `${path}, reported restored`).toContain(path.slice(1));
  if (done) expect(found.sort(), 'restored files once reported done').toEqual(Object.keys(seed).sort());
}

/** The paths the CLI reported `verb` ("added", "restored") in what it `said`. */
function reported(said: string, verb: string): string[] {
  return said
    .split('\n')
    .filter((line) => line.startsWith(`${verb} `))
    .map((line) => line.slice(verb.length + 1));
}

/**
 * Checks the vault folder `dir` rebuilt after a cut: it opens and verifies, and holds `operation` whole or not at
 * all (whole once `done`), and every item the CLI had `said` it added.
 */
async function checkVault(
  dir: string,
  operation: Operation,
  { seed, added }: { seed: Record<string, Buffer>; added: Record<string, Buffer> },
  { done, said }: { done: boolean; said: string },
): Promise<void> {
  const opening = await openingPassphrases(dir, operation);
  expect(openers(operation, done), 'the passphrases that open the vault').toContainEqual(opening);
  const vault = await Vault.open(dir, { sodium: nativeSodium });
  try {
    expect(await vault.unlock(passphrase(opening[0])), 'notices at unlock').toEqual([]);
    const report = await vault.verify({ readData: true });
    expect(report.problems, 'problems found by verify').toEqual([]);
    expect(report.unreferenced, 'unreferenced files').toEqual([]);
    const paths = new Set(vault.listRecursive('/').map((entry) => entry.path));
    if (operation === 'add') {
      for (const path of vaultPaths(seed)) expect(paths.has(path), path).toBe(true);
      await expectBytes(vault, paths, '/incoming/', added);
      for (const path of reported(said, 'added')) expect(paths, `${path}, reported added`).toContain(path);
      // The seed, /incoming and its two folders, and every file.
      if (done)
        expect(paths.size, 'entries once reported done').toBe(
          vaultPaths(seed).length + 3 + Object.keys(added).length,
        );
    } else if (operation === 'rm' || operation === 'mv' || operation === 'rename') {
      const moved = ['/docs', '/docs/a.txt', '/docs/b.bin'];
      const after = {
        rm: [],
        mv: ['/keep/docs', '/keep/docs/a.txt', '/keep/docs/b.bin'],
        rename: ['/papers', '/papers/a.txt', '/papers/b.bin'],
      }[operation];
      const atBefore = moved.every((path) => paths.has(path));
      const atAfter = after.every((path) => paths.has(path)) && moved.every((path) => !paths.has(path));
      if (done)
        expect({ atBefore, atAfter }, 'once reported done').toEqual({ atBefore: false, atAfter: true });
      else expect(atBefore !== atAfter, `all or nothing: before ${atBefore}, after ${atAfter}`).toBe(true);
      expect(paths.has('/keep/c.txt')).toBe(true);
    } else if (operation === 'mkdir') {
      const made = ['/docs/new', '/docs/new/deeper'];
      if (done)
        expect(
          made.filter((path) => paths.has(path)),
          'once reported done',
        ).toEqual(made);
      else expect([0, 2], 'all or nothing').toContain(made.filter((path) => paths.has(path)).length);
      expect([...paths].filter((path) => !made.includes(path)).sort()).toEqual(vaultPaths(seed));
    } else {
      expect([...paths].sort()).toEqual(vaultPaths(seed));
      await expectBytes(vault, paths, '/', seed);
      const { keyIds } = await vault.info();
      if (operation === 'reencrypt' && done) expect(keyIds, 'keys once reported done').toHaveLength(1);
      // A rotation adds a key: there before the CLI says it is done, or after.
      if (operation === 'rotate') expect(done ? [2] : [1, 2], 'keys').toContain(keyIds?.length);
    }
  } finally {
    vault.close();
  }
  // A recovery key shown to the user must open the vault from then on.
  const [recoveryKey] = said.split('\n');
  if (operation === 'recovery-key' && recoveryKey !== undefined && recoveryKey !== '') {
    const again = await Vault.open(dir, { sodium: nativeSodium });
    try {
      await again.unlockWithRecoveryKey(recoveryKey);
    } finally {
      again.close();
    }
  }
  if (operation === 'recovery-key' && done) expect(recoveryKey, 'the recovery key shown').not.toBe('');
  // The unlocks above wrote the backup again where the cut had left it behind the header.
  expect(readFileSync(join(dir, 'coffer.header.bak'))).toEqual(readFileSync(join(dir, 'coffer.header')));
}

/** The cut moments whose check failed: the first with all it found, the others with their first words. */
function failureReport(failures: readonly { moment: string; error: unknown }[]): string {
  const words = (error: unknown): string => (error instanceof Error ? error.message : String(error));
  const [first, ...others] = failures;
  if (first === undefined) return '';
  // What the failed check found (an assertion's actual value), in full.
  const found = (first.error as { actual?: unknown }).actual;
  return [
    `${first.moment}: ${words(first.error)} ${found === undefined ? '' : JSON.stringify(found)}`,
    ...others.map(({ moment, error }) => `${moment}: ${words(error).split('\n')[0] ?? ''}`),
  ].join('\n');
}

/**
 * Rebuilds the folder after each recorded moment (and after none), both ways, and runs `check` on each rebuild:
 * `done` after the last moment, `said` what the CLI had written to its standard output by then, `vaultChanged`
 * false when the vault folder (`vault` in it) was rebuilt from the same files as the cut before rebuilt the same
 * way (whose check passed or was reported), `kept` which way, and `next` the moment after. Fails with every cut
 * whose check failed.
 */
async function expectEveryCut(
  {
    root,
    start,
    events,
    vault,
  }: { root: string; start: Before; events: readonly PowerCutEvent[]; vault: string },
  check: (
    cut: string,
    at: { done: boolean; said: string; vaultChanged: boolean; kept: KeptNames },
    next: PowerCutEvent | undefined,
  ) => Promise<void>,
): Promise<void> {
  const failures: { moment: string; error: unknown }[] = [];
  const checked = new Map<KeptNames, string>();
  for (let count = 0; count <= events.length; count++) {
    const done = count === events.length;
    const said = events
      .slice(0, count)
      .map((event) => (event.kind === 'said' ? (event.text ?? '') : ''))
      .join('');
    for (const kept of KEPT) {
      const cut = join(root, 'cut');
      const vaultState = afterCut(start, events, { count, kept, vault }, cut);
      const moment = `cut after event ${count} of ${events.length} (${events[count - 1]?.kind ?? 'none'}), ${kept}`;
      const vaultChanged = done || checked.get(kept) !== vaultState;
      await check(cut, { done, said, vaultChanged, kept }, events[count]).catch((error: unknown) => {
        failures.push({ moment, error });
      });
      checked.set(kept, vaultState);
      rmSync(cut, { recursive: true });
    }
  }
  expect(failures.length, failureReport(failures)).toBe(0);
}

describe.runIf(RUNS_HERE)('power-cut safety (unsynced writes dropped)', () => {
  it.each(OPERATIONS)(
    '%s: a cut at any moment keeps the vault whole and the operation all or nothing',
    async (operation) => {
      const root = tempDir(TMPFS);
      const added = sourceFiles();
      await writeTree(join(root, 'src'), added);
      const seed = seedFiles(operation);
      await writeTree(join(root, 'seed'), seed);
      // What the cut can touch: the vault and the restore's destination.
      const disk = join(root, 'disk');
      mkdirSync(disk);
      const dir = join(disk, 'vault');
      const vault = await Vault.create(dir, passphrase(), { kdf: 'interactive', sodium: nativeSodium });
      await vault.add([join(root, 'seed', 'docs'), join(root, 'seed', 'keep')]);
      if (operation === 'reencrypt') await vault.rotateKey();
      if (operation === 'keys remove')
        await vault.addPassphrase(passphrase(NEW_PASSPHRASE), { kdf: 'interactive' });
      vault.close();
      const start = before(disk, join(root, 'before'));
      const args: Record<Operation, string[]> = {
        add: [
          'add',
          dir,
          join(root, 'src', 'small'),
          join(root, 'src', 'large'),
          '--to',
          '/incoming',
          '--verbose',
        ],
        rm: ['rm', dir, '/docs'],
        mv: ['mv', dir, '/docs', '/keep'],
        rename: ['mv', dir, '/docs', 'papers', '--rename'],
        mkdir: ['mkdir', dir, '/docs/new/deeper'],
        passwd: ['passwd', dir],
        'keys add': ['keys', dir, 'add', '--kdf', 'interactive'],
        'keys remove': ['keys', dir, 'remove', '1'],
        'recovery-key': ['recovery-key', dir],
        rotate: ['rotate', dir],
        reencrypt: ['rotate', dir, '--reencrypt'],
        restore: ['restore', dir, '/docs', '/keep', '--to', join(disk, 'restored', 'out'), '--verbose'],
      };
      const { events } = await recordRun(
        args[operation],
        compiledHook(root),
        { disk, vaultDir: dir },
        join(root, 'log'),
        {
          COFFER_NEW_PASSPHRASE: NEW_PASSPHRASE,
        },
      );
      const kinds = new Set(events.map((event) => event.kind));
      for (const kind of ['file', 'folder', 'exit'] as const)
        expect(kinds, 'moments recorded').toContain(kind);
      if (operation === 'add' || operation === 'restore') {
        expect(
          events.some((event) => event.kind === 'file' && event.thread !== 0),
          'files fsynced on worker threads',
        ).toBe(true);
      }
      // What the CLI had said at the last rebuild checked, per way of rebuilding.
      const checkedSaid = new Map<KeptNames, string>();
      await expectEveryCut(
        { root, start, events, vault: 'vault' },
        async (cut, { done, said, vaultChanged, kept }, next) => {
          // Looked at again once the CLI said it did more (after the last of a run of lines): an add's files, a key.
          if (
            vaultChanged ||
            (SAYS_DONE.includes(operation) && said !== checkedSaid.get(kept) && next?.kind !== 'said')
          ) {
            checkedSaid.set(kept, said);
            await checkVault(join(cut, 'vault'), operation, { seed, added }, { done, said });
          }
          if (operation === 'restore')
            expectRestored(join(cut, 'restored', 'out'), seed, done, reported(said, 'restored'));
        },
      );
    },
    300_000,
  );

  it('verify --repair: a cut at any moment keeps the vault whole, and each file it brings back whole or not there', async () => {
    const root = tempDir(TMPFS);
    const disk = join(root, 'disk');
    mkdirSync(disk);
    const dir = join(disk, 'vault');
    const seed = { 'docs/a.txt': Buffer.from('a'), 'docs/b.bin': randomBytes(1_200_000) };
    await writeTree(join(root, 'seed'), seed);
    const vault = await Vault.create(dir, passphrase(), { kdf: 'interactive', sodium: nativeSodium });
    await vault.add([join(root, 'seed', 'docs')]);
    vault.close();
    // A copy of the vault gets more files; its new pack and blob file, not its index, are then left in the vault
    // and never fsynced there (what a sync service delivering data before the index leaves).
    const other = join(root, 'other');
    cpSync(dir, other, { recursive: true });
    const delivered = {
      'one.txt': randomBytes(500),
      'two.txt': randomBytes(7000),
      'large.bin': randomBytes(1_100_000),
    };
    await writeTree(join(root, 'delivered'), delivered);
    const copy = await Vault.open(other, { sodium: nativeSodium });
    await copy.unlock(passphrase());
    await copy.add([join(root, 'delivered')]);
    copy.close();
    const inVault = (folder: string): string[] =>
      readdirSync(folder, { recursive: true }).map((path) => String(path));
    const there = new Set(inVault(dir));
    const unsynced = new Set<string>();
    for (const path of inVault(other).sort()) {
      if (there.has(path) || !/^(packs|blobs)\//u.test(path)) continue;
      cpSync(join(other, path), join(dir, path), { recursive: true });
      unsynced.add(join('vault', path));
    }
    expect(
      [...unsynced].filter((path) => statSync(join(disk, path)).isFile()),
      'a pack and a blob file delivered',
    ).toHaveLength(2);
    const start = before(disk, join(root, 'before'), unsynced);
    const { events } = await recordRun(
      ['verify', dir, '--repair'],
      compiledHook(root),
      { disk, vaultDir: dir },
      join(root, 'log'),
    );
    await expectEveryCut({ root, start, events, vault: 'vault' }, async (cut, { done, vaultChanged }) => {
      if (!vaultChanged) return;
      const after = await Vault.open(join(cut, 'vault'), { sodium: nativeSodium });
      try {
        await after.unlock(passphrase());
        const report = await after.verify({ readData: true });
        expect(report.problems, 'problems found by verify').toEqual([]);
        const paths = after.listRecursive('/').map((entry) => entry.path);
        const recovered = paths.filter((path) => path.startsWith('/lost+found/'));
        expect(paths.filter((path) => !recovered.includes(path) && path !== '/lost+found')).toEqual(
          vaultPaths(seed),
        );
        for (const path of recovered) {
          const bytes = await collect(after.read(path));
          expect(
            Object.values(delivered).some((one) => one.equals(bytes)),
            `${path}: its bytes`,
          ).toBe(true);
        }
        if (done) {
          expect(recovered, 'files brought back once done').toHaveLength(Object.keys(delivered).length);
          expect(report.unreferenced, 'unreferenced files once done').toEqual([]);
        }
      } finally {
        after.close();
      }
    });
  }, 300_000);

  it('init: a cut at any moment leaves no vault or one that opens, and the vault once reported made', async () => {
    const root = tempDir(TMPFS);
    const disk = join(root, 'disk');
    mkdirSync(disk);
    // In folders the run makes, whose names must survive too.
    const dir = join(disk, 'made', 'vault');
    const start = before(disk, join(root, 'before'));
    const { events } = await recordRun(
      ['init', dir, '--kdf', 'interactive'],
      compiledHook(root),
      { disk, vaultDir: dir },
      join(root, 'log'),
    );
    await expectEveryCut({ root, start, events, vault: 'made/vault' }, async (cut, { done }) => {
      const made = join(cut, 'made', 'vault');
      if (!done && !existsSync(join(made, 'coffer.header'))) return; // no vault: a folder without a header is none
      const vault = await Vault.open(made, { sodium: nativeSodium });
      try {
        expect(await vault.unlock(passphrase()), 'notices at unlock').toEqual([]);
        expect(vault.listRecursive('/')).toEqual([]);
      } finally {
        vault.close();
      }
    });
  }, 300_000);
});
