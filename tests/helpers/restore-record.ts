import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { REPO } from '../cli/helpers.js';

/**
 * Starts a process that records a restore, writes one temp file ("partial plaintext") and waits; resolves with
 * the process and the temp file's path.
 */
export async function restoreInAnotherProcess(
  stateDir: string,
  target: string,
): Promise<{ kill: () => Promise<void>; temp: string }> {
  const engine = pathToFileURL(join(REPO, 'dist', 'core', 'vault', 'restore-record.js')).href;
  const script = [
    `import { writeFileSync } from 'node:fs';`,
    `const { RestoreRecord } = await import(${JSON.stringify(engine)});`,
    `const record = RestoreRecord.start(${JSON.stringify(stateDir)});`,
    `const temp = record.tempPathFor(${JSON.stringify(target)});`,
    `writeFileSync(temp, 'partial plaintext');`,
    `process.stdout.write(temp + '\\n');`,
    `setInterval(() => undefined, 1000);`,
  ].join('\n');
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'pipe' });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise((done) => child.on('exit', done));
  const temp = await new Promise<string>((ready, fail) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      ready(chunk.trim());
    });
    void exited.then(() => {
      fail(new Error(`the restoring process exited: ${stderr}`));
    });
  });
  return {
    temp,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
