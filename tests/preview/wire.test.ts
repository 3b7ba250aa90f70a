/** The preview's JSON with bytes: what the server encodes, the page decodes to the same values. */
import { fc, test as fcTest } from '@fast-check/vitest';
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

  it('sends a long listing with its keys said once, a third shorter, and leaves what it encodes unchanged', () => {
    const entries = Array.from({ length: 1000 }, (_, i) => ({
      path: `/Photos/IMG_${i}.jpg`,
      name: `IMG_${i}.jpg`,
      type: 'file',
      size: i * 1000,
      mtime: 1_764_208_000_000 + i,
    }));
    const message = { reply: 1, result: { ok: true, value: entries }, head: new Uint8Array([1, 2]) };
    const before = structuredClone(message);
    const text = encodeWire(message);
    expect(text.split('"mtime"')).toHaveLength(2);
    expect(text.length).toBeLessThan(JSON.stringify(message).length * 0.67);
    expect(decodeWire(text)).toEqual(message);
    expect(message).toEqual(before);
    expect(message.head).toBeInstanceOf(Uint8Array);
  });

  const scalar = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null));
  const record = fc.oneof(
    fc.record({ name: scalar, size: scalar, kind: scalar }, { requiredKeys: ['name'] }),
    fc.record({ size: scalar, name: scalar, kind: scalar }),
    fc.record({ name: scalar, head: fc.uint8Array({ maxLength: 4 }) }),
    fc.record({ name: scalar, inner: fc.record({ a: scalar }) }),
  );
  const records = fc.oneof(
    fc.array(record, { maxLength: 150 }),
    fc.array(fc.record({ name: scalar, size: scalar, kind: scalar }), { minLength: 60, maxLength: 120 }),
  );
  fcTest.prop([records, fc.array(fc.array(scalar), { maxLength: 3 })])(
    'decodes any array of records to the same values, packed or not',
    (records, other) => {
      const message = { reply: 2, result: { ok: true, value: { records, other } } };
      const decoded = decodeWire(encodeWire(message));
      // What JSON would carry (NaN as null, -0 as 0), in the same key order, with bytes as bytes.
      expect(JSON.stringify(decoded)).toBe(JSON.stringify(message));
      const heads = (value: unknown): unknown[] =>
        (value as typeof message).result.value.records.flatMap((each) => ('head' in each ? [each.head] : []));
      for (const head of heads(decoded)) expect(head).toBeInstanceOf(Uint8Array);
    },
  );

  it('packs no key that would set a prototype, and leaves objects that only look packed as they are', () => {
    const odd = Array.from({ length: 100 }, () => JSON.parse('{"__proto__": 1, "b": 2}') as object);
    const decodedOdd = decodeWire(encodeWire(odd)) as object[];
    expect(decodedOdd).toEqual(odd);
    expect(Object.getPrototypeOf(decodedOdd[0])).toBe(Object.prototype);
    const lookalikes = [
      { $rows: ['a'], values: [1, 2], more: 3 },
      { $rows: [], values: [] },
      { $rows: ['a', 'b'], values: [1, 2, 3] },
      { $rows: ['__proto__'], values: [1] },
      { $rows: ['a'], values: [{ b: 1 }] },
      { $rows: [1], values: [1] },
      { $rows: ['a'], values: [] },
      { $rows: ['name'], values: ['a', 'b'] },
    ];
    expect(decodeWire(JSON.stringify({ lookalikes }))).toEqual({ lookalikes });
  });

  it('writes what JSON.stringify would for objects with toJSON, bytes inside them included', () => {
    class Hidden {
      readonly secret = 's';
      readonly bytes = new Uint8Array([1]);
      toJSON(): unknown {
        return { only: 'this', head: new Uint8Array([9]) };
      }
    }
    const when = new Date(1_764_208_000_000);
    const decoded = decodeWire(encodeWire({ hidden: new Hidden(), when })) as {
      hidden: { only: string; head: Uint8Array };
      when: string;
    };
    expect(decoded).toEqual({ hidden: { only: 'this', head: new Uint8Array([9]) }, when: when.toJSON() });
    expect(decoded.hidden.head).toBeInstanceOf(Uint8Array);
  });
});
