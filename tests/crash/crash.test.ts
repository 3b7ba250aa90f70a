/**
 * Kill -9 the CLI during add, delete, rename, move and a passphrase change, then check that the vault opens, passes
 * `verify --read-data`, and holds every operation the CLI had reported as done; after a killed passphrase change,
 * that it opens with exactly one of the old and new passphrases. COFFER_CRASH_TRIALS sets the number of trials
 * (default 75: 15 per operation, the first of each a calibration run that is not killed).
 *
 * The kills are aimed at each operation's write phase. A kill drawn over the whole process life lands in start-up
 * and unlock almost every time (they are ~165 ms of a 170 ms `rm`), which proves nothing. So the CLI runs with the
 * test hook of src/core/test-hooks.ts on: it announces on stderr each index transaction ready to commit and each
 * commit, and pauses a little after each announcement. The calibration run counts an operation's write events; a
 * later run is killed during the pause after a randomly drawn one of them (any but the last commit), i.e. inside
 * one of its transactions or between two of them. A kill "landed mid-write" when the process died after its first
 * write event and before the operation's last commit; too few of those fails the test (a kill that comes too late
 * on a busy machine lands after the last commit, and is not counted). A deliberately broken `rm` (one
 * transaction per entry) fails it; the old, unaimed kills passed it.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { Vault } from '../../src/core/index.js';
import { requireBuiltCli } from '../cli/helpers.js';
import { nativeSodium } from '../helpers/backends.js';
import { runAndKill } from '../helpers/crash.js';
import { collect, leftBehind, passphrase, PASSPHRASE, tempDir, track, writeTree } from '../helpers/vault.js';

requireBuiltCli();

const TRIALS = Number(process.env.COFFER_CRASH_TRIALS ?? 60);
const NEW_PASSPHRASE = 'a new passphrase after the crash test';
/**
 * The hook's pause after each write event (inside a transaction before its commit, and after the commit): a kill
 * is sent within its first half, leaving the other half for the delay between the child's announcement and the
 * kill on a busy machine.
 */
const PAUSE_MS = 24;
/** At least this share of each operation's runs after calibration must have been killed mid-write. */
const MID_WRITE_SHARE = 1 / 2;

type Operation = 'add' | 'rm' | 'mv' | 'rename' | 'passwd';
const OPERATIONS: Operation[] = ['add', 'rm', 'mv', 'rename', 'passwd'];

/** Random files: many small (packed, batched) and a few large (blob files), so kills land in both paths. */
function sourceFiles(): Record<string, Buffer> {
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < 300; i++) files[`small/s${i}.bin`] = randomBytes(randomInt(0, 3000));
  for (let i = 0; i < 6; i++) files[`large/l${i}.bin`] = randomBytes(randomInt(70_000, 3_000_000));
  return files;
}

/** tmpfs when there is one: a SIGKILL loses nothing the kernel already has, and tmpfs keeps trials fast. */
const BASE = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

async function seededVault(): Promise<string> {
  const root = tempDir(BASE);
  const dir = join(root, 'vault');
  const vault = await Vault.create(dir, passphrase(), { kdf: 'interactive', sodium: nativeSodium });
  await writeTree(join(root, 'seed'), {
    'docs/a.txt': 'a',
    'docs/b.bin': randomBytes(100_000),
    'keep/c.txt': 'c',
  });
  await vault.add([join(root, 'seed', 'docs'), join(root, 'seed', 'keep')]);
  vault.close();
  return dir;
}

describe('crash safety (SIGKILL during operations)', () => {
  it(`keeps every acknowledged operation and stays verifiable across ${TRIALS} kills aimed at writes`, async () => {
    expect(
      TRIALS,
      'each operation needs a calibration run and at least one killed run',
    ).toBeGreaterThanOrEqual(2 * OPERATIONS.length);
    const source = join(tempDir(BASE), 'src');
    const files = sourceFiles();
    await writeTree(source, files);
    const calibration = new Map<Operation, { events: number; commits: number }>();
    const tally = new Map<Operation, { runs: number; killed: number; midWrite: number }>(
      OPERATIONS.map((operation) => [operation, { runs: 0, killed: 0, midWrite: 0 }]),
    );
    for (let trial = 0; trial < TRIALS; trial++) {
      const operation = OPERATIONS[trial % OPERATIONS.length] ?? 'add';
      const dir = await seededVault();
      const args: Record<Operation, string[]> = {
        add: ['add', dir, join(source, 'small'), join(source, 'large'), '--to', '/incoming', '--verbose'],
        rm: ['rm', dir, '/docs'],
        mv: ['mv', dir, '/docs', '/keep'],
        rename: ['mv', dir, '/docs', 'papers', '--rename'],
        passwd: ['passwd', dir],
      };
      const calibrated = calibration.get(operation);
      // Any write event but the last commit: inside a transaction, or between two of the operation's.
      const run = await runAndKill(
        args[operation],
        calibrated === undefined
          ? undefined
          : { event: randomInt(1, calibrated.events), delayMs: randomInt(0, PAUSE_MS / 2) },
        PAUSE_MS,
        { COFFER_NEW_PASSPHRASE: NEW_PASSPHRASE },
      );
      if (calibrated === undefined) {
        expect(run.completed, `calibration run of ${operation}`).toBe(true);
        expect(run.commits, `calibration run of ${operation}: transactions announced`).toBeGreaterThan(0);
        calibration.set(operation, { events: run.pending + run.commits, commits: run.commits });
      } else {
        const counts = tally.get(operation) ?? { runs: 0, killed: 0, midWrite: 0 };
        counts.runs++;
        if (run.killed) counts.killed++;
        // Killed once the writes had begun and before the operation's last commit.
        if (run.killed && run.pending > 0 && run.commits < calibrated.commits) counts.midWrite++;
      }

      // Opening recovers: it removes what the killed operation wrote under an intent and never committed, and
      // nothing else, so no pack, blob file, temp file or intent is left behind.
      (await Vault.open(dir, { sodium: nativeSodium })).close();
      expect(leftBehind(dir), `trial ${trial} (${operation})`).toEqual({ files: [], intents: 0 });
      // Exactly one of the two passphrases opens: the new one only once passwd changed the header (and always
      // once it reported done), the old one only before.
      const opens = new Map<string, string>();
      for (const candidate of [PASSPHRASE, NEW_PASSPHRASE]) {
        const attempt = await Vault.open(dir, { sodium: nativeSodium });
        opens.set(
          candidate,
          await attempt.unlock(passphrase(candidate)).then(
            () => 'ok',
            (error: unknown) => (error as { code?: string }).code ?? String(error),
          ),
        );
        attempt.close();
      }
      const changed = opens.get(NEW_PASSPHRASE) === 'ok';
      expect(
        [...opens.values()].sort(),
        `trial ${trial} (${operation}): ${JSON.stringify([...opens])}`,
      ).toEqual(['WRONG_PASSPHRASE', 'ok']);
      if (operation !== 'passwd') expect(changed, `trial ${trial} (${operation})`).toBe(false);
      else if (run.completed) expect(changed, `trial ${trial}: passwd acknowledged`).toBe(true);
      const vault = track(await Vault.open(dir, { sodium: nativeSodium }));
      expect(
        await vault.unlock(passphrase(changed ? NEW_PASSPHRASE : PASSPHRASE)),
        `trial ${trial} (${operation})`,
      ).toEqual([]);
      const report = await vault.verify({ readData: true });
      expect(report.problems, `trial ${trial} (${operation})`).toEqual([]);
      expect(report.unreferenced, `trial ${trial} (${operation})`).toEqual([]);
      const paths = new Set(vault.listRecursive('/').map((entry) => entry.path));

      if (operation === 'add') {
        const acknowledged = run.stdout
          .split('\n')
          .filter((line) => line.startsWith('added '))
          .map((line) => line.slice('added '.length));
        for (const path of acknowledged)
          expect(paths.has(path), `trial ${trial}: ${path} acknowledged`).toBe(true);
        for (const path of paths) {
          if (!path.startsWith('/incoming/') || vault.stat(path).type !== 'file') continue;
          const relative = path.slice('/incoming/'.length);
          expect((await collect(vault.read(path))).equals(files[relative] ?? Buffer.alloc(1)), path).toBe(
            true,
          );
        }
        // seed entries (5), /incoming and its two folders (3), and every file.
        if (run.completed) expect(paths.size).toBe(5 + 3 + Object.keys(files).length);
      } else if (operation === 'passwd') {
        // Not a byte of the contents changes: the seed's five entries, as they were.
        expect([...paths].sort()).toEqual(['/docs', '/docs/a.txt', '/docs/b.bin', '/keep', '/keep/c.txt']);
      } else {
        const before = ['/docs', '/docs/a.txt', '/docs/b.bin'];
        const after: Record<Exclude<Operation, 'add' | 'passwd'>, string[]> = {
          rm: [],
          mv: ['/keep/docs', '/keep/docs/a.txt', '/keep/docs/b.bin'],
          rename: ['/papers', '/papers/a.txt', '/papers/b.bin'],
        };
        const atBefore = before.every((p) => paths.has(p));
        const atAfter = after[operation].every((p) => paths.has(p)) && before.every((p) => !paths.has(p));
        // All or nothing: each of these is one transaction.
        expect(
          atBefore !== atAfter,
          `trial ${trial} (${operation}): before=${atBefore} after=${atAfter}`,
        ).toBe(true);
        if (run.completed) expect(atAfter, `trial ${trial}: ${operation} acknowledged`).toBe(true);
        expect(paths.has('/keep/c.txt')).toBe(true);
      }
      vault.close();
      expect(readFileSync(join(dir, 'coffer.header')).length).toBe(272);
      // The unlocks above wrote the backup again where a kill had left it behind the header.
      expect(readFileSync(join(dir, 'coffer.header.bak'))).toEqual(readFileSync(join(dir, 'coffer.header')));
    }
    const summary = OPERATIONS.map((operation) => {
      const counts = tally.get(operation);
      return (
        `${operation}: ${counts?.midWrite ?? 0} of ${counts?.runs ?? 0} runs killed mid-write ` +
        `(${counts?.killed ?? 0} killed in all)`
      );
    }).join(', ');
    console.info(`crash test: ${TRIALS} trials (${summary}); every invariant held`);
    // Kills that never land inside an operation's writes would prove nothing.
    for (const operation of OPERATIONS) {
      const counts = tally.get(operation) ?? { runs: 0, killed: 0, midWrite: 0 };
      expect(counts.midWrite, `${operation}: ${summary}`).toBeGreaterThanOrEqual(
        Math.max(1, Math.ceil(counts.runs * MID_WRITE_SHARE)),
      );
    }
  }, 600_000);
});
