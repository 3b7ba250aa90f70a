/**
 * The last step of `npm run build`: bundles the `coffer` command into dist/bundle/, which bin/coffer.js runs.
 * Node 20's ES module loader pays for every module it resolves and loads, and a command loaded ~50 of ours;
 * bundled, it loads five files.
 *
 * The tsc output in dist/core stays the engine that scripts and tests import. The crypto pool starts its worker
 * from beside the module that holds the pool (worker-spawn.ts), so the worker is bundled into dist/bundle/ too.
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { build, type BuildOptions } from 'esbuild';

const OUT_DIR = 'dist/bundle';
const common: BuildOptions = {
  absWorkingDir: fileURLToPath(new URL('..', import.meta.url)),
  outdir: OUT_DIR,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  // The native addons (better-sqlite3, sodium-native) must be loaded from node_modules, and
  // libsodium-wrappers-sumo only when sodium-native cannot be: every dependency stays a package import.
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
};

// Chunk names carry a content hash, so the chunks of an earlier build would otherwise pile up.
rmSync(new URL(`../${OUT_DIR}`, import.meta.url), { recursive: true, force: true });
await Promise.all([
  // Split at the command's dynamic imports, so --help, --version and usage errors do not load the engine.
  build({ ...common, entryPoints: { coffer: 'src/cli/run.ts' }, splitting: true }),
  // Built apart, so the worker is one file rather than importing the chunks it shares with the command.
  build({ ...common, entryPoints: { 'crypto-worker': 'src/core/crypto/crypto-worker.ts' } }),
]);
