/**
 * A drop from the page crosses in two requests: its manifest (names, sizes, times), answered at once with the
 * handle, then the files' bytes, which the add job reads as they arrive (see bridge.ts).
 */
import type { DroppedFileInput } from '../app/dropped.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { Result } from '../shared/contract.js';
import type { DropManifestEntry } from './wire.js';

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
}

/**
 * The names, sizes and times of a drop, from its first request's JSON (the back end checks their values).
 * @throws {@link InvalidArgumentError} for a manifest that is not a list of such entries.
 */
export function parseDropManifest(manifest: unknown): DropManifestEntry[] {
  if (!Array.isArray(manifest)) throw new InvalidArgumentError('The drop manifest is not a list.');
  return manifest.map((entry: unknown) => {
    const { name, size, mtime } = (entry ?? {}) as Partial<DropManifestEntry>;
    if (typeof name !== 'string' || typeof size !== 'number' || typeof mtime !== 'number') {
      throw new InvalidArgumentError('A drop manifest entry is malformed.');
    }
    return { name, size, mtime };
  });
}

/**
 * A drop whose manifest has come and whose bytes are to follow in a second request. {@link files} can be handed to
 * the back end at once: each file's bytes wait for that request, then are read from it in order.
 */
export class DropUpload {
  readonly files: DroppedFileInput[];
  readonly #body: Promise<BodyReader>;
  #arrive: (reader: BodyReader) => void = () => undefined;
  #never: (error: Error) => void = () => undefined;
  readonly #read: Promise<'whole' | 'short'>;
  #settle: (outcome: 'whole' | 'short') => void = () => undefined;
  readonly #timer: NodeJS.Timeout;

  /** `waitMs`: how long the bytes may take to start coming before every file is given up as not arrived. */
  constructor(manifest: readonly DropManifestEntry[], waitMs: number) {
    this.#body = new Promise<BodyReader>((resolve, reject) => {
      this.#arrive = resolve;
      this.#never = reject;
    });
    // Read only by a file's bytes; a rejection no file waits for (none was read yet) is not an unhandled one.
    this.#body.catch(() => undefined);
    this.#read = new Promise((resolve) => {
      this.#settle = resolve;
    });
    this.#timer = setTimeout(() => {
      this.#never(
        new InvalidArgumentError(
          'it never arrived (the window sent the drop but not its bytes). Drop it again.',
        ),
      );
      this.#settle('short');
    }, waitMs);
    this.#timer.unref();
    this.files = manifest.map((entry, index) => ({
      ...entry,
      bytes: this.#bytesOf(entry.size, index === manifest.length - 1),
    }));
  }

  async *#bytesOf(size: number, last: boolean): AsyncGenerator<Uint8Array> {
    try {
      const reader = await this.#body;
      let left = size;
      while (left > 0) {
        const piece = await reader.take(Math.min(left, 1024 * 1024));
        if (piece.length === 0) break; // the back end reports the file as incomplete, and those after it
        left -= piece.length;
        yield piece;
      }
      if (left > 0) this.#settle('short');
      else if (last) this.#settle('whole');
    } catch (error) {
      this.#settle('short');
      throw error;
    }
  }

  /**
   * Hands the second request's body to the files, and answers once they have read it: an error when it held more
   * bytes than the manifest announced (the files themselves were complete, and are added).
   */
  async receive(request: AsyncIterable<unknown>): Promise<Result<null>> {
    clearTimeout(this.#timer);
    const reader = new BodyReader(request);
    this.#arrive(reader);
    const outcome = await this.#read;
    if (outcome === 'whole' && (await reader.take(1)).length > 0) {
      return {
        ok: false,
        code: 'INVALID_ARGUMENT',
        message: 'The drop holds more bytes than its manifest announced.',
      };
    }
    return { ok: true, value: null };
  }
}
