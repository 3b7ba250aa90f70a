import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { removeStaleRestoreTemps } from '../../src/core/index.js';
import { RestoreRecord } from '../../src/core/vault/restore-record.js';
import { requireBuiltCli } from '../cli/helpers.js';
import { restoreInAnotherProcess } from '../helpers/restore-record.js';
import { tempDir } from '../helpers/vault.js';

requireBuiltCli(); // the killed process runs the compiled engine

/** The records (and their SQLite side files) left in a state folder. */
function records(stateDir: string): string[] {
  return existsSync(join(stateDir, 'restores')) ? readdirSync(join(stateDir, 'restores')) : [];
}

describe('restore temp-file records', () => {
  it('leave a running restore alone; after a kill -9, exactly its temp files are removed', async () => {
    const root = tempDir();
    const stateDir = join(root, 'state');
    const out = join(root, 'out');
    mkdirSync(out);
    const { temp, kill } = await restoreInAnotherProcess(stateDir, join(out, 'photo.jpg'));
    expect(dirname(temp)).toBe(out);
    expect(basename(temp)).toMatch(/^\.coffer-restore-[0-9a-f]{12}-[0-9a-z]+\.tmp$/u);

    // Still running: nothing is touched.
    expect(removeStaleRestoreTemps(stateDir)).toBe(0);
    expect(readFileSync(temp, 'utf8')).toBe('partial plaintext');
    expect(records(stateDir).filter((name) => name.endsWith('.sqlite'))).toHaveLength(1);

    await kill();
    // Beside the leftover: files that only look alike, which must survive.
    const prefix = /^\.coffer-restore-([0-9a-f]{12})-/u.exec(basename(temp))?.[1] ?? '';
    const victim = join(root, 'victim.txt');
    writeFileSync(victim, 'not Coffer’s');
    const decoys = [
      '.coffer-restore-0123456789ab-1.tmp', // another restore's, possibly running
      `.coffer-restore-${prefix}-1.tmp.keep`,
      'notes.txt',
    ];
    for (const name of decoys) writeFileSync(join(out, name), 'keep');
    symlinkSync(victim, join(out, `.coffer-restore-${prefix}-zz.tmp`));

    expect(removeStaleRestoreTemps(stateDir)).toBe(1);
    expect(existsSync(temp)).toBe(false);
    for (const name of decoys) expect(readFileSync(join(out, name), 'utf8')).toBe('keep');
    expect(lstatSync(join(out, `.coffer-restore-${prefix}-zz.tmp`)).isSymbolicLink()).toBe(true);
    expect(readFileSync(victim, 'utf8')).toBe('not Coffer’s');
    expect(records(stateDir)).toEqual([]);
  });

  it('a record in this process: kept while open, and on a failed close its temp files go with it', () => {
    const root = tempDir();
    const stateDir = join(root, 'state');
    const record = RestoreRecord.start(stateDir);
    const temp = record.tempPathFor(join(root, 'a.txt'));
    writeFileSync(temp, 'partial');
    expect(removeStaleRestoreTemps(stateDir)).toBe(0);
    expect(existsSync(temp)).toBe(true);
    record.close(true);
    expect(existsSync(temp)).toBe(false);
    expect(records(stateDir)).toEqual([]);
  });
});
