/** Wrong tries allowed before the window makes the person wait. */
const FREE_TRIES = 3;
const FIRST_DELAY_MS = 5_000;
const MAX_DELAY_MS = 5 * 60_000;

/**
 * How long Unlock stays unavailable after `failures` wrong passphrases in a row: nothing for the first
 * {@link FREE_TRIES} (typos happen), then 5 s, doubling with each further failure, at most 5 minutes. It slows a
 * person guessing at an unattended, unlocked-screen computer; the real defence against offline guessing is the
 * Argon2id cost in the vault header.
 */
export function unlockDelayMs(failures: number): number {
  if (failures < FREE_TRIES) return 0;
  return Math.min(FIRST_DELAY_MS * 2 ** (failures - FREE_TRIES), MAX_DELAY_MS);
}
