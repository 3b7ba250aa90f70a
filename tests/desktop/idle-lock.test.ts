import { describe, expect, it } from 'vitest';

import {
  startAutoLock,
  type AutoLockSettings,
  type PowerMonitorLike,
} from '../../electron/main/idle-lock.js';

/** A power monitor and a clock the test drives by hand: no timers, no waiting. */
function harness(minutes: number, triggers: Partial<AutoLockSettings> = {}) {
  const settings = { autoLockMinutes: minutes, lockOnSuspend: true, lockOnScreenLock: true, ...triggers };
  const listeners = new Map<string, () => void>();
  let idleSeconds = 0;
  let screenLocked = false;
  let tick: (() => void) | undefined;
  let clock = 0;
  let jobRunning = false;
  const locks: string[] = [];
  const powerMonitor: PowerMonitorLike = {
    getSystemIdleTime: () => idleSeconds,
    getSystemIdleState: () => (screenLocked ? 'locked' : 'active'),
    on: (event, listener) => listeners.set(event, listener),
    removeListener: (event) => listeners.delete(event),
  };
  const stop = startAutoLock({
    powerMonitor,
    settings: () => Promise.resolve(settings),
    lockAll: (reason) => {
      locks.push(reason);
      return Promise.resolve();
    },
    busy: () => jobRunning,
    now: () => clock,
    setInterval: (callback) => {
      tick = callback;
      return 1;
    },
    clearInterval: () => {
      tick = undefined;
    },
  });
  return {
    locks,
    listeners,
    stop,
    /** Whether a job runs at the next polls. */
    setJobRunning(running: boolean) {
      jobRunning = running;
    },
    /**
     * Sets the system idle time (and whether the screen is locked), moves the clock on as far if the user was idle
     * since the last poll, and runs one poll to its end.
     */
    async poll(seconds: number, locked = false) {
      clock += seconds >= idleSeconds ? (seconds - idleSeconds) * 1000 : seconds * 1000;
      idleSeconds = seconds;
      screenLocked = locked;
      tick?.();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

describe('auto-lock', () => {
  it('locks once when the system has been idle for the set minutes, and again only after the user came back', async () => {
    const h = harness(5);
    await h.poll(299);
    expect(h.locks).toEqual([]);
    await h.poll(300);
    await h.poll(900);
    expect(h.locks).toEqual(['idle']);
    await h.poll(2);
    await h.poll(301);
    expect(h.locks).toEqual(['idle', 'idle']);
  });

  it('does not lock for idleness while a job runs, nor until the set minutes passed after it ended', async () => {
    const h = harness(5);
    h.setJobRunning(true);
    await h.poll(200);
    await h.poll(3600);
    expect(h.locks).toEqual([]);
    h.setJobRunning(false);
    await h.poll(3600 + 299);
    expect(h.locks).toEqual([]);
    await h.poll(3600 + 300);
    expect(h.locks).toEqual(['idle']);
  });

  it('still locks at once on a screen lock while a job runs', async () => {
    const h = harness(5);
    h.setJobRunning(true);
    await h.poll(10, true);
    expect(h.locks).toEqual(['screen-lock']);
  });

  it('never locks for idleness when the setting is 0', async () => {
    const h = harness(0);
    await h.poll(1_000_000);
    expect(h.locks).toEqual([]);
  });

  it('locks at once on suspend and on screen lock, and stops listening when stopped', async () => {
    const h = harness(0);
    h.listeners.get('suspend')?.();
    h.listeners.get('lock-screen')?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(h.locks).toEqual(['suspend', 'screen-lock']);
    h.stop();
    expect(h.listeners.size).toBe(0);
  });

  it('locks once per screen lock that only a poll sees (Linux has no lock-screen event), even with idle off', async () => {
    const h = harness(0);
    await h.poll(0, true);
    await h.poll(20, true);
    expect(h.locks).toEqual(['screen-lock']);
    await h.poll(0, false);
    await h.poll(0, true);
    expect(h.locks).toEqual(['screen-lock', 'screen-lock']);
  });

  it('does not lock on suspend when that setting is off, and still on screen lock', async () => {
    const h = harness(0, { lockOnSuspend: false });
    h.listeners.get('suspend')?.();
    h.listeners.get('lock-screen')?.();
    await h.poll(0, true);
    expect(h.locks).toEqual(['screen-lock', 'screen-lock']);
  });

  it('does not lock on screen lock (the event or a poll that sees it) when that setting is off; idle still locks', async () => {
    const h = harness(5, { lockOnScreenLock: false });
    h.listeners.get('lock-screen')?.();
    await h.poll(0, true);
    await h.poll(20, true);
    expect(h.locks).toEqual([]);
    h.listeners.get('suspend')?.();
    await h.poll(300, true);
    expect(h.locks).toEqual(['suspend', 'idle']);
  });
});
