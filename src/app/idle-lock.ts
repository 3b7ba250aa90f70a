/**
 * Locks every vault after a stretch without use. The preview server counts its API requests as use; Electron's
 * main process may use the system's idle time (powerMonitor) instead and call lockAll('idle') itself. A running
 * job counts as use too: someone waiting for a long add to finish is not away, and the lock would stop it.
 */
export class IdleLock {
  readonly #minutes: () => Promise<number>;
  readonly #lock: () => Promise<void>;
  readonly #busy: () => boolean;
  readonly #now: () => number;
  #lastUse: number;
  #locked = false;

  /**
   * @param minutes - The auto-lock setting, read at each check (0 = never).
   * @param lock - Locks every vault (the back end's lockAll('idle')).
   * @param busy - Whether a job runs (the back end's jobsRunning): the idle stretch starts when none does.
   */
  constructor(options: {
    minutes: () => Promise<number>;
    lock: () => Promise<void>;
    busy: () => boolean;
    now?: () => number;
  }) {
    this.#minutes = options.minutes;
    this.#lock = options.lock;
    this.#busy = options.busy;
    this.#now = options.now ?? Date.now;
    this.#lastUse = this.#now();
  }

  /** Counts as use: the idle stretch starts again. */
  touch(): void {
    this.#lastUse = this.#now();
    this.#locked = false;
  }

  /** Locks if the idle stretch is longer than the setting; once per stretch. Returns whether it locked. */
  async check(): Promise<boolean> {
    if (this.#busy()) this.touch();
    const minutes = await this.#minutes();
    if (this.#locked || minutes <= 0 || this.#now() - this.#lastUse < minutes * 60_000) return false;
    this.#locked = true;
    await this.#lock();
    return true;
  }
}
