import { describe, expect, it } from 'vitest';

import { receiveDroppedFiles } from '../../src/app/dropped.js';

/** A stream whose pieces the test hands over one at a time, and may end early. */
function controlledStream(): {
  bytes: AsyncIterable<Uint8Array>;
  send: (text: string) => void;
  end: () => void;
} {
  const queue: (Uint8Array | null)[] = [];
  let wake: (() => void) | undefined;
  const notify = (): void => {
    wake?.();
    wake = undefined;
  };
  return {
    bytes: (async function* stream(): AsyncGenerator<Uint8Array> {
      for (;;) {
        const next = queue.shift();
        if (next === null) return;
        if (next !== undefined) yield next;
        else
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
      }
    })(),
    send: (text) => {
      queue.push(Buffer.from(text));
      notify();
    },
    end: () => {
      queue.push(null);
      notify();
    },
  };
}

async function text(bytes: AsyncIterable<Uint8Array>): Promise<string> {
  let all = '';
  for await (const piece of bytes) all += Buffer.from(piece).toString();
  return all;
}

describe('dropped files without a path', () => {
  it('are registered before their bytes arrive, and read in order as they come', async () => {
    const [a, b] = [controlledStream(), controlledStream()];
    const dropped = receiveDroppedFiles([
      { name: 'a.txt', size: 3, mtime: 0, bytes: a.bytes },
      { name: 'b.txt', size: 4, mtime: 0, bytes: b.bytes },
    ]);
    expect(dropped.map(({ name, size }) => `${name} ${size}`)).toEqual(['a.txt 3', 'b.txt 4']);

    const first = text((dropped[0] ?? expect.unreachable()).bytes.read());
    const second = text((dropped[1] ?? expect.unreachable()).bytes.read());
    a.send('ab');
    a.send('c');
    a.end();
    expect(await first).toBe('abc');
    b.send('defg');
    b.end();
    expect(await second).toBe('defg');
  });

  it('report a file cut short, and every file after it, while those before are whole', async () => {
    const streams = [controlledStream(), controlledStream(), controlledStream()];
    const dropped = receiveDroppedFiles(
      streams.map((stream, i) => ({ name: 'abc'.charAt(i), size: 3, mtime: 0, bytes: stream.bytes })),
    );
    streams[0]?.send('aaa');
    streams[0]?.end();
    streams[1]?.send('b');
    streams[1]?.end();
    const [a, b, c] = dropped.map((file) => text(file.bytes.read()));
    expect(await a).toBe('aaa');
    await expect(b).rejects.toThrow('it arrived incomplete (1 of 3 bytes). Drop it again.');
    await expect(c).rejects.toThrow('it did not arrive: the drop was cut off before it. Drop it again.');
  });

  it('report a stream that fails as the files it did not finish', async () => {
    const failing = (async function* stream(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('x');
      await Promise.reject(new Error('connection reset'));
    })();
    const [file] = receiveDroppedFiles([{ name: 'a', size: 2, mtime: 0, bytes: failing }]);
    await expect(text((file ?? expect.unreachable()).bytes.read())).rejects.toThrow(
      'the drop was cut off while it arrived. Drop it again.',
    );
  });

  it('wipe each piece once it has been read, and what is left when let go', async () => {
    const [a, b] = [controlledStream(), controlledStream()];
    const [first, second] = receiveDroppedFiles([
      { name: 'a', size: 4, mtime: 0, bytes: a.bytes },
      { name: 'b', size: 2, mtime: 0, bytes: b.bytes },
    ]);
    a.send('ab');
    a.send('cd');
    a.end();
    b.send('ef');
    b.end();
    const reader = (first ?? expect.unreachable()).bytes.read();
    const piece = (await reader.next()).value as Uint8Array;
    expect(Buffer.from(piece).toString()).toBe('ab');
    await reader.next();
    expect([...piece]).toEqual([0, 0]);

    // The second file's bytes arrived but are never read: letting go of the drop overwrites them.
    await text(reader);
    const held = second ?? expect.unreachable();
    const waiting = held.bytes.read();
    const arrived = (await waiting.next()).value as Uint8Array;
    held.bytes.wipe();
    expect([...arrived]).toEqual([0, 0]);
    await expect(text(held.bytes.read())).rejects.toThrow('"b" was let go before it was added.');
  });

  it('refuse a malformed drop, or a whole file of another size than announced, at once', () => {
    const file = { name: 'a', size: 2, mtime: 0, bytes: Buffer.from('ab') };
    expect(() => receiveDroppedFiles([])).toThrow('between 1 and');
    expect(() => receiveDroppedFiles([{ ...file, name: '' }])).toThrow('no usable name');
    expect(() => receiveDroppedFiles([{ ...file, size: -1 }])).toThrow('invalid size');
    expect(() => receiveDroppedFiles([{ ...file, mtime: Number.NaN }])).toThrow('invalid time');
    expect(() => receiveDroppedFiles([{ ...file, bytes: Buffer.from('a') }])).toThrow(
      'arrived incomplete (1 of 2',
    );
    expect(() => receiveDroppedFiles([{ ...file, bytes: Buffer.from('abc') }])).toThrow('more bytes than');
    expect(() =>
      receiveDroppedFiles([{ ...file, size: 600 * 1024 * 1024, bytes: controlledStream().bytes }]),
    ).toThrow('larger than');
  });
});
