import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Where scripts/build-electron-native.ts puts better-sqlite3 built for this Electron version, relative to the
 * app's root. One folder per Electron version, so upgrading Electron never loads a stale build.
 */
function electronSqliteBindingPath(appRoot: string, electronVersion: string): string {
  return join(appRoot, 'out', 'native', `electron-${electronVersion}`, 'better_sqlite3.node');
}

/**
 * The Electron build of better-sqlite3 when it exists (a development checkout after `npm ci`), else `undefined`:
 * the packaged app ships none, because electron-builder rebuilds node_modules' better-sqlite3 for Electron itself
 * and the package's own build is then the right one.
 */
export function findElectronSqliteBinding(appRoot: string, electronVersion: string): string | undefined {
  const path = electronSqliteBindingPath(appRoot, electronVersion);
  return existsSync(path) ? path : undefined;
}
