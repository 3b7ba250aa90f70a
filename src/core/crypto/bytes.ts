import { IntegrityError } from '../errors.js';

/** Little-endian integer encoders; every multi-byte integer in the format is little-endian. */
export function u8(value: number): Buffer {
  return Buffer.of(value);
}

export function u16(value: number): Buffer {
  const out = Buffer.alloc(2);
  out.writeUInt16LE(value);
  return out;
}

export function u32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32LE(value);
  return out;
}

export function u64(value: number): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigUInt64LE(BigInt(value));
  return out;
}

export function ascii(text: string): Buffer {
  return Buffer.from(text, 'ascii');
}

/**
 * Sequential reader over a byte string from disk. Running past the end is stored-data damage, so it throws
 * {@link IntegrityError} naming `subject` rather than a RangeError.
 */
export class ByteReader {
  #offset = 0;
  readonly #bytes: Buffer;
  readonly #subject: string;

  constructor(bytes: Buffer, subject: string) {
    this.#bytes = bytes;
    this.#subject = subject;
  }

  get offset(): number {
    return this.#offset;
  }

  get remaining(): number {
    return this.#bytes.length - this.#offset;
  }

  bytes(length: number): Buffer {
    if (length > this.remaining) throw new IntegrityError('truncated', { subject: this.#subject });
    const out = this.#bytes.subarray(this.#offset, this.#offset + length);
    this.#offset += length;
    return out;
  }

  u8(): number {
    return this.bytes(1).readUInt8();
  }

  u16(): number {
    return this.bytes(2).readUInt16LE();
  }

  u32(): number {
    return this.bytes(4).readUInt32LE();
  }
}
