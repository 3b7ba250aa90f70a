/**
 * `npm run bench:format`: what format 1.1 costs against format 1.0 (record versions, the index commitment and the
 * padding of FORMAT.md 5.7, 7 and 8.7) on 100,000 small files. Each operation runs in this checkout and in a
 * checkout of the baseline commit (default 142fae3, the last commit of format 1.0), alternately, the first of each
 * pair alternating too; one process per run (`scripts/bench-paired.ts`), CPU time (user + sys, every thread)
 * compared pair by pair, as a shared machine's load moves wall times more than the budget (5 %).
 *
 * Flags: --baseline COMMIT  --pairs N (add and restore; each unlock gets twice as many)  --dir PATH (data, default
 * /dev/shm). The baseline is checked out with `git worktree` beside this one's node_modules (its lockfile must be
 * the same) and removed at the end, with the vaults; the source files stay in bench-paired.ts's folder.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median } from './bench-stats.js';

const { values: flags } = parseArgs({
  options: {
    baseline: { type: 'string', default: '142fae3' },
    pairs: { type: 'string', default: '3' },
    dir: { type: 'string' },
  },
});
const PAIRS = Number(flags.pairs);
const HERE = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PAIRED = join(HERE, 'scripts', 'bench-paired.ts');
const DATA = mkdtempSync(
  join(flags.dir ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir()), 'coffer-format-'),
);

interface Run {
  cpu: number;
  wall: number;
  load: string;
}

function git(...args: string[]): string {
  const result = spawnSync('git', args, { cwd: HERE, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr.trim()}`);
  return result.stdout.trim();
}

/** Runs one bench-paired.ts phase in a process of its own; returns what it printed. */
function paired(checkout: string, phase: string, vault?: string): string {
  const result = spawnSync('npx', ['tsx', PAIRED, checkout, phase, ...(vault ? [vault] : [])], {
    cwd: HERE,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`${phase} in ${checkout} failed:\n${result.stderr}`);
  return result.stdout;
}

/** One measurement, as bench-paired.ts prints it. */
function measure(checkout: string, phase: string, vault: string): Run {
  return JSON.parse(paired(checkout, phase, vault).trim().split('\n').pop() ?? '') as Run;
}

interface Operation {
  label: string;
  /** bench-paired.ts phase in the baseline and here (adds without padding have no baseline of their own). */
  phases: [string, string];
  vaults: [string, string];
  pairs: number;
}

const baselineCommit = git('rev-parse', flags.baseline);
if (git('diff', '--name-only', baselineCommit, 'HEAD', '--', 'package-lock.json') !== '') {
  throw new Error(`${flags.baseline} has other dependencies than this checkout: compare by hand (README).`);
}
const baseline = join(DATA, 'baseline');
git('worktree', 'add', '--detach', baseline, baselineCommit);
symlinkSync(join(HERE, 'node_modules'), join(baseline, 'node_modules'));

const vault = (name: string): string => join(DATA, name);
const operations: Operation[] = [
  { label: 'add', phases: ['add', 'add'], vaults: [vault('old'), vault('new')], pairs: PAIRS },
  {
    label: 'add, vault made without padding',
    phases: ['add', 'add-unpadded'],
    vaults: [vault('old-2'), vault('new-unpadded')],
    pairs: PAIRS,
  },
  { label: 'restore', phases: ['restore', 'restore'], vaults: [vault('old'), vault('new')], pairs: PAIRS },
  {
    label: 'unlock, snapshot current (KDF too)',
    phases: ['unlock', 'unlock'],
    vaults: [vault('old'), vault('new')],
    pairs: 2 * PAIRS,
  },
  {
    label: 'unlock without a current snapshot',
    phases: ['unlock-rows', 'unlock-rows'],
    vaults: [vault('old'), vault('new')],
    pairs: 2 * PAIRS,
  },
];

try {
  console.error(`bench:format: ${baselineCommit.slice(0, 7)} against ${git('rev-parse', '--short', 'HEAD')}`);
  paired(HERE, 'source');
  const rows: string[] = [];
  for (const { label, phases, vaults, pairs } of operations) {
    const old: Run[] = [];
    const now: Run[] = [];
    for (let pair = 0; pair < pairs; pair++) {
      const runOld = (): number => old.push(measure(baseline, phases[0], vaults[0]));
      const runNew = (): number => now.push(measure(HERE, phases[1], vaults[1]));
      if (pair % 2 === 0) {
        runOld();
        runNew();
      } else {
        runNew();
        runOld();
      }
      console.error(`  ${label}: pair ${pair + 1} of ${pairs}`);
    }
    const ratios = now.map((run, i) => run.cpu / (old[i]?.cpu ?? Number.NaN));
    const loads = [...old, ...now].map((run) => Number(run.load));
    rows.push(
      `| ${label} | ${median(old.map((r) => r.cpu)).toFixed(2)} | ${median(now.map((r) => r.cpu)).toFixed(2)} | ` +
        `${median(ratios).toFixed(2)} (${ratios.map((r) => r.toFixed(2)).join(', ')}) | ` +
        `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} |`,
    );
  }
  console.log(`Coffer bench:format — ${new Date().toISOString().slice(0, 10)}, 100,000 files of 5–10 bytes`);
  console.log(
    '| operation | format 1.0 CPU s | this CPU s | this / 1.0 (median of pairs; each pair) | load |',
  );
  console.log('|---|---|---|---|---|');
  for (const row of rows) console.log(row);
} finally {
  git('worktree', 'remove', '--force', baseline);
  rmSync(DATA, { recursive: true, force: true });
}
