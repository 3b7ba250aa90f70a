import { describe, expect, it } from 'vitest';

import { pooledRandom } from '../../src/core/crypto/sodium.js';
import { backends } from '../helpers/backends.js';

const BLOCK = 64 * 1024;

describe('randomBytes', () => {
  it.each(backends.map((sodium) => [sodium.name, sodium] as const))(
    '%s: each result owns exactly its own memory, shared with no other draw',
    (_name, sodium) => {
      const first = sodium.randomBytes(24);
      const key = sodium.randomBytes(32);
      for (const drawn of [first, key]) {
        expect(drawn.byteOffset).toBe(0);
        expect(drawn.buffer.byteLength).toBe(drawn.byteLength);
      }
      expect(first.buffer).not.toBe(key.buffer);
    },
  );

  it('zeroes what it hands out in its block, so a key drawn from it leaves no copy there', () => {
    const blocks: Buffer[] = [];
    const draw = pooledRandom((buffer) => {
      buffer.fill(0xa5);
      blocks.push(buffer);
    });
    const key = draw(32);
    expect(key.equals(Buffer.alloc(32, 0xa5))).toBe(true);
    const [block] = blocks;
    expect(block?.subarray(0, 32).every((byte) => byte === 0)).toBe(true);
    expect(block?.subarray(32).every((byte) => byte === 0xa5)).toBe(true);
  });

  it('never hands out the zeros of a block whose refill failed', () => {
    let failNext = false;
    const draw = pooledRandom((buffer) => {
      if (failNext) throw new Error('the system CSPRNG failed');
      buffer.fill(0x5a);
    });
    // 16 bytes left in the block: a 32-byte draw needs a refill, a 16-byte one does not.
    for (let drawn = 0; drawn < BLOCK - 16; drawn += 16) draw(16);
    failNext = true;
    expect(() => draw(32)).toThrow('the system CSPRNG failed');
    expect(draw(16).equals(Buffer.alloc(16, 0x5a))).toBe(true);
    expect(() => draw(16)).toThrow('the system CSPRNG failed');
    failNext = false;
    expect(draw(16).equals(Buffer.alloc(16, 0x5a))).toBe(true);
  });

  it('fails on the first draw when the first fill fails, rather than hand out zeros', () => {
    let fail = true;
    const draw = pooledRandom((buffer) => {
      if (fail) throw new Error('the system CSPRNG failed');
      buffer.fill(1);
    });
    expect(() => draw(16)).toThrow('the system CSPRNG failed');
    fail = false;
    expect(draw(16).equals(Buffer.alloc(16, 1))).toBe(true);
  });
});
