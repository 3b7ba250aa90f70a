/**
 * The passphrase estimator with its dictionaries (about 1.5 MB of word lists). Only ever loaded with a dynamic
 * import from the create form, so the start screen's first paint does not wait for it.
 */
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import { adjacencyGraphs, dictionary as commonWords } from '@zxcvbn-ts/language-common';
import { dictionary as englishWords, translations } from '@zxcvbn-ts/language-en';

export interface Strength {
  /** 0 (guessed at once) to 4 (very hard to guess), zxcvbn's scale. */
  readonly score: 0 | 1 | 2 | 3 | 4;
  /** What is wrong with it, when something is. */
  readonly warning: string | null;
  readonly suggestions: readonly string[];
}

const estimator = new ZxcvbnFactory({
  // zxcvbn's words for a passphrase holding the vault's name are a web form's; these say it for this window.
  translations: {
    ...translations,
    warnings: { ...translations.warnings, userInputs: 'Avoid the vault’s name and words about you.' },
  },
  graphs: adjacencyGraphs,
  dictionary: { ...commonWords, ...englishWords },
});

/** How hard the passphrase is to guess; `userInputs` (the vault's name) count as known to an attacker. */
export function measureStrength(passphrase: string, userInputs: readonly string[]): Strength {
  const result = estimator.check(passphrase, [...userInputs]);
  return {
    score: result.score,
    warning: result.feedback.warning,
    suggestions: result.feedback.suggestions,
  };
}
