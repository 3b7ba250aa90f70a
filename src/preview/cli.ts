/**
 * `npm run preview`: serves the built renderer with the real back end on 127.0.0.1 and prints the URL to open.
 * Options: --test (dialog answers come from a queue a test fills), --data-dir DIR, --port N, --static DIR.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

import { startPreviewServer } from './server.js';

function defaultDataDir(testMode: boolean): string {
  // A test gets a fresh folder every run; a person keeps their recent vaults and settings between runs.
  if (testMode) return mkdtempSync(join(tmpdir(), 'coffer-preview-'));
  const base = process.env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share');
  return join(base, 'coffer-preview');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      test: { type: 'boolean', default: false },
      'data-dir': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      static: { type: 'string', default: 'out/renderer' },
    },
    strict: true,
  });
  const dataDir = resolve(values['data-dir'] ?? defaultDataDir(values.test));
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const server = await startPreviewServer({
    dataDir,
    staticDir: resolve(values.static),
    testMode: values.test,
    ...(values.port !== undefined ? { port: Number.parseInt(values.port, 10) } : {}),
    ...(values.host !== undefined ? { host: values.host } : {}),
  });
  process.stdout.write(`Coffer preview${values.test ? ' (test mode)' : ''}: open ${server.url}\n`);
  process.stdout.write(`Data folder: ${dataDir}\n`);
  const stop = (): void => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`coffer preview: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
});
