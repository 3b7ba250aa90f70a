/** Bytes done within one file are passed on in steps of this size: a bar moves without an event per batch. */
const STEP_BYTES = 4 * 1024 * 1024;

/** Counts the bytes done within one large file and passes them on in steps, so progress moves through it. */
export class ByteSteps {
  #pending = 0;
  #reported = 0;

  /** @param report - Gets the bytes done since its previous call. */
  constructor(private readonly report: (bytes: number) => void) {}

  /** Bytes passed on so far. */
  get reported(): number {
    return this.#reported;
  }

  add(bytes: number): void {
    this.#pending += bytes;
    if (this.#pending >= STEP_BYTES) this.flush();
  }

  /** Passes on what is left. */
  flush(): void {
    if (this.#pending === 0) return;
    const bytes = this.#pending;
    this.#pending = 0;
    this.#reported += bytes;
    this.report(bytes);
  }
}
