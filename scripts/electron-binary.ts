/**
 * Finds the Electron binary that the `electron` package downloaded, without triggering its download (requiring
 * the package downloads on first use, which on a machine without network takes a while to fail).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** The `electron` package's folder and its version. */
export function electronPackage(): { dir: string; version: string } {
  const manifest = require.resolve('electron/package.json');
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  return { dir: dirname(manifest), version };
}

/** The binary's path, or `null` when it has not been downloaded. */
export function findElectronBinary(): string | null {
  const { dir } = electronPackage();
  const pathFile = join(dir, 'path.txt');
  if (!existsSync(pathFile)) return null;
  const binary = join(dir, 'dist', readFileSync(pathFile, 'utf8').trim());
  return existsSync(binary) ? binary : null;
}
