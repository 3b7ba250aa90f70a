import { WrongPassphraseError } from '../core/errors.js';
import { unlockDelayMs } from '../shared/unlock-delay.js';

interface Pace {
  failures: number;
  /** No attempt starts before this time (ms since the epoch). */
  notBefore: number;
  /** The attempt in progress (or the last one): the next waits for it. */
  turn: Promise<unknown>;
}

/**
 * Paces passphrase and recovery-key attempts per vault in the back end, on the window's own schedule
 * ({@link unlockDelayMs}): attempts run one at a time, and after wrong ones the next waits out the delay. The window
 * already waits before it lets a person try again, so it never waits here; a renderer that skips its wait (or sends
 * attempts side by side) is held to the same pace. Argon2id remains the real cost of a guess.
 */
export class GuessPacer {
  readonly #paces = new Map<string, Pace>();
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(options: { now?: () => number; sleep?: (ms: number) => Promise<void> } = {}) {
    this.#now = options.now ?? Date.now;
    this.#sleep =
      options.sleep ??
      ((ms) =>
        new Promise((resolve) => {
          setTimeout(resolve, ms);
        }));
  }

  /**
   * Runs `attempt` in its turn for `vaultId`, after any wait earned by wrong ones before it. A
   * {@link WrongPassphraseError} from it counts as a wrong attempt; success starts the count again.
   * @throws whatever `attempt` throws.
   */
  attempt<T>(vaultId: string, attempt: () => Promise<T>): Promise<T> {
    const pace = this.#paces.get(vaultId) ?? { failures: 0, notBefore: 0, turn: Promise.resolve() };
    this.#paces.set(vaultId, pace);
    const run = async (): Promise<T> => {
      const wait = pace.notBefore - this.#now();
      if (wait > 0) await this.#sleep(wait);
      try {
        const result = await attempt();
        pace.failures = 0;
        pace.notBefore = 0;
        return result;
      } catch (error) {
        if (error instanceof WrongPassphraseError) {
          pace.failures += 1;
          pace.notBefore = this.#now() + unlockDelayMs(pace.failures);
        }
        throw error;
      }
    };
    const result = pace.turn.then(run, run);
    pace.turn = result.catch(() => undefined);
    return result;
  }
}
