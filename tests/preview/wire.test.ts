/** The preview's JSON with bytes: what the server encodes, the page decodes to the same values. */
import { describe, expect, it } from 'vitest';

import { decodeWire, encodeWire } from '../../src/preview/wire.js';

describe('the preview wire format', () => {
  it('carries bytes, nested anywhere, back as Uint8Arrays', () => {
    const value = {
      ok: true,
      value: { name: 'a.png', head: new Uint8Array([0, 1, 254, 255]), parts: [new Uint8Array(0)] },
    };
    const decoded = decodeWire(encodeWire(value)) as typeof value;
    expect(decoded.value.head).toBeInstanceOf(Uint8Array);
    expect([...decoded.value.head]).toEqual([0, 1, 254, 255]);
    expect(decoded.value.parts[0]).toBeInstanceOf(Uint8Array);
    expect(decoded.value.name).toBe('a.png');
  });

  it('leaves names and objects that only look like bytes as they are', () => {
    const value = {
      entries: [
        { name: '$bytes', path: '/"$bytes"' },
        { $bytes: 'AAEC', size: 3 },
      ],
    };
    expect(decodeWire(encodeWire(value))).toEqual(value);
  });

  it('decodes a message without bytes, a large listing among them, to the same values', () => {
    const entries = Array.from({ length: 10_000 }, (_, i) => ({
      path: `/big/entry-${i}.txt`,
      name: `entry-${i}.txt`,
      type: 'file',
      size: i,
      mtime: 1_764_208_000_000.5 + i,
    }));
    expect(decodeWire(encodeWire({ ok: true, value: entries }))).toEqual({ ok: true, value: entries });
  });
});
