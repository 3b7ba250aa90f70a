/**
 * `npx tsx scripts/bench-reencrypt.ts [--runs N] [--large-mib M] [--small-count C]`: the throughput of "rotate
 * and re-encrypt" against a plain restore of the same vault, in one process, on tmpfs. A vault of 4 large files
 * (M MiB each, default 192) and C small ones (default 2048 of 128 KiB: 256 MiB), about 1 GiB, is made once; then
 * N pairs (default 3) of a whole restore and a whole re-encryption run alternately (each re-encryption rotates to a
 * new key and rewrites everything). Reported per run: wall seconds and the process's CPU seconds (user + sys, all
 * threads, workers included), and MB/s of stored file bytes.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import type * as Pool from '../src/core/crypto/pool.js';
import type * as Engine from '../src/core/index.js';
import { median } from './bench-stats.js';

// The built engine (`npm run build` first), as the CLI runs it, so the pool's workers run plain JavaScript.
const dist = new URL('../dist/core/', import.meta.url);
const { encodePassphrase, loadSodium, Vault } = (await import(
  new URL('index.js', dist).href
)) as typeof Engine;
const { sharedCryptoPool } = (await import(new URL('crypto/pool.js', dist).href)) as typeof Pool;

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    'large-mib': { type: 'string', default: '192' },
    'small-count': { type: 'string', default: '2048' },
  },
});
const runs = Number(values.runs);
const largeBytes = Number(values['large-mib']) * 1024 * 1024;
const smallCount = Number(values['small-count']);
const SMALL_BYTES = 128 * 1024;

const work = mkdtempSync('/dev/shm/coffer-bench-reencrypt-');
const source = join(work, 'src');
mkdirSync(join(source, 'small'), { recursive: true });
const block = randomBytes(16 * 1024 * 1024);
for (let i = 0; i < 4; i++) {
  const parts: Buffer[] = [];
  for (let at = 0; at < largeBytes; at += block.length)
    parts.push(block.subarray(0, Math.min(block.length, largeBytes - at)));
  // Each file differs from the others in its first bytes; the contents do not matter to the cipher.
  parts[0] = Buffer.concat([randomBytes(64), (parts[0] ?? Buffer.alloc(0)).subarray(64)]);
  writeFileSync(join(source, `large-${i}.bin`), Buffer.concat(parts));
}
for (let i = 0; i < smallCount; i++)
  writeFileSync(join(source, 'small', `s${i}.bin`), randomBytes(SMALL_BYTES));
const totalBytes = 4 * largeBytes + smallCount * SMALL_BYTES;

const sodium = await loadSodium();
await sharedCryptoPool();
const vault = await Vault.create(
  join(work, 'vault'),
  encodePassphrase(sodium, 'bench passphrase, not a secret'),
  {
    kdf: 'interactive',
    sodium,
  },
);
await vault.add([source]);
rmSync(source, { recursive: true });

async function timed(run: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  await run();
  const wall = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return { wall, cpu: (cpu.user + cpu.system) / 1e6 };
}

const rows: string[] = [];
const results = {
  restore: [] as { wall: number; cpu: number }[],
  reencrypt: [] as { wall: number; cpu: number }[],
};
for (let i = 0; i < runs; i++) {
  const dest = join(work, 'out');
  const restore = await timed(() => vault.restore(['/src'], dest));
  rmSync(dest, { recursive: true });
  const reencrypt = await timed(() => vault.reencrypt());
  results.restore.push(restore);
  results.reencrypt.push(reencrypt);
  rows.push(
    `pair ${i + 1}: restore ${restore.wall.toFixed(2)} s wall, ${restore.cpu.toFixed(2)} s CPU; ` +
      `re-encrypt ${reencrypt.wall.toFixed(2)} s wall, ${reencrypt.cpu.toFixed(2)} s CPU`,
  );
}
vault.close();
rmSync(work, { recursive: true, force: true });

const mb = totalBytes / 1e6;
for (const row of rows) console.log(row);
for (const kind of ['restore', 'reencrypt'] as const) {
  const wall = median(results[kind].map((r) => r.wall));
  const cpu = median(results[kind].map((r) => r.cpu));
  console.log(
    `${kind}: median ${wall.toFixed(2)} s wall (${(mb / wall).toFixed(0)} MB/s), ${cpu.toFixed(2)} s CPU, over ` +
      `${(totalBytes / 2 ** 30).toFixed(2)} GiB in ${4 + smallCount} files`,
  );
}
const ratios = results.reencrypt.map((r, i) => r.wall / (results.restore[i]?.wall ?? 1));
const cpuRatios = results.reencrypt.map((r, i) => r.cpu / (results.restore[i]?.cpu ?? 1));
console.log(
  `re-encrypt / restore, per pair: wall ${ratios.map((r) => r.toFixed(2)).join(', ')}; ` +
    `CPU ${cpuRatios.map((r) => r.toFixed(2)).join(', ')}`,
);
