import { describe, expect, it } from 'vitest';

import { unlockDelayMs } from '../../src/shared/unlock-delay.js';

describe('the wait after wrong passphrases', () => {
  it('no wait after the first two wrong tries, 5 s after the third, doubling with each further failure up to 5 minutes', () => {
    expect([0, 1, 2].map(unlockDelayMs)).toEqual([0, 0, 0]);
    expect([3, 4, 5, 6].map(unlockDelayMs)).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(unlockDelayMs(9)).toBe(300_000);
    expect(unlockDelayMs(50)).toBe(300_000);
  });
});
