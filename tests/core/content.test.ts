import { randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import { fc, test as fcTest } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';

import {
  BLOB_HEADER_BYTES,
  blobLayout,
  blobSize,
  ChunkCipher,
  chunkTransform,
  ContentDecryptor,
  ContentEncryptor,
  parseBlobHeader,
} from '../../src/core/crypto/content.js';
import { SecretKey } from '../../src/core/crypto/keys.js';
import { IntegrityError, InvalidArgumentError, VaultLockedError } from '../../src/core/errors.js';
import { backends, flipped } from '../helpers/backends.js';
import { contentFixture, KEY_ID } from '../helpers/content.js';

const CS = 64;

describe.each(backends)('content encryption ($name)', (sodium) => {
  const fx = contentFixture(sodium, CS);

  it.for([0, 1, CS - 1, CS, CS + 1, 2 * CS, 2 * CS + 1, 10 * CS - 3])('round-trips %i bytes', (size) => {
    const plaintext = randomBytes(size);
    const blob = fx.encrypt(plaintext);
    expect(blob.length).toBe(blobSize(size, CS));
    expect(fx.decrypt(blob).equals(plaintext)).toBe(true);
  });

  fcTest.prop([fc.uint8Array({ maxLength: 20 * CS }), fc.integer({ min: 1, max: 3 * CS })])(
    'round-trips random sizes fed in random pieces',
    (plaintext, piece) => {
      const encryptor = ContentEncryptor.create(sodium, fx.dek(), KEY_ID, fx.binding, CS);
      const blobParts: Buffer[] = [];
      for (let i = 0; i < plaintext.length; i += piece) {
        encryptor.push(plaintext.subarray(i, i + piece), (b) => blobParts.push(b));
      }
      encryptor.finish((b) => blobParts.push(b));
      const blob = Buffer.concat(blobParts);
      const decryptor = new ContentDecryptor(sodium, (id) => fx.keyring.find(id), fx.binding);
      const out: Buffer[] = [];
      for (let i = 0; i < blob.length; i += piece)
        decryptor.push(blob.subarray(i, i + piece), (b) => out.push(b));
      decryptor.finish((b) => out.push(b));
      expect(Buffer.concat(out).equals(Buffer.from(plaintext))).toBe(true);
    },
  );

  it('encrypts the same plaintext differently every time (fresh nonce prefix)', () => {
    const plaintext = Buffer.alloc(3 * CS, 7);
    const a = fx.encrypt(plaintext);
    const b = fx.encrypt(plaintext);
    expect(a.subarray(BLOB_HEADER_BYTES).equals(b.subarray(BLOB_HEADER_BYTES))).toBe(false);
  });

  it('never repeats a nonce prefix across many files', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      const header = ContentEncryptor.create(sodium, fx.dek(), KEY_ID, fx.binding, CS);
      const out: Buffer[] = [];
      header.finish((b) => out.push(b));
      seen.add(out[0]?.subarray(36, 52).toString('hex') ?? '');
    }
    expect(seen.size).toBe(10_000);
  });

  it('detects a single-byte flip anywhere in a blob', () => {
    const blob = fx.encrypt(randomBytes(2 * CS + 10));
    for (let offset = 0; offset < blob.length; offset++) {
      const damaged = flipped(blob, offset, 0x80);
      expect(() => fx.decrypt(damaged), `offset ${offset}`).toThrow(IntegrityError);
    }
  });

  it('detects truncation at every length', () => {
    const blob = fx.encrypt(randomBytes(3 * CS));
    for (let length = 0; length < blob.length; length++) {
      expect(() => fx.decrypt(blob.subarray(0, length)), `length ${length}`).toThrow(IntegrityError);
    }
  });

  it('keeps failing after the first error (sticky) and releases nothing more', () => {
    const blob = flipped(fx.encrypt(randomBytes(4 * CS)), BLOB_HEADER_BYTES + CS + 16 + 3); // chunk 1
    const decryptor = new ContentDecryptor(sodium, (id) => fx.keyring.find(id), fx.binding);
    const released: Buffer[] = [];
    let first: unknown;
    try {
      decryptor.push(blob, (b) => released.push(b));
    } catch (error) {
      first = error;
    }
    expect(first).toBeInstanceOf(IntegrityError);
    expect((first as IntegrityError).chunkIndex).toBe(1);
    expect(Buffer.concat(released).length).toBe(CS);
    expect(decryptor.failed).toBe(true);
    expect(() => {
      decryptor.push(Buffer.alloc(0), (b) => released.push(b));
    }).toThrow(first);
    expect(() => {
      decryptor.finish((b) => released.push(b));
    }).toThrow(first);
    expect(Buffer.concat(released).length).toBe(CS);
  });

  it('refuses to be used after it finished', () => {
    const encryptor = ContentEncryptor.create(sodium, fx.dek(), KEY_ID, fx.binding, CS);
    encryptor.finish(() => undefined);
    expect(() => {
      encryptor.push(Buffer.of(1), () => undefined);
    }).toThrow(InvalidArgumentError);
  });

  it('refuses use after abort, and a wiped chunk cipher refuses to seal or open', () => {
    const encryptor = ContentEncryptor.create(sodium, fx.dek(), KEY_ID, fx.binding, CS);
    encryptor.abort();
    expect(() => {
      encryptor.push(Buffer.of(1), () => undefined);
    }).toThrow(InvalidArgumentError);
    const blob = fx.encrypt(Buffer.of(1, 2, 3));
    const cipher = new ChunkCipher(sodium, fx.dek(), fx.binding, parseBlobHeader(blob, fx.binding));
    expect(cipher.open(0, blob.subarray(BLOB_HEADER_BYTES), true)).toEqual(Buffer.of(1, 2, 3));
    cipher.wipe();
    expect(() => cipher.open(0, blob.subarray(BLOB_HEADER_BYTES), true)).toThrow(VaultLockedError);
    expect(() => cipher.seal(0, Buffer.of(1), true)).toThrow(VaultLockedError);
  });

  it('rejects chunk sizes out of range when writing', () => {
    expect(() => ContentEncryptor.create(sodium, fx.dek(), KEY_ID, fx.binding, 32)).toThrow(
      InvalidArgumentError,
    );
    expect(() => ContentEncryptor.create(sodium, fx.dek(), KEY_ID, fx.binding, 32 * 1024 * 1024)).toThrow(
      InvalidArgumentError,
    );
  });

  it('decrypts any chunk alone for range reads', () => {
    const plaintext = randomBytes(5 * CS + 17);
    const blob = fx.encrypt(plaintext);
    const header = parseBlobHeader(blob, fx.binding);
    const layout = blobLayout(blob.length, header.chunkSize);
    expect(layout).toEqual({ chunkCount: 6, plaintextSize: plaintext.length });
    const dek = fx.keyring.find(header.keyId);
    if (!dek) throw new Error('no key');
    const cipher = new ChunkCipher(sodium, dek, fx.binding, header);
    for (const index of [4, 0, 5, 2]) {
      const start = BLOB_HEADER_BYTES + index * (CS + 16);
      const record = blob.subarray(start, Math.min(blob.length, start + CS + 16));
      const chunk = cipher.open(index, record, index === layout.chunkCount - 1);
      expect(chunk.equals(plaintext.subarray(index * CS, index * CS + CS))).toBe(true);
    }
    // Claiming a middle chunk is final (a range reader fooled about the size) fails.
    const start = BLOB_HEADER_BYTES + 2 * (CS + 16);
    expect(() => cipher.open(2, blob.subarray(start, start + CS + 16), true)).toThrow(IntegrityError);
    cipher.wipe();
  });

  it('rejects blob sizes no writer produces', () => {
    expect(() => blobLayout(BLOB_HEADER_BYTES + 15, CS)).toThrow(IntegrityError);
    expect(() => blobLayout(BLOB_HEADER_BYTES + CS + 16 + 10, CS)).toThrow(IntegrityError);
    expect(() => blobLayout(BLOB_HEADER_BYTES + CS + 16 + 16, CS)).toThrow(IntegrityError);
    expect(blobLayout(BLOB_HEADER_BYTES + 16, CS)).toEqual({ chunkCount: 1, plaintextSize: 0 });
  });

  it('streams through stream.pipeline, and a failing stream errors the pipeline', async () => {
    const plaintext = randomBytes(7 * CS + 5);
    const blobParts: Buffer[] = [];
    await pipeline(
      Readable.from([plaintext.subarray(0, 100), plaintext.subarray(100)]),
      chunkTransform(ContentEncryptor.create(sodium, fx.dek(), KEY_ID, fx.binding, CS)),
      new Writable({
        write(chunk: Buffer, _enc, done) {
          blobParts.push(chunk);
          done();
        },
      }),
    );
    const blob = Buffer.concat(blobParts);
    const out: Buffer[] = [];
    const sink = (): Writable =>
      new Writable({
        write(chunk: Buffer, _enc, done) {
          out.push(chunk);
          done();
        },
      });
    await pipeline(
      Readable.from([blob]),
      chunkTransform(new ContentDecryptor(sodium, (id) => fx.keyring.find(id), fx.binding)),
      sink(),
    );
    expect(Buffer.concat(out).equals(plaintext)).toBe(true);
    await expect(
      pipeline(
        Readable.from([blob.subarray(0, blob.length - CS)]),
        chunkTransform(new ContentDecryptor(sodium, (id) => fx.keyring.find(id), fx.binding)),
        sink(),
      ),
    ).rejects.toThrow(IntegrityError);
  });
});

describe('content streaming memory', () => {
  it('encrypts and decrypts 512 MiB with bounded memory', async () => {
    const sodium = backends[0];
    if (!sodium) throw new Error('no backend');
    const fx = contentFixture(sodium, 64 * 1024);
    const total = 512 * 1024 * 1024;
    const piece = Buffer.alloc(1024 * 1024, 0x5a);
    let produced = 0;
    const source = new Readable({
      read() {
        if (produced >= total) this.push(null);
        else {
          produced += piece.length;
          this.push(piece);
        }
      },
    });
    const baseline = process.memoryUsage();
    let peak = 0;
    let received = 0;
    await pipeline(
      source,
      chunkTransform(ContentEncryptor.create(sodium, fx.dek(), KEY_ID, fx.binding)),
      chunkTransform(new ContentDecryptor(sodium, (id) => fx.keyring.find(id), fx.binding)),
      new Writable({
        write(chunk: Buffer, _enc, done) {
          received += chunk.length;
          if (received % (32 * 1024 * 1024) < chunk.length) {
            const now = process.memoryUsage();
            peak = Math.max(peak, now.arrayBuffers - baseline.arrayBuffers);
          }
          done();
        },
      }),
    );
    expect(received).toBe(total);
    // Buffering the whole stream would show ~512 MiB here; a streaming pipeline holds a few MiB.
    expect(peak).toBeLessThan(64 * 1024 * 1024);
  });
});

describe('secret key', () => {
  it('reads all zeros after wipe and refuses further use', () => {
    const sodium = backends[0];
    if (!sodium) throw new Error('no backend');
    const key = SecretKey.generate(sodium);
    const raw = key.bytes;
    expect(raw.some((b) => b !== 0)).toBe(true);
    key.wipe();
    expect(raw.every((b) => b === 0)).toBe(true);
    expect(() => key.bytes).toThrow();
  });
});
