/**
 * A simulated power cut at every moment of add, delete, move, rename, a passphrase change, a re-encryption and a
 * restore: the vault folder (and the restore's destination) is rebuilt as a cut could leave it
 * (tests/helpers/power-cut.ts: only what was fsynced survives; SQLite's files as they were), then the vault must
 * open, unlock with exactly one of the old and new passphrases, pass `verify --read-data` with nothing
 * unreferenced, and hold each operation whole or not at all; after the last moment (the CLI has said it is done),
 * the operation must be there. A restored file is never there with other bytes than its own. A SIGKILL (crash.test.ts) loses nothing the
 * kernel has; a power cut loses whatever was not fsynced, so the order of fsyncs, renames and commits is what is
 * tested here.
 *
 * Each cut is rebuilt twice: with the names each folder had when it was last fsynced, and with the names as they
 * were at the cut (a file system that wrote its metadata early, keeping a rename or an unlink but not the bytes
 * behind it).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

import { describe, expect, it } from 'vitest';

import { Vault } from '../../src/core/index.js';
import { requireBuiltCli } from '../cli/helpers.js';
import { nativeSodium } from '../helpers/backends.js';
import { afterCut, before, compiledHook, recordRun, type KeptNames } from '../helpers/power-cut.js';
import { collect, passphrase, PASSPHRASE, tempDir, writeTree } from '../helpers/vault.js';

requireBuiltCli();

const NEW_PASSPHRASE = 'a new passphrase after the power cut';
const BASE = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
const KEPT: readonly KeptNames[] = ['synced names', 'names at the cut'];

type Operation = 'add' | 'rm' | 'mv' | 'rename' | 'passwd' | 'reencrypt' | 'restore';
const OPERATIONS: Operation[] = ['add', 'rm', 'mv', 'rename', 'passwd', 'reencrypt', 'restore'];

/** What the vault holds before each operation: small files (packed) and a large one (a blob file of its own). */
function seedFiles(): Record<string, Buffer> {
  return {
    'docs/a.txt': Buffer.from('a'),
    'docs/b.bin': randomBytes(100_000),
    'keep/c.txt': Buffer.from('c'),
    'keep/d.bin': randomBytes(1_200_000),
  };
}
const SEED_PATHS = ['/docs', '/docs/a.txt', '/docs/b.bin', '/keep', '/keep/c.txt', '/keep/d.bin'];

/** Files to add: small ones (packed) and large ones (blob files, written by worker threads). */
function sourceFiles(): Record<string, Buffer> {
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < 40; i++) files[`small/s${i}.bin`] = randomBytes(randomInt(0, 3000));
  for (let i = 0; i < 3; i++) files[`large/l${i}.bin`] = randomBytes(randomInt(1_100_000, 2_500_000));
  return files;
}

/** The passphrase that opens `dir` (exactly one of the two must). */
async function openingPassphrase(dir: string): Promise<string> {
  const opening: string[] = [];
  for (const candidate of [PASSPHRASE, NEW_PASSPHRASE]) {
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
  expect(opening, 'exactly one passphrase opens the vault').toHaveLength(1);
  return opening[0] ?? PASSPHRASE;
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

/** The restored files found below `dir` (temp files aside): each must hold its own bytes. */
function expectRestored(dir: string, seed: Record<string, Buffer>, done: boolean): void {
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
  if (done) expect(found.sort(), 'restored files once reported done').toEqual(Object.keys(seed).sort());
}

/**
 * Checks the folders rebuilt after a cut (`vault`, and `restored` for a restore): the vault opens and verifies,
 * and holds `operation` whole or not at all (whole once `done`).
 */
async function checkAfterCut(
  cut: string,
  operation: Operation,
  seed: Record<string, Buffer>,
  added: Record<string, Buffer>,
  done: boolean,
): Promise<void> {
  const dir = join(cut, 'vault');
  const opening = await openingPassphrase(dir);
  if (operation !== 'passwd') expect(opening, 'the passphrase is unchanged').toBe(PASSPHRASE);
  else if (done) expect(opening, 'the passphrase change, once reported done').toBe(NEW_PASSPHRASE);
  const vault = await Vault.open(dir, { sodium: nativeSodium });
  try {
    expect(await vault.unlock(passphrase(opening)), 'notices at unlock').toEqual([]);
    const report = await vault.verify({ readData: true });
    expect(report.problems, 'problems found by verify').toEqual([]);
    expect(report.unreferenced, 'unreferenced files').toEqual([]);
    const paths = new Set(vault.listRecursive('/').map((entry) => entry.path));
    if (operation === 'add') {
      for (const path of SEED_PATHS) expect(paths.has(path), path).toBe(true);
      await expectBytes(vault, paths, '/incoming/', added);
      // The seed, /incoming and its two folders, and every file.
      if (done)
        expect(paths.size, 'entries once reported done').toBe(
          SEED_PATHS.length + 3 + Object.keys(added).length,
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
    } else {
      expect([...paths].sort()).toEqual(SEED_PATHS);
      await expectBytes(vault, paths, '/', seed);
      if (operation === 'reencrypt' && done)
        expect((await vault.info()).keyIds, 'keys once reported done').toHaveLength(1);
    }
  } finally {
    vault.close();
  }
  if (operation === 'restore') expectRestored(join(cut, 'restored', 'out'), seed, done);
  // The unlocks above wrote the backup again where the cut had left it behind the header.
  expect(readFileSync(join(dir, 'coffer.header.bak'))).toEqual(readFileSync(join(dir, 'coffer.header')));
}

describe('power-cut safety (unsynced writes dropped)', () => {
  it.each(OPERATIONS)(
    '%s: a cut at any moment keeps the vault whole and the operation all or nothing',
    async (operation) => {
      const root = tempDir(BASE);
      const added = sourceFiles();
      await writeTree(join(root, 'src'), added);
      const seed = seedFiles();
      await writeTree(join(root, 'seed'), seed);
      // What the cut can touch: the vault and the restore's destination.
      const disk = join(root, 'disk');
      mkdirSync(disk);
      const dir = join(disk, 'vault');
      const vault = await Vault.create(dir, passphrase(), { kdf: 'interactive', sodium: nativeSodium });
      await vault.add([join(root, 'seed', 'docs'), join(root, 'seed', 'keep')]);
      if (operation === 'reencrypt') await vault.rotateKey();
      vault.close();
      const start = before(disk, join(root, 'before'));
      const args: Record<Operation, string[]> = {
        add: ['add', dir, join(root, 'src', 'small'), join(root, 'src', 'large'), '--to', '/incoming'],
        rm: ['rm', dir, '/docs'],
        mv: ['mv', dir, '/docs', '/keep'],
        rename: ['mv', dir, '/docs', 'papers', '--rename'],
        passwd: ['passwd', dir],
        reencrypt: ['rotate', dir, '--reencrypt'],
        restore: ['restore', dir, '/docs', '/keep', '--to', join(disk, 'restored', 'out')],
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
      expect(events.length, 'moments recorded').toBeGreaterThan(0);
      const failures: string[] = [];
      for (let count = 0; count <= events.length; count++) {
        for (const kept of KEPT) {
          const cut = join(root, `cut-${count}-${kept.replaceAll(' ', '-')}`);
          afterCut(start, events, { count, kept, vault: 'vault' }, cut);
          const moment = `cut after event ${count} of ${events.length} (${events[count - 1]?.kind ?? 'none'}), ${kept}`;
          await checkAfterCut(cut, operation, seed, added, count === events.length).catch(
            (error: unknown) => {
              failures.push(
                `${moment}: ${error instanceof Error ? error.message : String(error)} ${JSON.stringify((error as { actual?: unknown }).actual)}`,
              );
            },
          );
        }
      }
      expect(failures).toEqual([]);
    },
    300_000,
  );
});
