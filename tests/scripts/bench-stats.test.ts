import { describe, expect, it } from 'vitest';

import { median } from '../../scripts/bench-stats.js';

describe("the benches' median", () => {
  it('is the middle run of an odd count, whatever the order', () => {
    expect(median([0.9, 0.27, 0.3])).toBe(0.3);
  });

  it('is the mean of the two middle runs of an even count', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('is not a number when there was no run', () => {
    expect(median([])).toBeNaN();
  });
});
