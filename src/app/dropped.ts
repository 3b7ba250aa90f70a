import { InvalidArgumentError } from '../core/errors.js';
import { ArrivingBytes } from './arriving-bytes.js';
import type { DroppedBytes } from './handles.js';

/** A dropped file without a path, as the host hands it over. */
export interface DroppedFileInput {
  readonly name: string;
  readonly size: number;
  /** Modification time, milliseconds since the epoch. */
  readonly mtime: number;
  readonly bytes: AsyncIterable<Uint8Array> | Uint8Array;
}

/**
 * Most bytes one drop of pathless files may hold: they wait in memory (plaintext never goes to disk) until the
 * add job reads them, so a drop is bounded. Larger files are added with the file picker or by dropping them from
 * the file manager, which gives their path.
 */
const DROP_MAX_BYTES = 512 * 1024 * 1024;
const DROP_MAX_FILES = 10_000;

function invalid(message: string): never {
  throw new InvalidArgumentError(message);
}

/**
 * Checks a drop's names, sizes and times, and starts taking its bytes in, in order, in the background: the handle
 * can be given out (and an add job started) while they still arrive. A file whose bytes stop short or run long
 * fails, and so does every file after it (their bytes were to follow in the same stream); the add job reports each.
 * Files given as whole byte arrays (Electron's drop from a browser) are checked against their sizes at once.
 * @throws {@link InvalidArgumentError} for a malformed or oversized drop, or a whole file of the wrong size.
 */
export function receiveDroppedFiles(files: readonly DroppedFileInput[]): DroppedBytes[] {
  if (files.length === 0 || files.length > DROP_MAX_FILES) {
    invalid(`A drop must hold between 1 and ${DROP_MAX_FILES} files.`);
  }
  let total = 0;
  for (const { name, size, mtime, bytes } of files) {
    if (typeof name !== 'string' || name.length === 0 || name.length > 1024)
      invalid('A dropped file has no usable name.');
    if (!Number.isSafeInteger(size) || size < 0) invalid(`"${name}" has an invalid size.`);
    if (typeof mtime !== 'number' || !Number.isFinite(mtime) || mtime < 0)
      invalid(`"${name}" has an invalid time.`);
    if (total + size > DROP_MAX_BYTES) {
      invalid(
        `The dropped files are larger than ${DROP_MAX_BYTES / 1024 / 1024} MiB together. Add large files with the file picker.`,
      );
    }
    total += size;
    if (bytes instanceof Uint8Array && bytes.byteLength !== size)
      invalid(wrongLength(name, size, bytes.byteLength));
  }
  const dropped = files.map(({ name, size, mtime }) => ({
    name,
    size,
    mtime,
    bytes: new ArrivingBytes(name, size),
  }));
  void takeIn(files, dropped);
  return dropped;
}

function wrongLength(name: string, size: number, received: number): string {
  return received > size
    ? `"${name}" holds more bytes than it announced.`
    : `"${name}" arrived incomplete (${received.toLocaleString()} of ${size.toLocaleString()} bytes). Drop it again.`;
}

/** Moves each file's bytes, as they come, to its {@link ArrivingBytes}. Never throws: failures go to the files. */
async function takeIn(files: readonly DroppedFileInput[], dropped: readonly DroppedBytes[]): Promise<void> {
  let at = 0;
  try {
    for (; at < files.length; at++) {
      const { size, bytes } = files[at] as DroppedFileInput;
      const arriving = (dropped[at] as DroppedBytes).bytes;
      let received = 0;
      for await (const piece of bytes instanceof Uint8Array ? [bytes] : bytes) {
        received += piece.byteLength;
        if (received > size) break;
        arriving.push(piece);
      }
      if (received !== size) {
        throw new InvalidArgumentError(
          received > size
            ? 'it holds more bytes than it announced. Drop it again.'
            : `it arrived incomplete (${received.toLocaleString()} of ${size.toLocaleString()} bytes). Drop it again.`,
        );
      }
      arriving.complete();
    }
  } catch (error) {
    const cutBefore = new InvalidArgumentError(
      'it did not arrive: the drop was cut off before it. Drop it again.',
    );
    dropped.forEach((file, index) => {
      if (index > at) file.bytes.fail(cutBefore);
      else if (index === at) {
        file.bytes.fail(
          error instanceof InvalidArgumentError
            ? error
            : new InvalidArgumentError('the drop was cut off while it arrived. Drop it again.'),
        );
      }
    });
  }
}
