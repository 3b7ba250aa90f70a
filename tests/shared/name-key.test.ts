import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';

import { nameKey } from '../../src/shared/name-key.js';

describe('nameKey', () => {
  it.for<[string, string]>([
    ['Report.PDF', 'report.pdf'],
    ['README', 'readme'],
    ['R\u00e9sum\u00e9.txt', 'Re\u0301sume\u0301.TXT'],
    ['\u00c5', '\u212b'],
    ['Kelvin', '\u212aelvin'],
    ['ΟΔΟΣ', 'οδος'],
    ['οδος', 'οδοσ'],
    ['\u00b5s', '\u03bcS'],
    ['STRAẞE', 'straße'],
    ['ÉCOLE', 'e\u0301cole'],
  ])('%j and %j collide', ([a, b]) => {
    expect(nameKey(a)).toBe(nameKey(b));
  });

  it.for<[string, string]>([
    ['a', 'b'],
    ['report.pdf', 'report.pdf '],
    ['e\u0301', 'e'],
    ['file1', 'file01'],
  ])('%j and %j stay distinct', ([a, b]) => {
    expect(nameKey(a)).not.toBe(nameKey(b));
  });

  it('keys plain ASCII by its lowercase', () => {
    expect(nameKey('Photos 2024.ZIP')).toBe('photos 2024.zip');
  });

  test.prop([fc.string({ unit: 'grapheme', maxLength: 20 })], { numRuns: 2000 })(
    'equates at least every pair that lowercasing equates',
    (name) => {
      expect(nameKey(name.toLowerCase())).toBe(nameKey(name));
      expect(nameKey(name.normalize('NFD'))).toBe(nameKey(name));
    },
  );
});
