import { useState } from 'react';

/** zxcvbn's scores of 0 and 1: guessed within about a million tries, few enough for an offline attack. */
const WEAK_SCORE = 1;

/**
 * The ask before a new passphrase that is easy to guess is kept: told once, then kept if the person presses the
 * form's button again with the same passphrase. Nothing is asked while the strength is unknown (the estimator still
 * loading, or failed to load): the meter then says nothing either.
 */
export function useWeakPassphraseAsk(): {
  /** For the strength meter: how hard the passphrase is to guess (0–4; null while unknown). */
  onScore: (score: number | null) => void;
  /**
   * The words to show instead of going on, when `passphrase` is weak and the person was not yet told about it;
   * null when it may be used. `button` is the label of the button that sends the form.
   */
  ask: (passphrase: string, button: string) => string | null;
} {
  const [score, setScore] = useState<number | null>(null);
  const [weakKept, setWeakKept] = useState<string | null>(null);
  return {
    onScore: setScore,
    ask: (passphrase, button) => {
      if (score === null || score > WEAK_SCORE || weakKept === passphrase) return null;
      setWeakKept(passphrase);
      return (
        'This passphrase is easy to guess: anyone with a copy of the vault folder can try guesses offline, as ' +
        `fast as their computer allows. Add more words, or press “${button}” again to use it anyway.`
      );
    },
  };
}
