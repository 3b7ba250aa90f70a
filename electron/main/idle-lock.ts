import type { LockReason } from '../../src/shared/contract.js';

/** The slice of Electron's powerMonitor the auto-lock uses (structural, so tests can drive it). */
export interface PowerMonitorLike {
  getSystemIdleTime(): number;
  /** 'locked' where the system reports a locked screen (Linux screensavers too, where Chromium can ask). */
  getSystemIdleState(idleThreshold: number): 'active' | 'idle' | 'locked' | 'unknown';
  on(event: 'suspend' | 'lock-screen', listener: () => void): unknown;
  removeListener(event: 'suspend' | 'lock-screen', listener: () => void): unknown;
}

export interface AutoLockOptions {
  readonly powerMonitor: PowerMonitorLike;
  /** The auto-lock setting in minutes; 0 = off. Read at every poll, so a change applies at once. */
  readonly autoLockMinutes: () => Promise<number>;
  readonly lockAll: (reason: LockReason) => Promise<void>;
  /** How often the idle time is read. */
  readonly pollMs?: number;
  readonly setInterval?: (callback: () => void, ms: number) => unknown;
  readonly clearInterval?: (timer: unknown) => void;
}

/**
 * Locks every vault when the system has been idle (no keyboard or mouse anywhere) for the configured minutes,
 * and at once on suspend and on screen lock. Polls the system idle time rather than watching the window, so
 * working in another program while a vault is open also counts as Coffer being unused. After an idle lock it
 * waits for the user to come back before it can lock for idleness again. Electron emits 'lock-screen' on macOS and
 * Windows only, so each poll also asks whether the screen is locked (how Linux's lock is seen, within a poll),
 * whatever the idle minutes, and locks once per screen lock. Returns a function that stops it.
 */
export function startAutoLock(options: AutoLockOptions): () => void {
  const { powerMonitor, autoLockMinutes, lockAll } = options;
  const schedule = options.setInterval ?? ((callback, ms) => setInterval(callback, ms));
  const cancel =
    options.clearInterval ??
    ((timer) => {
      clearInterval(timer as NodeJS.Timeout);
    });
  let lockedThisIdle = false;
  let lockedThisScreenLock = false;
  let polling = false;

  const poll = async (): Promise<void> => {
    if (polling) return;
    polling = true;
    try {
      const screenLocked = powerMonitor.getSystemIdleState(1) === 'locked';
      if (!screenLocked) lockedThisScreenLock = false;
      else if (!lockedThisScreenLock) {
        lockedThisScreenLock = true;
        await lockAll('screen-lock');
      }
      const minutes = await autoLockMinutes();
      const idleSeconds = powerMonitor.getSystemIdleTime();
      if (minutes <= 0 || idleSeconds < minutes * 60) {
        lockedThisIdle = false;
      } else if (!lockedThisIdle) {
        lockedThisIdle = true;
        await lockAll('idle');
      }
    } finally {
      polling = false;
    }
  };
  const onSuspend = (): void => {
    void lockAll('suspend');
  };
  const onScreenLock = (): void => {
    void lockAll('screen-lock');
  };

  powerMonitor.on('suspend', onSuspend);
  powerMonitor.on('lock-screen', onScreenLock);
  const timer = schedule(() => void poll(), options.pollMs ?? 15_000);
  return () => {
    cancel(timer);
    powerMonitor.removeListener('suspend', onSuspend);
    powerMonitor.removeListener('lock-screen', onScreenLock);
  };
}
