import type { DroppedFileInput } from '../app/dropped.js';
import type { Result } from '../shared/contract.js';
import type { DropManifestEntry } from './wire.js';

/** Largest manifest (names, sizes and times of the dropped files). */
const MANIFEST_MAX = 4 * 1024 * 1024;

class BodyError extends Error {}

/** Reads a request body piece by piece: exactly n bytes, or whatever remains. */
class BodyReader {
  readonly #iterator: AsyncIterator<Buffer>;
  #pending: Buffer = Buffer.alloc(0);

  constructor(request: AsyncIterable<unknown>) {
    this.#iterator = (request as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  }

  /** Up to `max` bytes (fewer only at the end of the body). */
  async take(max: number): Promise<Buffer> {
    while (this.#pending.length === 0) {
      const next = await this.#iterator.next();
      if (next.done === true) return Buffer.alloc(0);
      this.#pending = next.value;
    }
    const piece = this.#pending.subarray(0, max);
    this.#pending = this.#pending.subarray(piece.length);
    return piece;
  }

  async exactly(length: number): Promise<Buffer> {
    const pieces: Buffer[] = [];
    let got = 0;
    while (got < length) {
      const piece = await this.take(length - got);
      if (piece.length === 0) throw new BodyError('The drop ended early.');
      pieces.push(piece);
      got += piece.length;
    }
    return Buffer.concat(pieces);
  }
}

function parseManifest(bytes: Buffer, maxBytes: number): DropManifestEntry[] {
  let manifest: unknown;
  try {
    manifest = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new BodyError('The drop manifest is not JSON.');
  }
  if (!Array.isArray(manifest)) throw new BodyError('The drop manifest is not a list.');
  let total = 0;
  return manifest.map((entry: unknown) => {
    const { name, size, mtime } = (entry ?? {}) as Partial<DropManifestEntry>;
    if (typeof name !== 'string' || !Number.isSafeInteger(size) || typeof mtime !== 'number') {
      throw new BodyError('A drop manifest entry is malformed.');
    }
    total += size ?? 0;
    if (total > maxBytes) throw new BodyError('The dropped files are too large together.');
    return { name, size: size ?? 0, mtime };
  });
}

/**
 * Reads a drop body (see dropBodyParts in wire.ts) and hands its files, as streams over the body, to `register`,
 * which reads them in order. Nothing is written to disk here.
 */
export async function readDropBody(
  request: AsyncIterable<unknown>,
  maxBytes: number,
  register: (files: DroppedFileInput[]) => Promise<Result<{ handle: string; count: number }>>,
): Promise<Result<{ handle: string; count: number }>> {
  const reader = new BodyReader(request);
  try {
    const length = (await reader.exactly(4)).readUInt32BE(0);
    if (length > MANIFEST_MAX) throw new BodyError('The drop manifest is too large.');
    const manifest = parseManifest(await reader.exactly(length), maxBytes);
    const files: DroppedFileInput[] = manifest.map((entry) => ({
      ...entry,
      bytes: (async function* fileBytes(): AsyncGenerator<Uint8Array> {
        let left = entry.size;
        while (left > 0) {
          const piece = await reader.take(Math.min(left, 1024 * 1024));
          if (piece.length === 0) return; // short: the back end reports the file as incomplete
          left -= piece.length;
          yield piece;
        }
      })(),
    }));
    const result = await register(files);
    if (result.ok && (await reader.take(1)).length > 0) {
      throw new BodyError('The drop holds more bytes than its manifest announced.');
    }
    return result;
  } catch (error) {
    if (error instanceof BodyError) return { ok: false, code: 'INVALID_ARGUMENT', message: error.message };
    throw error;
  }
}
