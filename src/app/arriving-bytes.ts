import { InvalidArgumentError } from '../core/errors.js';

/**
 * The bytes of one dropped file as they arrive from the host, in memory the back end owns (copies, so they can be
 * wiped). The preview's upload is still under way when the add job starts: the job reads each file as it comes, so
 * encrypting overlaps the upload, and each piece is wiped as soon as it has been read.
 */
export class ArrivingBytes {
  readonly name: string;
  readonly size: number;
  /** Arrived and not yet read. */
  #pieces: Uint8Array[] = [];
  /** Handed to the reader, until it asks for the next. */
  #lent: Uint8Array | undefined;
  #state: 'arriving' | 'complete' | 'wiped' = 'arriving';
  #failure: Error | undefined;
  #wake: (() => void) | undefined;

  constructor(name: string, size: number) {
    this.name = name;
    this.size = size;
  }

  /** Keeps a copy of `piece` for the reader (nothing once wiped: the job has ended, the rest is not wanted). */
  push(piece: Uint8Array): void {
    if (this.#state !== 'arriving' || this.#failure) return;
    this.#pieces.push(Uint8Array.from(piece));
    this.#notify();
  }

  /** Every byte has arrived. */
  complete(): void {
    if (this.#state === 'arriving') this.#state = 'complete';
    this.#notify();
  }

  /** The file will not arrive whole: the reader gets `error` once it has read what came. */
  fail(error: Error): void {
    this.#failure ??= error;
    this.#notify();
  }

  /** Overwrites what is held and refuses what comes later. */
  wipe(): void {
    for (const piece of this.#pieces) piece.fill(0);
    this.#lent?.fill(0);
    this.#pieces = [];
    this.#state = 'wiped';
    this.#notify();
  }

  /**
   * The file's bytes, waiting for them as they arrive. One reader only: each piece is wiped when the next is asked
   * for (the engine copies what it needs before it asks).
   * @throws {@link InvalidArgumentError} when the file did not arrive whole, or was wiped before it was read.
   */
  async *read(): AsyncGenerator<Uint8Array> {
    for (;;) {
      const piece = this.#pieces.shift();
      if (piece !== undefined) {
        this.#lent = piece;
        try {
          yield piece;
        } finally {
          piece.fill(0);
          this.#lent = undefined;
        }
        continue;
      }
      if (this.#failure) throw this.#failure;
      if (this.#state === 'complete') return;
      if (this.#state === 'wiped')
        throw new InvalidArgumentError(`"${this.name}" was let go before it was added.`);
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
