import { describe, expect, it } from 'vitest';

import { estimateKdf } from '../../src/app/kdf-estimate.js';
import { nativeSodium } from '../helpers/backends.js';
import { newApp } from './helpers.js';

describe('the KDF estimate shown on the create form', () => {
  it('scales the faster of two timed cheapest derivations by each preset’s memory × passes', async () => {
    // A cold first run of 400 ms, then 100 ms.
    const clock = [1000, 1400, 2000, 2100];
    const estimate = await estimateKdf(nativeSodium, () => clock.shift() ?? 0);
    // interactive: 2 passes × 64 MiB measured at 100 ms; moderate 4 × 256 MiB = 8×; sensitive 4 × 1 GiB = 32×.
    expect(estimate).toEqual({ interactive: 100, moderate: 800, sensitive: 3200 });
  });

  it('answers app.kdfEstimate with a positive time per preset, the costlier presets slower, measured once', async () => {
    const app = await newApp();
    const first = await app.call('app.kdfEstimate', {});
    expect(first.interactive).toBeGreaterThan(0);
    expect(first.moderate).toBeGreaterThan(first.interactive);
    expect(first.sensitive).toBeGreaterThan(first.moderate);
    expect(await app.call('app.kdfEstimate', {})).toEqual(first);
  });
});
