import { describe, expect, it } from 'vitest';

import { GuessPacer } from '../../src/app/guess-pacer.js';
import { InvalidArgumentError, WrongPassphraseError } from '../../src/core/errors.js';
import { codeOf, newApp, newVaultIn, PASSPHRASE } from './helpers.js';

/** A clock the test moves, and a sleep that records how long it was asked to wait and moves the clock that far. */
function fakeTime(): { now: () => number; sleep: (ms: number) => Promise<void>; waits: number[] } {
  let time = 1_000_000;
  const waits: number[] = [];
  return {
    now: () => time,
    sleep: (ms) => {
      waits.push(ms);
      time += ms;
      return Promise.resolve();
    },
    waits,
  };
}

const wrong = (): Promise<never> => Promise.reject(new WrongPassphraseError('passphrase'));

describe('pacing guesses in the back end', () => {
  it('lets three wrong tries through at once, then holds each next try as long as the window does', async () => {
    const time = fakeTime();
    const pacer = new GuessPacer(time);
    for (let i = 0; i < 5; i++) await expect(pacer.attempt('v', wrong)).rejects.toThrow(WrongPassphraseError);
    expect(time.waits).toEqual([5_000, 10_000]);
    // Other vaults are not held; other failures (a typo in a recovery key) are not wrong guesses.
    await expect(pacer.attempt('other', wrong)).rejects.toThrow(WrongPassphraseError);
    await expect(pacer.attempt('v', () => Promise.reject(new InvalidArgumentError('typo')))).rejects.toThrow(
      'typo',
    );
    expect(time.waits).toEqual([5_000, 10_000, 20_000]);
    // The right one starts the count again.
    expect(await pacer.attempt('v', () => Promise.resolve('open'))).toBe('open');
    for (let i = 0; i < 3; i++) await expect(pacer.attempt('v', wrong)).rejects.toThrow(WrongPassphraseError);
    expect(time.waits).toEqual([5_000, 10_000, 20_000]);
  });

  it('runs tries sent side by side one at a time, each after the wait the one before earned', async () => {
    const time = fakeTime();
    const pacer = new GuessPacer(time);
    const started: number[] = [];
    const tries = Array.from({ length: 5 }, (_, i) =>
      pacer.attempt('v', () => {
        started.push(i);
        expect(started).toHaveLength(i + 1); // the try before has ended
        return wrong();
      }),
    );
    for (const attempt of tries) await expect(attempt).rejects.toThrow(WrongPassphraseError);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(time.waits).toEqual([5_000, 10_000]);
  });

  it('holds unlocks and the Security page’s checks of the current passphrase to one pace per vault', async () => {
    const time = fakeTime();
    const app = await newApp(time);
    const { vaultId } = await newVaultIn(app);
    const change = (current: string) =>
      app.raw('security.changePassphrase', { vaultId, current, passphrase: 'new one', kdf: 'interactive' });
    for (let i = 0; i < 3; i++) expect(codeOf(await change(`wrong ${i}`))).toBe('WRONG_PASSPHRASE');
    expect(time.waits).toEqual([]);
    await app.call('vault.lock', { vaultId });
    expect(codeOf(await app.raw('vault.unlock', { vaultId, passphrase: 'wrong again' }))).toBe(
      'WRONG_PASSPHRASE',
    );
    expect(time.waits).toEqual([5_000]);
    expect(codeOf(await app.raw('vault.unlock', { vaultId, passphrase: PASSPHRASE }))).toBe('ok');
    expect(time.waits).toEqual([5_000, 10_000]);
  });
});
