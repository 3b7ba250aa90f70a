import { InvalidArgumentError } from '../core/errors.js';
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
 * add job takes them, so a drop is bounded. Larger files are added with the file picker or by dropping them from
 * the file manager, which gives their path.
 */
export const DROP_MAX_BYTES = 512 * 1024 * 1024;
export const DROP_MAX_FILES = 10_000;

function invalid(message: string): never {
  throw new InvalidArgumentError(message);
}

/**
 * Reads dropped files into memory the back end owns (copies, so they can be wiped), checking each against its
 * announced size and the drop against {@link DROP_MAX_BYTES}. On any failure what was read is wiped.
 * @throws {@link InvalidArgumentError} for a malformed, oversized or incomplete drop.
 */
export async function collectDroppedBytes(files: readonly DroppedFileInput[]): Promise<DroppedBytes[]> {
  if (files.length === 0 || files.length > DROP_MAX_FILES) {
    invalid(`A drop must hold between 1 and ${DROP_MAX_FILES} files.`);
  }
  let total = 0;
  const collected: DroppedBytes[] = [];
  try {
    for (const file of files) {
      const { name, size, mtime } = file;
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
      const chunks: Uint8Array[] = [];
      collected.push({ name, size, mtime, chunks });
      let received = 0;
      for await (const chunk of file.bytes instanceof Uint8Array ? [file.bytes] : file.bytes) {
        received += chunk.byteLength;
        if (received > size) invalid(`"${name}" holds more bytes than it announced.`);
        chunks.push(Uint8Array.from(chunk));
      }
      if (received !== size) invalid(`"${name}" arrived incomplete (${received} of ${size} bytes).`);
    }
  } catch (error) {
    for (const file of collected) for (const chunk of file.chunks) chunk.fill(0);
    throw error;
  }
  return collected;
}
