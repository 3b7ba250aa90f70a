import type { LockReason, Settings } from '../../src/shared/contract.js';

/** The settings the auto-lock follows. */
export type AutoLockSettings = Pick<Settings, 'autoLockMinutes' | 'lockOnSuspend' | 'lockOnScreenLock'>;

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
  /**
   * The auto-lock settings (minutes, 0 = off; whether suspend and screen lock lock). Read at every poll and every
   * suspend or screen lock, so a change applies at once.
   */
  readonly settings: () => Promise<AutoLockSettings>;
  readonly lockAll: (reason: LockReason) => Promise<void>;
  /** Whether a job runs (the back end's jobsRunning): the idle minutes count from when none did, if later. */
  readonly busy: () => boolean;
  /** How often the idle time is read. */
  readonly pollMs?: number;
  readonly setInterval?: (callback: () => void, ms: number) => unknown;
  readonly clearInterval?: (timer: unknown) => void;
  /** The clock the time since the last job is measured by. */
  readonly now?: () => number;
}

/**
 * Locks every vault when the system has been idle (no keyboard or mouse anywhere) for the configured minutes, and
 * no job ran in that time (someone waiting for a long add is not away, and the lock would stop it), and at once on
 * suspend and on screen lock (each where its setting is on). Polls the system idle time rather than watching the window, so
 * working in another program while a vault is open also counts as Coffer being unused. After an idle lock it
 * waits for the user to come back before it can lock for idleness again. Electron emits 'lock-screen' on macOS and
 * Windows only, so each poll also asks whether the screen is locked (how Linux's lock is seen, within a poll),
 * whatever the idle minutes, and locks once per screen lock. Returns a function that stops it.
 */
export function startAutoLock(options: AutoLockOptions): () => void {
  const { powerMonitor, settings, lockAll, busy } = options;
  const now = options.now ?? Date.now;
  let lastBusyAt = -Infinity;
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
      const { autoLockMinutes: minutes, lockOnScreenLock } = await settings();
      const screenLocked = powerMonitor.getSystemIdleState(1) === 'locked';
      if (!screenLocked) lockedThisScreenLock = false;
      else if (!lockedThisScreenLock && lockOnScreenLock) {
        lockedThisScreenLock = true;
        await lockAll('screen-lock');
      }
      if (busy()) lastBusyAt = now();
      const idleSeconds = Math.min(powerMonitor.getSystemIdleTime(), (now() - lastBusyAt) / 1000);
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
    void settings().then((current) => (current.lockOnSuspend ? lockAll('suspend') : undefined));
  };
  const onScreenLock = (): void => {
    void settings().then((current) => (current.lockOnScreenLock ? lockAll('screen-lock') : undefined));
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
