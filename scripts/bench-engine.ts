/**
 * Child process of `npm run bench`: times engine calls inside one long-lived process, so the figure leaves out
 * what every `coffer` command pays before it starts working (Node start-up, loading the engine, opening the vault,
 * the key derivation, starting the worker pool). Commands arrive as IPC messages; each reply is the seconds the
 * call took.
 */
import { rmSync } from 'node:fs';

import type * as Pool from '../src/core/crypto/pool.js';
import type * as Engine from '../src/core/index.js';

// The built engine (npm run bench builds first), as the CLI runs it: loading the TypeScript source through tsx
// would also run the pool's workers through tsx.
const dist = new URL('../dist/core/', import.meta.url);
const { encodePassphrase, loadSodium, Vault } = (await import(
  new URL('index.js', dist).href
)) as typeof Engine;
const { sharedCryptoPool } = (await import(new URL('crypto/pool.js', dist).href)) as typeof Pool;

export type EngineCommand =
  | { readonly op: 'add'; readonly vault: string; readonly source: string; readonly kdf: string }
  | { readonly op: 'restore'; readonly vault: string; readonly path: string; readonly dest: string }
  | { readonly op: 'exit' };

const sodium = await loadSodium();
await sharedCryptoPool();
const vaults = new Map<string, Engine.Vault>();

async function run(command: EngineCommand): Promise<number> {
  if (command.op === 'exit') {
    for (const vault of vaults.values()) vault.close();
    process.exit(0);
  }
  if (command.op === 'add') {
    vaults.get(command.vault)?.close();
    rmSync(command.vault, { recursive: true, force: true });
    const passphrase = encodePassphrase(sodium, 'bench passphrase, not a secret');
    const kdf = command.kdf as 'interactive' | 'moderate' | 'sensitive';
    const vault = await Vault.create(command.vault, passphrase, { kdf, sodium });
    vaults.set(command.vault, vault);
    const start = performance.now();
    await vault.add([command.source], '/');
    return (performance.now() - start) / 1000;
  }
  const vault = vaults.get(command.vault);
  if (!vault) throw new Error(`bench-engine: no vault at ${command.vault}`);
  rmSync(command.dest, { recursive: true, force: true });
  const start = performance.now();
  await vault.restore([command.path], command.dest);
  return (performance.now() - start) / 1000;
}

process.on('message', (command: EngineCommand) => {
  run(command).then(
    (seconds) => process.send?.({ seconds }),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
});
// Ends with the bench, even one that failed midway.
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });
