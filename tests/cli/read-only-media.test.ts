/**
 * Issue 13: a vault left by a crash mid-commit, on read-only media: its index half-written and a hot journal beside
 * it (tests/helpers/interrupted.ts; a SIGKILL rarely lands inside SQLite's commit, and a transaction small enough to
 * stay in SQLite's page cache leaves no hot journal before it), then the file system remounted read-only. ls, restore, info and verify read the vault from a rolled-back private copy of its
 * index, say so, exit 1 (done with a warning), and leave no copy behind.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import {
  announceSkip,
  canMount,
  mountTmpfs,
  mountUnavailableReason,
  remountReadOnly,
  unmountAll,
} from '../helpers/mounts.js';
import { leaveHotJournal } from '../helpers/interrupted.js';
import { requireBuiltCli, runCli, tempDir } from './helpers.js';

requireBuiltCli();

const WARNING =
  /^coffer: warning: This vault was left by an interrupted write .* it was read from a private copy of its index with that write rolled back/mu;

describe('a vault left by a crash mid-commit, on read-only media', () => {
  afterEach(() => {
    unmountAll();
  });

  if (!canMount) announceSkip('the read-only media test', mountUnavailableReason ?? 'mount unavailable');
  it.skipIf(!canMount)(
    'ls, restore, info and verify read a rolled-back copy of the index, warn and exit 1',
    async () => {
      const cwd = tempDir();
      const privateTemp = tempDir();
      const env = { TMPDIR: privateTemp };
      const mount = mountTmpfs(32 * 1024 * 1024);
      const vault = join(mount, 'vault');
      await mkdir(join(cwd, 'kept'));
      await writeFile(join(cwd, 'kept', 'a.txt'), 'committed before the crash');
      expect((await runCli(['init', vault, '--kdf', 'interactive'], { cwd })).code).toBe(0);
      expect((await runCli(['add', vault, 'kept'], { cwd })).code).toBe(0);

      leaveHotJournal(vault);
      remountReadOnly(mount);

      const listed = await runCli(['ls', vault, '/', '--recursive'], { cwd, env });
      expect(listed.stderr).toMatch(WARNING);
      expect(
        listed.stdout
          .split('\n')
          .filter(Boolean)
          .map((line) => line.split('  ').pop()),
      ).toEqual(['kept/', 'kept/a.txt']);
      expect(listed.code).toBe(1);

      const out = join(cwd, 'out');
      const restored = await runCli(['restore', vault, '/kept', '--to', out], { cwd, env });
      expect(restored.stderr).toMatch(WARNING);
      expect(restored.stdout).toMatch(/^Done: 1 file restored/u);
      expect(restored.code).toBe(1);
      expect(readFileSync(join(out, 'kept', 'a.txt'), 'utf8')).toBe('committed before the crash');

      const info = await runCli(['info', vault], { cwd, env });
      expect(info.stderr).toMatch(WARNING);
      expect(info.stdout).toMatch(/^Read-only: {8}yes$/mu);
      expect(info.stdout).toMatch(/^Files: {12}1$/mu);
      expect(info.code).toBe(1);

      const verified = await runCli(['verify', vault], { cwd, env });
      expect(verified.stderr).toMatch(WARNING);
      expect(verified.stdout).toMatch(/^OK: 1 file checked/mu);
      expect(verified.code).toBe(1);

      // Every private copy was removed, and the vault still holds its journal for a writable open to play back.
      expect(readdirSync(privateTemp)).toEqual([]);
      expect(existsSync(join(vault, 'index.sqlite-journal'))).toBe(true);
    },
  );
});
