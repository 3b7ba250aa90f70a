/**
 * `npm run bench`: Coffer against a plain copy and against peer tools on the same data, as ratios measured in one
 * run. A benchmark, not a test: it asserts nothing and its figures go into the README.
 *
 * Data: one random file (default 512 MiB) and many random small files (default 10,000 of 1–32 KiB in 100
 * folders), made in a temp dir on /dev/shm when present so the CPU, not a noisy disk, is measured. Every tool
 * runs --runs times (default 3), alternating, each round in a workload starting with the next tool, and medians are
 * reported. "coffer, in-process" times the same
 * engine calls inside one long-lived process (bench-engine.ts), leaving out start-up, opening the vault, the key
 * derivation and starting the worker pool. Peak RSS comes from GNU time when
 * installed. age and rclone are compared when installed (apt-get install age rclone time).
 *
 * Flags: --big-mib N  --small-count N  --small-min-kib N  --small-max-kib N  --folders N  --runs N  --dir PATH
 *        --kdf interactive|moderate|sensitive  --out FILE.json  --huge-gib N (one add of an N GiB file for peak
 *        RSS; 0 skips it)  --format-pairs N (then bench-format.ts with N pairs: format 1.1's cost against 1.0;
 *        0 skips it)
 */
import { execFileSync, fork, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes, randomFillSync, randomInt } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
  closeSync,
} from 'node:fs';
import { cpus, totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import type { EngineCommand } from './bench-engine.js';
import { median } from './bench-stats.js';

const { values: flags } = parseArgs({
  options: {
    'big-mib': { type: 'string', default: '512' },
    'small-count': { type: 'string', default: '10000' },
    'small-min-kib': { type: 'string', default: '1' },
    'small-max-kib': { type: 'string', default: '32' },
    'huge-gib': { type: 'string', default: '4' },
    folders: { type: 'string', default: '100' },
    runs: { type: 'string', default: '3' },
    dir: { type: 'string' },
    kdf: { type: 'string', default: 'interactive' },
    out: { type: 'string' },
    'format-pairs': { type: 'string', default: '3' },
  },
});

const BIG_BYTES = Number(flags['big-mib']) * 1024 * 1024;
const SMALL_COUNT = Number(flags['small-count']);
const RUNS = Number(flags.runs);
const ROOT = mkdtempSync(
  join(flags.dir ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir()), 'coffer-bench-'),
);
const CLI = join(import.meta.dirname, '..', 'bin', 'coffer.js');
const PASSPHRASE = 'bench passphrase, not a secret';
const env = { ...process.env, COFFER_PASSPHRASE: PASSPHRASE, RCLONE_CONFIG: '/dev/null' };

function has(tool: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
}
const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

interface Measurement {
  seconds: number;
  peakRssMiB: number | undefined;
}

/** Runs a command, timing the whole process (start-up included) and reading its peak RSS from GNU time. */
function measure(command: string[]): Measurement {
  const rssFile = join(ROOT, 'rss.txt');
  const argv = GNU_TIME ? [GNU_TIME, '-f', '%M', '-o', rssFile, ...command] : command;
  const start = process.hrtime.bigint();
  const result = spawnSync(argv[0] ?? '', argv.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (result.status !== 0) throw new Error(`${command.join(' ')} failed: ${result.stderr.toString()}`);
  const peakRssMiB = GNU_TIME
    ? Number(readFileSync(rssFile, 'utf8').trim().split('\n').pop()) / 1024
    : undefined;
  return { seconds, peakRssMiB };
}

function makeData(): { big: string; small: string } {
  const big = join(ROOT, 'data', 'big.bin');
  const small = join(ROOT, 'data', 'small');
  mkdirSync(small, { recursive: true });
  const fd = openSync(big, 'w');
  const piece = Buffer.alloc(16 * 1024 * 1024);
  for (let written = 0; written < BIG_BYTES; written += piece.length) {
    randomFillSync(piece);
    writeSync(fd, piece, 0, Math.min(piece.length, BIG_BYTES - written));
  }
  closeSync(fd);
  const folders = Number(flags.folders);
  const min = Number(flags['small-min-kib']) * 1024;
  const max = Number(flags['small-max-kib']) * 1024;
  for (let f = 0; f < folders; f++) mkdirSync(join(small, `folder-${f}`));
  for (let i = 0; i < SMALL_COUNT; i++) {
    writeFileSync(
      join(small, `folder-${i % folders}`, `file-${i}.bin`),
      randomBytes(randomInt(min, max + 1)),
    );
  }
  return { big, small };
}

const fresh = (name: string): string => {
  const path = join(ROOT, name);
  rmSync(path, { recursive: true, force: true });
  return path;
};
const coffer = (...args: string[]): string[] => [process.execPath, CLI, ...args];

function newVault(name: string): string {
  const vault = fresh(name);
  execFileSync(process.execPath, [CLI, 'init', vault, '--kdf', flags.kdf], { env, stdio: 'ignore' });
  return vault;
}

interface Workload {
  readonly name: string;
  readonly tools: Record<string, () => Measurement | Promise<Measurement>>;
}

/** The engine in one long-lived child process (bench-engine.ts), for figures without start-up costs. */
const engine = fork(join(import.meta.dirname, 'bench-engine.ts'), [], {
  execArgv: ['--import', 'tsx'],
  env,
  stdio: 'inherit',
});
await once(engine, 'message');

async function inProcess(command: EngineCommand): Promise<Measurement> {
  engine.send(command);
  const [reply] = (await once(engine, 'message')) as [{ seconds: number }];
  return { seconds: reply.seconds, peakRssMiB: undefined };
}

function workloads(data: { big: string; small: string }): Workload[] {
  const big: Workload = { name: `add/encrypt ${flags['big-mib']} MiB file`, tools: {} };
  const bigBack: Workload = { name: `restore/decrypt ${flags['big-mib']} MiB file`, tools: {} };
  const small: Workload = { name: `add ${SMALL_COUNT} small files`, tools: {} };
  const smallBack: Workload = { name: `restore ${SMALL_COUNT} small files`, tools: {} };

  big.tools.cp = () => measure(['cp', data.big, fresh('cp-big.bin')]);
  bigBack.tools.cp = () => measure(['cp', data.big, fresh('cp-big.bin')]);
  small.tools['cp -r'] = () => measure(['cp', '-r', data.small, fresh('cp-small')]);
  smallBack.tools['cp -r'] = () => measure(['cp', '-r', data.small, fresh('cp-small')]);

  const IN_PROCESS = 'coffer, in-process';
  const engineAdd = (vault: string, source: string) => () =>
    inProcess({ op: 'add', vault: join(ROOT, vault), source, kdf: flags.kdf });
  const engineRestore = (vault: string, path: string) => () =>
    inProcess({ op: 'restore', vault: join(ROOT, vault), path, dest: join(ROOT, 'engine-out') });
  big.tools[IN_PROCESS] = engineAdd('engine-big', data.big);
  bigBack.tools[IN_PROCESS] = engineRestore('engine-big', '/big.bin');
  small.tools[IN_PROCESS] = engineAdd('engine-small', data.small);
  smallBack.tools[IN_PROCESS] = engineRestore('engine-small', '/small');

  let bigVault = '';
  big.tools.coffer = () => {
    bigVault = newVault('vault-big');
    return measure(coffer('add', bigVault, data.big));
  };
  bigBack.tools.coffer = () =>
    measure(coffer('restore', bigVault, '/big.bin', '--to', fresh('restored-big')));
  let smallVault = '';
  small.tools.coffer = () => {
    smallVault = newVault('vault-small');
    return measure(coffer('add', smallVault, data.small));
  };
  smallBack.tools.coffer = () =>
    measure(coffer('restore', smallVault, '/small', '--to', fresh('restored-small')));

  if (has('age') && has('age-keygen')) {
    const key = join(ROOT, 'age-key.txt');
    rmSync(key, { force: true });
    execFileSync('age-keygen', ['-o', key], { stdio: 'ignore' });
    const recipient = /public key: (\S+)/.exec(readFileSync(key, 'utf8'))?.[1] ?? '';
    const encrypted = join(ROOT, 'big.age');
    big.tools.age = () => {
      rmSync(encrypted, { force: true });
      return measure(['age', '-r', recipient, '-o', encrypted, data.big]);
    };
    bigBack.tools.age = () => measure(['age', '-d', '-i', key, '-o', fresh('age-out.bin'), encrypted]);
  }
  if (has('rclone')) {
    const obscured = execFileSync('rclone', ['obscure', PASSPHRASE], { env }).toString().trim();
    const remote = (dir: string): NodeJS.ProcessEnv => ({
      RCLONE_CONFIG_BENCHCRYPT_TYPE: 'crypt',
      RCLONE_CONFIG_BENCHCRYPT_REMOTE: dir,
      RCLONE_CONFIG_BENCHCRYPT_PASSWORD: obscured,
    });
    const rclone = (source: string, dir: string): Measurement => {
      Object.assign(env, remote(fresh(dir)));
      return measure(['rclone', 'copy', source, 'benchcrypt:']);
    };
    big.tools['rclone crypt'] = () => rclone(data.big, 'rclone-big');
    small.tools['rclone crypt'] = () => rclone(data.small, 'rclone-small');
  }
  return [big, bigBack, small, smallBack];
}

/** Peak memory while adding one very large file (a sparse source, so only the vault side uses real memory). */
function hugeFileAdd(): { gib: number; seconds: number; peakRssMiB: number | undefined } | undefined {
  const gib = Number(flags['huge-gib']);
  if (!(gib > 0)) return undefined;
  const source = join(ROOT, 'huge.bin');
  const fd = openSync(source, 'w');
  writeSync(fd, randomBytes(4096), 0, 4096, gib * 2 ** 30 - 4096);
  closeSync(fd);
  const vault = newVault('vault-huge');
  const result = measure(coffer('add', vault, source));
  rmSync(vault, { recursive: true, force: true });
  rmSync(source, { force: true });
  return { gib, ...result };
}

/** `items` starting at index `turn` (modulo its length), wrapping round. */
function rotated<T>(items: readonly T[], turn: number): T[] {
  const start = items.length === 0 ? 0 : turn % items.length;
  return [...items.slice(start), ...items.slice(0, start)];
}

async function main(): Promise<void> {
  console.error(`bench: making data in ${ROOT} …`);
  const data = makeData();
  const loads = workloads(data);
  const samples = new Map<string, Measurement[]>();
  // Alternate: every tool once per round, so drift on a shared machine hits all of them alike. Within a workload
  // the order turns each round: on this host whatever runs first after the 512 MiB workloads ran up to 4x slower
  // (cp -r 0.46-0.74 s, then 0.15 s at once again), which a fixed order charged to the baseline alone.
  for (let run = 0; run < RUNS; run++) {
    for (const load of loads) {
      for (const [tool, fn] of rotated(Object.entries(load.tools), run)) {
        const key = `${load.name}\u0000${tool}`;
        samples.set(key, [...(samples.get(key) ?? []), await fn()]);
      }
    }
    console.error(`bench: round ${run + 1}/${RUNS} done`);
  }
  engine.send({ op: 'exit' } satisfies EngineCommand);
  const startup = [0, 1, 2].map(() => measure(coffer('--version')).seconds);
  // What every command that opens a vault pays before it works: start-up, opening and the key derivation.
  const emptyVault = newVault('vault-empty');
  const openStartup = [0, 1, 2, 3, 4].map(() => measure(coffer('ls', emptyVault)).seconds);
  const huge = hugeFileAdd();
  const rows = loads.flatMap((load) => {
    const baseline = Object.keys(load.tools)[0] ?? '';
    const base = median((samples.get(`${load.name}\u0000${baseline}`) ?? []).map((m) => m.seconds));
    return Object.keys(load.tools).map((tool) => {
      const runs = samples.get(`${load.name}\u0000${tool}`) ?? [];
      const seconds = median(runs.map((m) => m.seconds));
      const rss = runs.map((m) => m.peakRssMiB).filter((v): v is number => v !== undefined);
      return {
        workload: load.name,
        tool,
        medianSeconds: Number(seconds.toFixed(3)),
        ratioToCopy: Number((seconds / base).toFixed(2)),
        peakRssMiB: rss.length ? Math.round(Math.max(...rss)) : null,
        runs: runs.map((m) => Number(m.seconds.toFixed(3))),
      };
    });
  });
  const report = {
    date: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? '?',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
    },
    dataDir: ROOT,
    vaultKdf: flags.kdf,
    nodeStartupSeconds: Number(median(startup).toFixed(3)),
    openAndUnlockSeconds: Number(median(openStartup).toFixed(3)),
    hugeFileAdd: huge,
    rows,
  };
  const out =
    flags.out ?? join(import.meta.dirname, '..', 'bench-results', `bench-${report.date.slice(0, 10)}.json`);
  mkdirSync(join(out, '..'), { recursive: true });
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(
    `Coffer bench — ${report.date.slice(0, 10)}, ${report.machine.cpus} cores (${report.machine.cpuModel}), ${report.machine.memoryGiB} GiB, Node ${report.machine.node}`,
  );
  console.log(
    `data on ${ROOT.startsWith('/dev/shm') ? 'tmpfs (/dev/shm)' : ROOT}; medians of ${RUNS} alternating runs; whole-process wall time; vault KDF: ${flags.kdf}`,
  );
  console.log(
    '"coffer, in-process" times only the engine call in a running process: no start-up, open, key derivation or pool start.',
  );
  console.log(`coffer start-up alone (coffer --version): ${report.nodeStartupSeconds.toFixed(3)} s`);
  console.log(
    `start-up, open and unlock (coffer ls of an empty vault, ${flags.kdf} KDF): ${report.openAndUnlockSeconds.toFixed(3)} s\n`,
  );
  console.log('| work | tool | median s | × copy | peak RSS MiB |\n|---|---|---|---|---|');
  for (const row of rows) {
    console.log(
      `| ${row.workload} | ${row.tool} | ${row.medianSeconds.toFixed(3)} | ${row.ratioToCopy.toFixed(2)} | ${row.peakRssMiB ?? 'n/a'} |`,
    );
  }
  if (huge) {
    console.log(
      `\nadd one ${huge.gib} GiB file (sparse source): ${huge.seconds.toFixed(2)} s, peak RSS ${huge.peakRssMiB === undefined ? 'n/a' : Math.round(huge.peakRssMiB)} MiB`,
    );
  }
  console.log(`\nJSON: ${out}`);
  rmSync(ROOT, { recursive: true, force: true });
  if (flags['format-pairs'] !== '0') {
    console.log('\nWhat format 1.1 costs against format 1.0 (npm run bench:format):');
    // Node itself, as bench-format.ts runs its own measurements: npx's exit on Ctrl-C does not wait for its child.
    const format = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        join(import.meta.dirname, 'bench-format.ts'),
        '--pairs',
        flags['format-pairs'],
        ...(flags.dir === undefined ? [] : ['--dir', flags.dir]),
      ],
      { stdio: 'inherit', cwd: join(import.meta.dirname, '..') },
    );
    if (format.status !== 0) throw new Error('bench:format failed');
  }
}

await main();
