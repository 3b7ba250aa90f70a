/**
 * One measurement of a paired comparison between two checkouts of Coffer (each with its own node_modules), run
 * alternately so that a shared machine's load falls on both alike: the CPU time (user + sys, every thread of the
 * process) and wall time of one engine operation on 100,000 small files, printed as one JSON line.
 *
 *   npx tsx scripts/bench-paired.ts CHECKOUT source                 writes the files (/dev/shm/coffer-pair-src)
 *   npx tsx scripts/bench-paired.ts CHECKOUT add VAULT_DIR          creates a vault there and adds them
 *   npx tsx scripts/bench-paired.ts CHECKOUT add-unpadded VAULT_DIR the same, the vault made without padding (1.1)
 *   npx tsx scripts/bench-paired.ts CHECKOUT unlock VAULT_DIR       unlocks it (snapshot current; KDF included)
 *   npx tsx scripts/bench-paired.ts CHECKOUT unlock-tree VAULT_DIR  the same, and makes the whole tree (a stat below
 *                                                                   the root)
 *   npx tsx scripts/bench-paired.ts CHECKOUT unlock-readonly VAULT_DIR  the same, the vault opened read-only (so a
 *                                                                   format 1.0 vault is read as it is)
 *   npx tsx scripts/bench-paired.ts CHECKOUT unlock-rows VAULT_DIR  unlocks it without the snapshot (rows read), and
 *                                                                   makes the whole tree
 *   npx tsx scripts/bench-paired.ts CHECKOUT restore VAULT_DIR      restores every file
 *
 * The checkout's own engine is loaded from `CHECKOUT/src`, so an older commit is measured with its own code.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [checkout = '', phase = '', vaultDir] = process.argv.slice(2);
if (!checkout || !phase) throw new Error('usage: bench-paired.ts CHECKOUT PHASE [VAULT_DIR]');
const PHASES = [
  'source',
  'add',
  'add-unpadded',
  'unlock',
  'unlock-tree',
  'unlock-readonly',
  'unlock-rows',
  'restore',
];
if (!PHASES.includes(phase)) throw new Error(`unknown phase ${phase}`);
const SOURCE = '/dev/shm/coffer-pair-src';
const FOLDERS = 90;
const PER_FOLDER = 1000;
const BIG_FOLDER = 10_000;

interface Engine {
  loadSodium(): Promise<unknown>;
  encodePassphrase(sodium: unknown, text: string): Uint8Array;
  Vault: {
    create(dir: string, passphrase: Uint8Array, options: object): Promise<EngineVault>;
    open(dir: string, options: object): Promise<EngineVault>;
  };
}
interface EngineVault {
  add(sources: string[], folder: string): Promise<unknown>;
  unlock(passphrase: Uint8Array): Promise<unknown>;
  restore(paths: string[], destination: string): Promise<unknown>;
  stat(path: string): unknown;
  lock(): void;
  close(): void;
}

function writeSource(): void {
  rmSync(SOURCE, { recursive: true, force: true });
  mkdirSync(join(SOURCE, 'big'), { recursive: true });
  for (let i = 0; i < BIG_FOLDER; i++) writeFileSync(join(SOURCE, 'big', `entry-${i}.txt`), `big ${i}`);
  for (let f = 0; f < FOLDERS; f++) {
    mkdirSync(join(SOURCE, `folder-${f}`));
    for (let i = f * PER_FOLDER; i < (f + 1) * PER_FOLDER; i++)
      writeFileSync(join(SOURCE, `folder-${f}`, `file-${i}.txt`), `file ${i}`);
  }
}

async function measured(work: () => Promise<unknown>): Promise<{ cpu: number; wall: number }> {
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  await work();
  const cpu = process.cpuUsage(cpuBefore);
  return { cpu: (cpu.user + cpu.system) / 1e6, wall: (performance.now() - start) / 1000 };
}

async function run(engine: Engine, dir: string): Promise<{ cpu: number; wall: number }> {
  const sodium = await engine.loadSodium();
  const passphrase = engine.encodePassphrase(sodium, 'paired bench');
  if (phase === 'add' || phase === 'add-unpadded') {
    rmSync(dir, { recursive: true, force: true });
    const vault = await engine.Vault.create(dir, passphrase, {
      kdf: 'interactive',
      sodium,
      ...(phase === 'add-unpadded' ? { contentPadding: 'none' } : {}),
    });
    const result = await measured(() => vault.add([SOURCE], '/'));
    vault.close();
    return result;
  }
  if (phase === 'unlock-rows') {
    const { default: Database } = (await import(
      join(checkout, 'node_modules/better-sqlite3/lib/index.js')
    )) as {
      default: new (path: string) => { exec(sql: string): void; close(): void };
    };
    const db = new Database(join(dir, 'index.sqlite'));
    db.exec("DELETE FROM meta WHERE key = 'tree_snapshot'");
    db.close();
  }
  const vault = await engine.Vault.open(dir, { sodium, readOnly: phase === 'unlock-readonly' });
  // Since f6cd816 an unlock makes the tree's nodes below the root at their first use (format 1.0's made them all);
  // a stat below the root makes them, so both sides have done the same work.
  const unlockWholeTree = async (): Promise<void> => {
    await vault.unlock(passphrase);
    vault.stat('/coffer-pair-src/big');
  };
  if (phase.startsWith('unlock')) {
    const result = await measured(phase === 'unlock' ? () => vault.unlock(passphrase) : unlockWholeTree);
    if (phase !== 'unlock-readonly') vault.lock(); // stores the snapshot again
    vault.close();
    return result;
  }
  const out = `${dir}-restored`;
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out);
  await unlockWholeTree();
  const result = await measured(() => vault.restore(['/coffer-pair-src'], out));
  vault.close();
  rmSync(out, { recursive: true, force: true });
  return result;
}

if (phase === 'source') writeSource();
else {
  if (!vaultDir) throw new Error('a vault dir is needed');
  const engine = (await import(join(checkout, 'src/core/index.ts'))) as Engine;
  const result = await run(engine, vaultDir);
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
  console.log(JSON.stringify({ checkout, phase, ...result, load }));
}
