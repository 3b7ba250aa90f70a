import { closeSync, fstatSync, openSync, readvSync } from 'node:fs';

import { VaultLockedError } from '../errors.js';
import type { ByteSource } from './blob-io.js';
import type { PackedBlob } from './index-db.js';
import { packPaths, requireRegularFile, VAULT_READ_FLAGS } from './layout.js';

/** Packs kept open at once: enough for the packs one restore batch reads from, few enough to spare descriptors. */
const MAX_OPEN = 16;

/** An open pack: its size (a pack never changes once written), and how many sources over it are in use. */
interface OpenPack {
  readonly fd: number;
  readonly size: number;
  readers: number;
}

/**
 * The vault's packs, opened on first read and kept open (the least recently opened closed first, once no source
 * over it is in use: a descriptor closed under a reader could be reused by the next pack opened, and the reader
 * would read that pack's bytes): restoring many small files reads each one's header from a handful of packs.
 */
export class PackReader {
  readonly #dir: string;
  /** Open packs by hex id. */
  readonly #open = new Map<string, OpenPack>();
  #closed = false;
  readonly #paths = new Map<string, string>();

  constructor(vaultDir: string) {
    this.#dir = vaultDir;
  }

  /** The pack file's path. */
  path(packId: Buffer): string {
    // Asked once per restored file, of a few packs: building the path each time was a visible share of a restore.
    const hex = packId.toString('hex');
    let path = this.#paths.get(hex);
    if (path === undefined) {
      path = packPaths(this.#dir, packId).target;
      this.#paths.set(hex, path);
    }
    return path;
  }

  /**
   * A byte source over one blob in its pack, and how many of the blob's bytes the pack holds (fewer than its
   * length when the pack was cut short). Reads stop at the blob's end; `readError` turns a failed read into the
   * error callers should see (as `fileSource`'s). `release` once it is no longer read.
   * @throws the file system's error (ENOENT for a missing pack, ELOOP for a symbolic link, see
   * {@link requireRegularFile} for anything else but a regular file) when the pack cannot be opened;
   * {@link VaultLockedError} after {@link PackReader.close}.
   */
  source(
    blob: PackedBlob,
    readError: (error: unknown) => unknown = (error) => error,
  ): { source: ByteSource; size: number; release: () => void } {
    const pack = this.#openForReader(blob.packId);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      pack.readers--;
      // Forgotten while read, it is closed by its last reader.
      if (this.#open.get(blob.packId.toString('hex')) !== pack) {
        if (pack.readers === 0) closeSync(pack.fd);
      } else this.#trim();
    };
    const size = Math.max(0, Math.min(blob.length, pack.size - blob.offset));
    const source: ByteSource = {
      // eslint-disable-next-line @typescript-eslint/require-await -- a ByteSource's reads are promises; this one reads at once
      readv: async (views, position) => {
        let room = Math.max(0, size - position);
        const within = views.map((view) => {
          const part = view.subarray(0, Math.min(view.byteLength, room));
          room -= part.byteLength;
          return part;
        });
        try {
          return readvSync(pack.fd, within, blob.offset + position);
        } catch (error) {
          throw readError(error);
        }
      },
    };
    return { source, size, release };
  }

  /** Closes a pack that is about to be removed (once its last source is released, if one is still in use). */
  forget(packId: Buffer): void {
    const hex = packId.toString('hex');
    const pack = this.#open.get(hex);
    if (!pack) return;
    this.#open.delete(hex);
    if (pack.readers === 0) closeSync(pack.fd);
  }

  /**
   * Closes every pack, each still being read once its last source is released (a read the lock stopped may end
   * after it), and opens none after.
   */
  close(): void {
    this.#closed = true;
    for (const pack of this.#open.values()) if (pack.readers === 0) closeSync(pack.fd);
    this.#open.clear();
  }

  /** The pack, opened if it is not, with one more reader (so that making room never closes it). */
  #openForReader(packId: Buffer): OpenPack {
    if (this.#closed) throw new VaultLockedError();
    const hex = packId.toString('hex');
    let pack = this.#open.get(hex);
    if (pack) {
      pack.readers++;
      return pack;
    }
    const path = this.path(packId);
    const fd = openSync(path, VAULT_READ_FLAGS);
    try {
      const stats = fstatSync(fd);
      requireRegularFile(stats, path);
      pack = { fd, size: stats.size, readers: 1 };
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    this.#open.set(hex, pack);
    this.#trim();
    return pack;
  }

  /** Closes the least recently opened packs no source is reading while more than {@link MAX_OPEN} are open. */
  #trim(): void {
    for (const [hex, pack] of this.#open) {
      if (this.#open.size <= MAX_OPEN) return;
      if (pack.readers > 0) continue;
      this.#open.delete(hex);
      closeSync(pack.fd);
    }
  }
}
