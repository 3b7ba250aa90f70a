import type { Writable } from 'node:stream';

/**
 * Watches stdout and stderr for the reader going away: `coffer ls … | head -1` closes the pipe after one line, and
 * the next write fails with EPIPE. Unix tools die of SIGPIPE there, quietly; Node ignores SIGPIPE and reports the
 * failure as an 'error' event, which, unhandled, ends the process with a stack trace. Here the command is told to
 * stop instead (a running operation is cancelled like Ctrl-C, so the vault is closed cleanly) and nothing more is
 * written. Any other write failure (a full disk under `> file`) stops it the same way, but is reported.
 */
export class OutputWatch {
  #failure: NodeJS.ErrnoException | undefined;
  readonly #listeners = new Set<() => void>();
  readonly #streams: readonly Writable[];

  constructor(streams: readonly Writable[]) {
    this.#streams = streams;
    // Never removed: a write's failure can arrive after the command has returned, and must not crash then either.
    for (const stream of streams) {
      stream.on('error', (error: NodeJS.ErrnoException) => {
        this.#failed(error);
      });
    }
  }

  /** Whether a standard stream can no longer be written to. */
  get closed(): boolean {
    return this.#failure !== undefined;
  }

  /** The reader closed the pipe: stop quietly. Otherwise (when closed) the write error, worth a message. */
  get failure(): { readonly quiet: boolean; readonly code: string } | undefined {
    const failure = this.#failure;
    if (failure === undefined) return undefined;
    const code = failure.code ?? 'EIO';
    return { quiet: code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED', code };
  }

  /** Calls `listener` once when the output closes; returns the unsubscribe function. */
  onClosed(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /**
   * Settles once everything written so far has reached the streams (or failed): a failure of the last write is
   * only known then.
   */
  async settle(): Promise<void> {
    await Promise.all(
      this.#streams.map(
        (stream) =>
          new Promise<void>((done) => {
            if (stream.destroyed || stream.writableEnded) {
              if (stream.errored) this.#failed(stream.errored);
              done();
              return;
            }
            stream.write('', (error) => {
              if (error) this.#failed(error);
              done();
            });
          }),
      ),
    );
  }

  #failed(error: NodeJS.ErrnoException): void {
    if (this.#failure !== undefined) return;
    this.#failure = error;
    for (const listener of [...this.#listeners]) listener();
  }
}
