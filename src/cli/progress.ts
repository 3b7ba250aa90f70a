import type { Writable } from 'node:stream';

import type { Progress } from '../core/index.js';
import { formatBytes, formatDuration, terminalSafe, truncateStart } from './format.js';

/** Redraws at most this often: faster only costs CPU and flickers. */
const REDRAW_INTERVAL_MS = 100;

/** The rate is measured over this recent window, so it follows changes (a slow disk, small files) quickly. */
const RATE_WINDOW_MS = 5000;

const BAR_WIDTH = 20;

/** Erases the line the cursor is on and returns to its start. */
const CLEAR_LINE = '\r\u001b[K';

/** What the renderer knows besides the engine's progress report. */
export interface ProgressView {
  /** Bytes per second, when known. */
  readonly rate?: number;
  /** Width of the terminal, in columns. */
  readonly columns: number;
}

/**
 * One line of progress, at most `columns - 1` wide (writing into the last column makes some terminals wrap):
 * " 42% [########------------] 12 MiB/27 MiB  4.1 MiB/s  ETA 0:04  photos/a.jpg".
 * Without a byte total (verify without reading data) it counts files instead.
 */
export function renderProgress(progress: Progress, view: ProgressView): string {
  const byBytes = progress.bytesTotal > 0;
  const done = byBytes ? progress.bytesDone : progress.filesDone;
  const total = byBytes ? progress.bytesTotal : progress.filesTotal;
  const fraction = total > 0 ? Math.min(1, Math.max(0, done / total)) : 0;
  const filled = Math.round(fraction * BAR_WIDTH);
  const parts = [
    `${Math.floor(fraction * 100)
      .toString()
      .padStart(3)}%`,
    `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`,
    byBytes
      ? `${formatBytes(progress.bytesDone)}/${formatBytes(progress.bytesTotal)}`
      : `${progress.filesDone}/${progress.filesTotal} files`,
  ];
  if (byBytes && view.rate !== undefined && view.rate > 0) {
    parts.push(`${formatBytes(view.rate)}/s`);
    const remaining = Math.max(0, progress.bytesTotal - progress.bytesDone);
    parts.push(`ETA ${formatDuration((remaining / view.rate) * 1000)}`);
  }
  let line = parts.join('  ');
  const room = view.columns - 1 - line.length - 2;
  if (progress.current !== undefined && room >= 8) {
    line += `  ${truncateStart(terminalSafe(progress.current), room)}`;
  }
  return Array.from(line)
    .slice(0, Math.max(0, view.columns - 1))
    .join('');
}

/** How {@link ProgressBar} reaches the terminal and the clock; replaceable in tests. */
export interface ProgressBarOptions {
  /** Current terminal width; re-read on every redraw so resizing works. */
  readonly columns: () => number;
  readonly now?: () => number;
}

/**
 * A self-redrawing progress line on a terminal. Updates arrive as often as the engine likes; the line is
 * redrawn at most every {@link REDRAW_INTERVAL_MS}, and the latest state is drawn after a pause even when no
 * further update comes.
 */
export class ProgressBar {
  readonly #stream: Writable;
  readonly #columns: () => number;
  readonly #now: () => number;
  readonly #samples: { readonly at: number; readonly bytes: number }[] = [];
  #latest: Progress | undefined;
  #lastDraw = -Infinity;
  #timer: NodeJS.Timeout | undefined;
  #drawn = false;
  #finished = false;

  constructor(stream: Writable, options: ProgressBarOptions) {
    this.#stream = stream;
    this.#columns = options.columns;
    this.#now = options.now ?? Date.now;
  }

  /** Records the engine's latest report; draws now or schedules a draw. */
  update(progress: Progress): void {
    if (this.#finished) return;
    this.#latest = progress;
    if (this.#timer !== undefined) return;
    const wait = this.#lastDraw + REDRAW_INTERVAL_MS - this.#now();
    if (wait <= 0) {
      this.#draw();
      return;
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#draw();
    }, wait);
    // A pending redraw must never keep the process alive after the command finished.
    this.#timer.unref();
  }

  /** Erases the line, so other output can be written; the next update draws it again. */
  clear(): void {
    if (!this.#drawn) return;
    this.#stream.write(CLEAR_LINE);
    this.#drawn = false;
    this.#lastDraw = -Infinity;
  }

  /** Erases the line for good. */
  finish(): void {
    this.#finished = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.clear();
  }

  #rate(now: number, bytes: number): number | undefined {
    this.#samples.push({ at: now, bytes });
    while (this.#samples.length > 2 && now - (this.#samples[0]?.at ?? now) > RATE_WINDOW_MS) {
      this.#samples.shift();
    }
    const first = this.#samples[0];
    if (!first || now - first.at < 500) return undefined;
    return ((bytes - first.bytes) * 1000) / (now - first.at);
  }

  #draw(): void {
    const progress = this.#latest;
    if (this.#finished || progress === undefined) return;
    const now = this.#now();
    this.#lastDraw = now;
    const rate = this.#rate(now, progress.bytesDone);
    const line = renderProgress(progress, {
      columns: Math.max(20, this.#columns()),
      ...(rate === undefined ? {} : { rate }),
    });
    this.#stream.write(`${CLEAR_LINE}${line}`);
    this.#drawn = true;
  }
}
