import { describe, expect, it } from 'vitest';

import { IdleLock } from '../../src/app/idle-lock.js';

describe('idle auto-lock', () => {
  it('locks once after the set minutes without use, not before, not when off, and again after new use', async () => {
    let now = 0;
    let minutes = 10;
    let locks = 0;
    const idle = new IdleLock({
      minutes: () => Promise.resolve(minutes),
      lock: () => {
        locks++;
        return Promise.resolve();
      },
      busy: () => false,
      now: () => now,
    });
    now = 9 * 60_000;
    expect(await idle.check()).toBe(false);
    idle.touch();
    now += 10 * 60_000 - 1;
    expect(await idle.check()).toBe(false);
    now += 1;
    expect(await idle.check()).toBe(true);
    expect(await idle.check()).toBe(false);
    expect(locks).toBe(1);
    idle.touch();
    minutes = 0;
    now += 1000 * 60_000;
    expect(await idle.check()).toBe(false);
    minutes = 5;
    expect(await idle.check()).toBe(true);
    expect(locks).toBe(2);
  });

  it('does not lock while a job runs: the minutes count from the first check that finds none', async () => {
    let now = 0;
    let running = true;
    let locks = 0;
    const idle = new IdleLock({
      minutes: () => Promise.resolve(10),
      lock: () => {
        locks++;
        return Promise.resolve();
      },
      busy: () => running,
      now: () => now,
    });
    now = 60 * 60_000;
    expect(await idle.check()).toBe(false);
    running = false;
    now += 10 * 60_000 - 1;
    expect(await idle.check()).toBe(false);
    now += 1;
    expect(await idle.check()).toBe(true);
    expect(locks).toBe(1);
  });
});
