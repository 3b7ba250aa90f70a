/**
 * `npm run bench:format`: what format 1.1 costs against format 1.0 (record versions, the index commitment and the
 * padding of FORMAT.md 5.7, 7 and 8.7) on 100,000 small files. Each operation runs in this checkout and in a
 * checkout of the baseline commit (default 142fae3, the last commit of format 1.0), alternately, the first of each
 * pair alternating too; one process per run (`scripts/bench-paired.ts`), CPU time (user + sys, every thread)
 * compared pair by pair, as a shared machine's load moves wall times more than the budget (5 %).
 *
 * Beside the plain comparisons, four rows separate the format's cost from other changes: adds by this commit with
 * records padded to 32-byte blocks as format 1.0 pads them (a third worktree with `RECORD_BUCKET` set to 32),
 * which leaves out the record padding's own bytes (the budget's exception), with content padding and without (no
 * padding at all); restores of a vault made without content padding, which leave out the content padding's; and
 * unlocks by this code of both vaults, the format 1.0 one opened read-only so that it is read as it is, which
 * leaves out what changed in the code.
 *
 * Flags: --baseline COMMIT --pairs N (adds and restore; each unlock gets twice as many) --dir PATH (data, default
 * /dev/shm) --only KEY,... (some operations: add, add-unpadded, add-records, add-bare, restore, restore-unpadded,
 * unlock, unlock-tree, unlock-format, unlock-rows; the vaults they read are still made, by one add each). The
 * worktrees use this one's node_modules (the baseline's lockfile must be the same) and are removed at the end,
 * with the vaults; the source files stay in bench-paired.ts's folder.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
    only: { type: 'string' },
  },
});
const PAIRS = Number(flags.pairs);
if (!Number.isInteger(PAIRS) || PAIRS < 1) throw new Error('--pairs takes a whole number of at least 1');
const HERE = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PAIRED = join(HERE, 'scripts', 'bench-paired.ts');
const DATA = mkdtempSync(
  join(flags.dir ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir()), 'coffer-format-'),
);
// The data and the worktrees (made inside it) go when the run ends, done or thrown, and at Ctrl-C; but tsx ends this
// process soon after a Ctrl-C, which can cut the removal short (then: rm -r the coffer-format-* folder, and
// `git worktree prune`). The folder first, as it is most of the work; prune then forgets the worktrees in it.
process.once('exit', () => {
  rmSync(DATA, { recursive: true, force: true, maxRetries: 3 });
  spawnSync('git', ['worktree', 'prune'], { cwd: HERE });
});
process.on('SIGINT', () => process.exit(130));

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
  // Node itself rather than npx, whose exit on Ctrl-C does not wait for the run it started (which would write into
  // the data as it is removed).
  const args = ['--import', 'tsx', PAIRED, checkout, phase, ...(vault ? [vault] : [])];
  const result = spawnSync(process.execPath, args, {
    cwd: HERE,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`${phase} in ${checkout} failed:\n${result.stderr}`);
  return result.stdout;
}

/** One measurement, as bench-paired.ts prints it. */
function measure({ checkout, phase, vault }: Side): Run {
  return JSON.parse(paired(checkout, phase, vault).trim().split('\n').pop() ?? '') as Run;
}

interface Operation {
  /** What `--only` names it by. */
  key: string;
  label: string;
  /** The two sides: a checkout, its bench-paired.ts phase and its vault. */
  sides: [Side, Side];
  pairs: number;
}

interface Side {
  checkout: string;
  phase: string;
  vault: string;
}

/**
 * The locked packages a run of either side loads: every one not marked dev-only, and tsx, which runs the bench.
 * The baseline borrows this checkout's node_modules, so these must match; test-only packages added since may not.
 */
function runtimePackages(commit: string): string {
  const lock = JSON.parse(git('show', `${commit}:package-lock.json`)) as {
    packages: Record<string, { dev?: boolean }>;
  };
  return JSON.stringify(
    Object.entries(lock.packages).filter(
      ([path, entry]) => path !== '' && (entry.dev !== true || path === 'node_modules/tsx'),
    ),
  );
}

const baselineCommit = git('rev-parse', flags.baseline);
if (runtimePackages(baselineCommit) !== runtimePackages('HEAD')) {
  throw new Error(`${flags.baseline} has other dependencies than this checkout: compare by hand (README).`);
}
const baseline = join(DATA, 'baseline');
/**
 * This commit with records padded to 32-byte blocks as format 1.0 pads them (readers accept both): its adds differ
 * from this checkout's only by the records' padding bytes, which the budget leaves out.
 */
const recordsAsBefore = join(DATA, 'records-as-1.0');

const vault = (name: string): string => join(DATA, name);
const old = (phase: string, name = 'old'): Side => ({ checkout: baseline, phase, vault: vault(name) });
const now = (phase: string, name = 'new'): Side => ({ checkout: HERE, phase, vault: vault(name) });
const allOperations: Operation[] = [
  { key: 'add', label: 'add', sides: [old('add'), now('add')], pairs: PAIRS },
  {
    key: 'add-unpadded',
    label: 'add, vault made without content padding',
    sides: [old('add', 'old-2'), now('add-unpadded', 'new-unpadded')],
    pairs: PAIRS,
  },
  {
    key: 'add-records',
    label: 'add, records padded as format 1.0 pads them (this commit, RECORD_BUCKET 32)',
    sides: [old('add', 'old-3'), { checkout: recordsAsBefore, phase: 'add', vault: vault('new-records') }],
    pairs: PAIRS,
  },
  {
    key: 'add-bare',
    label: 'add, neither kind of padding (records as 1.0 pads them, no content padding)',
    sides: [
      old('add', 'old-4'),
      { checkout: recordsAsBefore, phase: 'add-unpadded', vault: vault('new-records-unpadded') },
    ],
    pairs: PAIRS,
  },
  { key: 'restore', label: 'restore', sides: [old('restore'), now('restore')], pairs: PAIRS },
  {
    key: 'restore-unpadded',
    label: 'restore, vault made without content padding',
    sides: [old('restore'), now('restore', 'new-unpadded')],
    pairs: PAIRS,
  },
  {
    key: 'unlock',
    label: 'unlock, snapshot current (KDF too)',
    sides: [old('unlock'), now('unlock')],
    pairs: 2 * PAIRS,
  },
  {
    key: 'unlock-tree',
    label: 'the same, and the whole tree made (a stat below the root)',
    sides: [old('unlock-tree'), now('unlock-tree')],
    pairs: 2 * PAIRS,
  },
  {
    key: 'unlock-format',
    label: 'the same, this code on both, read-only: the format 1.0 vault against the 1.1 one',
    sides: [
      { checkout: HERE, phase: 'unlock-readonly', vault: vault('old') },
      { checkout: HERE, phase: 'unlock-readonly', vault: vault('new') },
    ],
    pairs: 2 * PAIRS,
  },
  {
    key: 'unlock-rows',
    label: 'unlock without a current snapshot (whole tree made)',
    sides: [old('unlock-rows'), now('unlock-rows')],
    pairs: 2 * PAIRS,
  },
];
const only = flags.only?.split(',');
const unknown = only?.filter((key) => !allOperations.some((op) => op.key === key)) ?? [];
if (unknown.length > 0) throw new Error(`--only: no operation called ${unknown.join(', ')}`);
const operations = only ? allOperations.filter((op) => only.includes(op.key)) : allOperations;

/** A worktree of `commit` at `path` that uses this checkout's node_modules. */
function worktree(path: string, commit: string): void {
  git('worktree', 'add', '--detach', path, commit);
  symlinkSync(join(HERE, 'node_modules'), join(path, 'node_modules'));
}

worktree(baseline, baselineCommit);
if (operations.some((op) => op.sides.some((side) => side.checkout === recordsAsBefore))) {
  worktree(recordsAsBefore, 'HEAD');
  const recordFile = join(recordsAsBefore, 'src/core/crypto/record.ts');
  const recordSource = readFileSync(recordFile, 'utf8');
  const bucket = 'export const RECORD_BUCKET = 256;';
  if (!recordSource.includes(bucket)) throw new Error(`${recordFile} no longer says "${bucket}"`);
  writeFileSync(recordFile, recordSource.replace(bucket, 'export const RECORD_BUCKET = 32;'));
}

console.error(`bench:format: ${baselineCommit.slice(0, 7)} against ${git('rev-parse', '--short', 'HEAD')}`);
paired(HERE, 'source');
// The other operations read vaults the adds make: those of adds left out by --only are made once here.
const isAdd = (side: Side): boolean => side.phase.startsWith('add');
const addedByRun = new Set(operations.flatMap((op) => op.sides.filter(isAdd).map((side) => side.vault)));
const makers = allOperations.flatMap((op) => op.sides.filter(isAdd));
for (const path of new Set(operations.flatMap((op) => op.sides.map((side) => side.vault)))) {
  const maker = makers.find((side) => side.vault === path);
  if (maker && !addedByRun.has(path)) measure(maker);
}
const rows: string[] = [];
for (const { label, sides, pairs } of operations) {
  const before: Run[] = [];
  const after: Run[] = [];
  for (let pair = 0; pair < pairs; pair++) {
    const runOld = (): number => before.push(measure(sides[0]));
    const runNew = (): number => after.push(measure(sides[1]));
    if (pair % 2 === 0) {
      runOld();
      runNew();
    } else {
      runNew();
      runOld();
    }
    console.error(`  ${label}: pair ${pair + 1} of ${pairs}`);
  }
  const ratios = after.map((run, i) => run.cpu / (before[i]?.cpu ?? Number.NaN));
  const loads = [...before, ...after].map((run) => Number(run.load));
  rows.push(
    `| ${label} | ${median(before.map((r) => r.cpu)).toFixed(2)} | ${median(after.map((r) => r.cpu)).toFixed(2)} | ` +
      `${median(ratios).toFixed(2)} (${ratios.map((r) => r.toFixed(2)).join(', ')}) | ` +
      `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} |`,
  );
}
console.log(`Coffer bench:format — ${new Date().toISOString().slice(0, 10)}, 100,000 files of 5–10 bytes`);
console.log('| operation | format 1.0 CPU s | this CPU s | this / 1.0 (median of pairs; each pair) | load |');
console.log('|---|---|---|---|---|');
for (const row of rows) console.log(row);
