/**
 * `npm start` after the bundles and the Electron build of better-sqlite3 (build-electron-native.ts) are ready: launches the desktop app with the downloaded Electron binary, or says
 * in one line that there is none and points at the browser preview.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { electronPackage, findElectronBinary } from './electron-binary.js';

const root = fileURLToPath(new URL('..', import.meta.url));

const binary = findElectronBinary();
if (binary === null) {
  console.error(
    `coffer: the Electron ${electronPackage().version} binary is not installed here, so the desktop app cannot start; ` +
      'run `npm run preview` to use Coffer in a browser.',
  );
  process.exit(1);
}
const child = spawn(binary, [root], { stdio: 'inherit' });
child.on('exit', (code, signal) => {
  process.exit(code ?? (signal ? 1 : 0));
});
