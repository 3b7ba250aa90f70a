/** The typed-array duplicate search an unlock runs over a snapshot's record ids and names (find-duplicate.ts). */
import { randomBytes } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { nameKey } from '../../src/shared/name-key.js';
import { hasDuplicate, hashId, hashNameKey } from '../../src/core/vault/find-duplicate.js';

const sameIn =
  (items: readonly string[]) =>
  (a: number, b: number): boolean =>
    items[a] === items[b];

describe('hasDuplicate', () => {
  it('finds two equal items among many, and none among distinct ones', () => {
    const items = Array.from({ length: 5000 }, (_, i) => `item ${i}`);
    const hash = (i: number) => hashNameKey(0, items[i] as string);
    expect(hasDuplicate(items.length, hash, sameIn(items))).toBe(false);
    items[4321] = 'item 17';
    expect(hasDuplicate(items.length, hash, sameIn(items))).toBe(true);
  });

  it('tells items apart whose hashes all collide', () => {
    const items = ['a', 'b', 'c', 'd', 'e', 'f'];
    expect(hasDuplicate(items.length, () => 7, sameIn(items))).toBe(false);
    expect(hasDuplicate(items.length + 1, () => 7, sameIn([...items, 'c']))).toBe(true);
  });

  it('handles no items and one', () => {
    expect(
      hasDuplicate(
        0,
        () => 0,
        () => true,
      ),
    ).toBe(false);
    expect(
      hasDuplicate(
        1,
        () => 0,
        () => true,
      ),
    ).toBe(false);
  });
});

describe('hashNameKey', () => {
  it('hashes names that clash in a folder alike: case, normalisation, and letters that fold to ASCII', () => {
    const clashing: [string, string][] = [
      ['Report.PDF', 'report.pdf'],
      ['Caf\u00e9', 'CAFE\u0301'],
      ['\u212a.txt', 'k.txt'], // KELVIN SIGN folds to k
      ['\u03bf\u03b4\u03bf\u03c2', '\u039f\u0394\u039f\u03a3'],
    ];
    for (const [a, b] of clashing) {
      expect(nameKey(a)).toBe(nameKey(b));
      expect(hashNameKey(3, a)).toBe(hashNameKey(3, b));
    }
  });

  it('cannot be steered by chosen names, in any folder (the first folder once hashed from a known start)', () => {
    // The hash with a known start: FNV-1a from 0, then murmur3's finaliser, as every folder at position 0 had.
    const known = (text: string): number => {
      let h = 0;
      for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
      h ^= h >>> 16;
      h = Math.imul(h, 0x85ebca6b);
      h ^= h >>> 13;
      h = Math.imul(h, 0xc2b2ae35);
      return h ^ (h >>> 16);
    };
    const mask = 4095;
    // Names that all fall in 16 of 4,096 slots under the known start.
    const chosen: string[] = [];
    for (let i = 0; chosen.length < 2000; i++) if ((known(`f${i}`) & mask) < 16) chosen.push(`f${i}`);
    for (const parent of [0, 1, 0xffffffff]) {
      const slots = new Set(chosen.map((name) => hashNameKey(parent, name) & mask));
      expect(slots.size).toBeGreaterThan(1000);
    }
  });

  it('depends on the folder', () => {
    const folders = new Set(Array.from({ length: 50 }, (_, parent) => hashNameKey(parent, 'a.txt')));
    expect(folders.size).toBe(50);
  });
});

describe('hashId', () => {
  it('reads the 16 bytes at an offset', () => {
    const id = randomBytes(16);
    const shifted = Buffer.concat([randomBytes(5), id]);
    const view = (bytes: Buffer): DataView => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    expect(hashId(view(shifted), 5)).toBe(hashId(view(id), 0));
    const other = Buffer.from(id);
    other[15] = (other[15] as number) ^ 1;
    expect(hashId(view(other), 0)).not.toBe(hashId(view(id), 0));
  });
});
