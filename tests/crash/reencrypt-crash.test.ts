/**
 * Kill -9 `coffer rotate --reencrypt` at random moments, then check that the vault opens, leaves nothing behind once
 * opened, verifies with every chunk read, gives every file's exact bytes, and that running the command again
 * finishes the job: one data key left, everything (rows, blobs, snapshot, commitment, log) under it. Aimed like
 * tests/crash/rotate-crash.test.ts from the write hook's announcements (each index transaction and each header
 * replacement, FORMAT.md 11.2): odd trials in the pause after a random announcement (inside a transaction about to
 * commit, or right after one), even ones up to 200 ms after it (while a blob or a pack is being written, between
 * steps). COFFER_REENCRYPT_CRASH_TRIALS sets the number (default 12, the first a calibration run not killed).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { Vault } from '../../src/core/index.js';
import { requireBuiltCli } from '../cli/helpers.js';
import { nativeSodium } from '../helpers/backends.js';
import { runAndKill } from '../helpers/crash.js';
import { keyIdsOnDisk, otherKeyIdsOnDisk } from '../helpers/key-ids.js';
import { collect, leftBehind, passphrase, tempDir, track, writeTree } from '../helpers/vault.js';

requireBuiltCli();

const TRIALS = Number(process.env.COFFER_REENCRYPT_CRASH_TRIALS ?? 12);
const PAUSE_MS = 24;
const BASE = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

/** Two large files and 60 small ones of 100 KB (two packs' worth of re-encryption batches). */
function sampleFiles(): Record<string, Buffer> {
  const files: Record<string, Buffer> = {
    'big-1.bin': randomBytes(1_600_000),
    'big-2.bin': randomBytes(2_100_000),
  };
  for (let i = 0; i < 60; i++) files[`small/s${i}.bin`] = randomBytes(100_000 + i);
  return files;
}

async function expectBytes(vault: Vault, files: Record<string, Buffer>, trial: number): Promise<void> {
  for (const [name, data] of Object.entries(files)) {
    expect((await collect(vault.read(`/src/${name}`))).equals(data), `trial ${trial}: ${name}`).toBe(true);
  }
}

describe('crash safety of re-encryption (SIGKILL at random moments of rotate --reencrypt)', () => {
  it(`leaves a vault that opens, verifies and reads, and that a second run finishes, across ${TRIALS} kills`, async () => {
    expect(TRIALS, 'a calibration run and killed runs').toBeGreaterThanOrEqual(3);
    const root = tempDir(BASE);
    const files = sampleFiles();
    await writeTree(join(root, 'src'), files);
    let events = 0;
    let killed = 0;
    let killedMidway = 0;
    for (let trial = 0; trial < TRIALS; trial++) {
      const dir = join(tempDir(BASE), 'vault');
      const created = await Vault.create(dir, passphrase(), { kdf: 'interactive', sodium: nativeSodium });
      await created.add([join(root, 'src')]);
      created.close();

      const run =
        trial === 0
          ? await runAndKill(['rotate', dir, '--reencrypt'], undefined, PAUSE_MS)
          : await runAndKill(
              ['rotate', dir, '--reencrypt'],
              {
                event: randomInt(1, events + 1),
                delayMs: trial % 2 === 1 ? randomInt(0, PAUSE_MS) : randomInt(0, 200),
              },
              PAUSE_MS,
            );
      if (trial === 0) {
        expect(run.completed, 'calibration').toBe(true);
        events = run.pending + run.commits;
        // Rotation (header and backup), at least three batches, the commitment, then the header again.
        expect(events, 'calibration: announced writes').toBeGreaterThanOrEqual(12);
      } else if (run.killed) {
        killed++;
        if (run.commits > 2 && !run.completed) killedMidway++;
      }

      // Opening removes what the kill left (temp files, new blobs no row names, old ones no row names any more).
      (await Vault.open(dir, { sodium: nativeSodium })).close();
      expect(leftBehind(dir), `trial ${trial}`).toEqual({ files: [], intents: 0 });
      const vault = track(await Vault.open(dir, { sodium: nativeSodium }));
      expect(await vault.unlock(passphrase()), `trial ${trial}`).toEqual([]);
      await expectBytes(vault, files, trial);
      expect((await vault.verify({ readData: true })).problems, `trial ${trial}`).toEqual([]);
      const keysAfterKill = (await vault.info()).keyIds ?? [];
      vault.close();

      // Running it again finishes the job (or, after a run that had finished, rotates and re-encrypts again).
      const again = await runAndKill(['rotate', dir, '--reencrypt'], undefined, 0);
      expect(again.completed, `trial ${trial}`).toBe(true);
      const finalKey = keysAfterKill.length === 1 && keysAfterKill[0] === 2 ? 3 : 2;
      const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
      expect(await reopened.unlock(passphrase()), `trial ${trial}`).toEqual([]);
      expect((await reopened.info()).keyIds, `trial ${trial}`).toEqual([finalKey]);
      await expectBytes(reopened, files, trial);
      expect((await reopened.verify({ readData: true })).problems, `trial ${trial}`).toEqual([]);
      expect(reopened.activityLog().problems, `trial ${trial}`).toEqual([]);
      reopened.close();
      const onDisk = keyIdsOnDisk(dir);
      expect(new Set([...onDisk.records, ...onDisk.blobs]), `trial ${trial}`).toEqual(new Set([finalKey]));
      expect(otherKeyIdsOnDisk(dir), `trial ${trial}`).toEqual({
        headerDeks: 1,
        backupDeks: 1,
        snapshot: finalKey,
        commitment: finalKey,
        log: [finalKey],
      });
    }
    console.info(
      `re-encrypt crash test: ${TRIALS} trials, ${events} announced writes per run; ${killed} killed, ` +
        `${killedMidway} of them after some batches committed; every invariant held`,
    );
    expect(killed, 'kills that landed before the run ended').toBeGreaterThanOrEqual(
      Math.ceil((TRIALS - 1) / 2),
    );
    expect(killedMidway, 'kills between batches').toBeGreaterThanOrEqual(1);
  }, 600_000);
});
