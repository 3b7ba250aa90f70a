/**
 * Prepares what `npm start` needs beyond the bundles: the Electron binary, and better-sqlite3 compiled for
 * Electron's ABI into out/native/electron-<version>/ (main passes it to better-sqlite3 as `nativeBinding`), so the
 * Node build in node_modules that the CLI and the tests load stays as it is.
 *
 * Runs from `prepare` (so `npm ci` alone sets everything up) and before `npm start`. Where Electron cannot be had
 * it prints ONE line saying why and exits 0: the CLI, the tests and `npm run preview` do not need it. It fails
 * only when Electron is there but the build breaks, because then `npm start` would too.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { electronPackage, findElectronBinary } from './electron-binary.js';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('..', import.meta.url));
const { dir: electronDir, version } = electronPackage();
const target = join(root, 'out', 'native', `electron-${version}`, 'better_sqlite3.node');

function skip(reason: string): never {
  console.log(`build-electron-native: skipped: ${reason}; npm start needs it, npm run preview does not.`);
  process.exit(0);
}

/** npm's own node-gyp (npm ships it for packages' install scripts, and puts it on their PATH). */
function nodeGyp(): string {
  const npmDir = process.env.npm_execpath ? dirname(dirname(process.env.npm_execpath)) : undefined;
  const candidates = [
    ...(npmDir ? [join(npmDir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')] : []),
    join(
      dirname(process.execPath),
      '..',
      'lib',
      'node_modules',
      'npm',
      'node_modules',
      'node-gyp',
      'bin',
      'node-gyp.js',
    ),
  ];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (found === undefined) throw new Error('node-gyp was not found (it ships with npm)');
  return found;
}

if (existsSync(target)) process.exit(0);
if (process.env.ELECTRON_SKIP_BINARY_DOWNLOAD) {
  skip('ELECTRON_SKIP_BINARY_DOWNLOAD is set, so there is no Electron to build better-sqlite3 for');
}
if (findElectronBinary() === null) {
  const download = spawnSync(process.execPath, [join(electronDir, 'install.js')], { encoding: 'utf8' });
  if (download.status !== 0 || findElectronBinary() === null) {
    const why = `${download.stderr}${download.stdout}`.split('\n').find((line) => /error|failed/i.test(line));
    skip(`the Electron ${version} binary could not be downloaded (${why?.trim() ?? 'no reason given'})`);
  }
}

// Built in a copy, so node_modules/better-sqlite3/build (the Node build) is never touched.
const work = mkdtempSync(join(tmpdir(), 'coffer-electron-sqlite-'));
try {
  const source = dirname(require.resolve('better-sqlite3/package.json'));
  for (const part of ['binding.gyp', 'package.json', 'src', 'deps'])
    cpSync(join(source, part), join(work, part), { recursive: true });
  // npm's `nodedir` setting (if any) points node-gyp at Node's headers; Electron's must be used instead.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^npm_config_nodedir$/i.test(key)),
  );
  const build = spawnSync(
    process.execPath,
    [
      nodeGyp(),
      'rebuild',
      '--release',
      '--runtime=electron',
      `--target=${version}`,
      `--arch=${process.arch}`,
      '--dist-url=https://electronjs.org/headers',
    ],
    { cwd: work, env, stdio: 'inherit' },
  );
  if (build.status !== 0) {
    console.error(
      `build-electron-native: building better-sqlite3 for Electron ${version} failed (see above); ` +
        'set ELECTRON_SKIP_BINARY_DOWNLOAD=1 to skip the desktop app and use npm run preview.',
    );
    process.exit(1);
  }
  mkdirSync(dirname(target), { recursive: true });
  cpSync(join(work, 'build', 'Release', 'better_sqlite3.node'), target);
  console.log(`build-electron-native: built better-sqlite3 for Electron ${version} into ${target}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
