/**
 * Kill -9 `coffer rotate` while it replaces the vault header, then check that the vault opens with the old header
 * or the new one (never neither), verifies, reads every file, writes new data under whichever key is active, and
 * that opening removed the temp header a kill left in tmp/. Aimed like tests/crash/crash.test.ts: the test hook
 * announces the new header durable in its temp file ("pending", then a pause, then the rename) and renamed
 * ("committed", then a pause, then the same for the header's backup, FORMAT.md 4.7, then the log entry). Odd trials kill in the pause before the rename, even ones
 * after it (in the pause, the log append, or the close). COFFER_ROTATE_CRASH_TRIALS sets the number (default 16,
 * the first a calibration run that is not killed).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { Vault } from '../../src/core/index.js';
import { requireBuiltCli } from '../cli/helpers.js';
import { nativeSodium } from '../helpers/backends.js';
import { runAndKill, type Aim, type CliRun } from '../helpers/crash.js';
import { collect, leftBehind, passphrase, tempDir, track, writeTree } from '../helpers/vault.js';

requireBuiltCli();

const TRIALS = Number(process.env.COFFER_ROTATE_CRASH_TRIALS ?? 16);
const PAUSE_MS = 24;
const BASE = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
/** A header with one slot and one DEK, and with one more DEK (FORMAT.md 4.1). */
const OLD_HEADER = 272;
const NEW_HEADER = OLD_HEADER + 76;

/** `coffer rotate`, SIGKILLed `delayMs` after its `event`-th write event when aimed. */
function rotate(dir: string, aim?: Aim): Promise<CliRun> {
  return runAndKill(['rotate', dir], aim, PAUSE_MS);
}

describe('crash safety of key rotation (SIGKILL while the header is replaced)', () => {
  it(`leaves the old header or the new one, and a vault that verifies, across ${TRIALS} kills`, async () => {
    expect(TRIALS, 'a calibration run and killed runs before and after the rename').toBeGreaterThanOrEqual(3);
    const root = tempDir(BASE);
    const files = { 'small.txt': randomBytes(2000), 'large.bin': randomBytes(1_500_000) };
    await writeTree(join(root, 'src'), files);
    let beforeRename = { aimed: 0, landed: 0 };
    let afterRename = 0;
    for (let trial = 0; trial < TRIALS; trial++) {
      const dir = join(tempDir(BASE), 'vault');
      const created = await Vault.create(dir, passphrase(), { kdf: 'interactive', sodium: nativeSodium });
      await created.add([join(root, 'src', 'small.txt'), join(root, 'src', 'large.bin')]);
      created.close();

      const aimBefore = trial % 2 === 1;
      const run =
        trial === 0
          ? await rotate(dir)
          : await rotate(
              dir,
              aimBefore
                ? { event: 1, delayMs: randomInt(0, PAUSE_MS / 2) }
                : { event: 2, delayMs: randomInt(0, PAUSE_MS) },
            );
      if (trial === 0) {
        expect(run, 'calibration: two header writes (the header, then its backup), announced').toMatchObject({
          completed: true,
          pending: 2,
          commits: 2,
        });
      } else if (aimBefore) {
        beforeRename = {
          aimed: beforeRename.aimed + 1,
          landed: beforeRename.landed + (run.killed && run.commits === 0 ? 1 : 0),
        };
      } else if (run.killed) afterRename++;

      // Opening removes the temp header a kill before the rename left in tmp/, and nothing else is left.
      (await Vault.open(dir, { sodium: nativeSodium })).close();
      expect(leftBehind(dir), `trial ${trial}`).toEqual({ files: [], intents: 0 });
      const header = readFileSync(join(dir, 'coffer.header')).length;
      expect([OLD_HEADER, NEW_HEADER], `trial ${trial}: header length`).toContain(header);
      if (run.completed || run.commits > 0) expect(header, `trial ${trial}: renamed`).toBe(NEW_HEADER);
      if (run.pending === 0) expect(header, `trial ${trial}: not yet written`).toBe(OLD_HEADER);

      const vault = track(await Vault.open(dir, { sodium: nativeSodium }));
      expect(await vault.unlock(passphrase()), `trial ${trial}`).toEqual([]);
      const keyIds = header === NEW_HEADER ? [1, 2] : [1];
      expect((await vault.info()).keyIds, `trial ${trial}`).toEqual(keyIds);
      for (const [name, data] of Object.entries(files)) {
        expect((await collect(vault.read(`/${name}`))).equals(data), `trial ${trial}: ${name}`).toBe(true);
      }
      await writeTree(join(root, `after-${trial}`), { 'new.txt': `trial ${trial}` });
      await vault.add([join(root, `after-${trial}`, 'new.txt')]);
      const report = await vault.verify({ readData: true });
      expect(report.problems, `trial ${trial}`).toEqual([]);
      const log = vault.activityLog();
      // A log entry cut off by the kill is repaired by the unlock above, and said so; nothing else is wrong.
      expect(log.problems, `trial ${trial}`).toEqual([]);
      expect(log.entries.at(-1)?.keyId, `trial ${trial}: the newest entry's key`).toBe(keyIds.at(-1));
      vault.close();
    }
    console.info(
      `rotate crash test: ${TRIALS} trials; ${beforeRename.landed} of ${beforeRename.aimed} killed before the ` +
        `rename, ${afterRename} killed after it; every invariant held`,
    );
    expect(
      beforeRename.landed,
      'kills that landed between the temp header and the rename',
    ).toBeGreaterThanOrEqual(Math.max(1, Math.ceil(beforeRename.aimed / 2)));
  }, 300_000);
});
