import { useEffect, useState } from 'react';

import type { Strength } from '../strength.js';

type Measure = (passphrase: string, userInputs: readonly string[]) => Strength;

const SCORE_WORDS = ['Very weak', 'Weak', 'Fair', 'Strong', 'Very strong'] as const;

/**
 * How hard the passphrase is to guess, as a meter and in words, with zxcvbn's advice. The estimator and its word
 * lists load in the background when the form opens; until then the meter says so.
 */
export function PassphraseStrength({
  id,
  passphrase,
  userInputs,
  onScore,
}: {
  id: string;
  passphrase: string;
  userInputs: readonly string[];
  /** Hears the score (zxcvbn's 0–4) whenever it changes; null while there is none (nothing typed, no estimator). */
  onScore?: ((score: Strength['score'] | null) => void) | undefined;
}) {
  const [measure, setMeasure] = useState<Measure | null>(null);
  const [loadFailed, setLoadFailed] = useState(false);

  useEffect(() => {
    let live = true;
    import('../strength.js').then(
      (module) => {
        if (live) setMeasure(() => module.measureStrength);
      },
      () => {
        if (live) setLoadFailed(true);
      },
    );
    return () => {
      live = false;
    };
  }, []);

  const strength = measure === null || passphrase === '' ? null : measure(passphrase, userInputs);
  const score = strength?.score ?? null;
  useEffect(() => {
    onScore?.(score);
  }, [onScore, score]);

  if (loadFailed)
    return (
      <p id={id} className="strength hint muted steady-hint">
        The strength check could not load. Prefer four or more unrelated words.
      </p>
    );
  if (measure === null)
    return (
      <p id={id} className="strength hint muted steady-hint">
        Loading the strength check…
      </p>
    );
  if (strength === null)
    return (
      <p id={id} className="strength hint muted steady-hint">
        Four or more unrelated words make a strong passphrase that is easy to type.
      </p>
    );

  const advice = [strength.warning, ...strength.suggestions].filter((line): line is string => !!line);
  return (
    <div id={id} className="strength" data-score={strength.score}>
      <div className="strength-row">
        <meter
          className="strength-meter"
          min={0}
          max={4}
          low={2}
          high={3}
          optimum={4}
          value={strength.score}
          aria-label="Passphrase strength"
        />
        <span className="strength-word">{SCORE_WORDS[strength.score]}</span>
      </div>
      {advice.length > 0 && <p className="hint muted">{advice.join(' ')}</p>}
    </div>
  );
}
