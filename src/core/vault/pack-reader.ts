import { closeSync, fstatSync, openSync, readvSync } from 'node:fs';

import type { ByteSource } from './blob-io.js';
import type { PackedBlob } from './index-db.js';
import { packPaths, requireRegularFile, VAULT_READ_FLAGS } from './layout.js';

/** Packs kept open at once: enough for the packs one restore batch reads from, few enough to spare descriptors. */
const MAX_OPEN = 16;

/**
 * The vault's packs, opened on first read and kept open (the least recently opened closed first): restoring many
 * small files reads each one's header from a handful of packs.
 */
export class PackReader {
  readonly #dir: string;
  /** Open packs by hex id, with their sizes (a pack never changes once written). */
  readonly #open = new Map<string, { fd: number; size: number }>();
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
   * length when the pack was cut short). Reads stop at the blob's end.
   * @throws the file system's error (ENOENT for a missing pack, ELOOP for a symbolic link, see
   * {@link requireRegularFile} for anything else but a regular file) when the pack cannot be opened.
   */
  source(blob: PackedBlob): { source: ByteSource; size: number } {
    const pack = this.#pack(blob.packId);
    const size = Math.max(0, Math.min(blob.length, pack.size - blob.offset));
    const source: ByteSource = {
      readv: (views, position) => {
        let room = Math.max(0, size - position);
        const within = views.map((view) => {
          const part = view.subarray(0, Math.min(view.byteLength, room));
          room -= part.byteLength;
          return part;
        });
        return Promise.resolve(readvSync(pack.fd, within, blob.offset + position));
      },
    };
    return { source, size };
  }

  /** Closes a pack that is about to be removed. */
  forget(packId: Buffer): void {
    const hex = packId.toString('hex');
    const pack = this.#open.get(hex);
    if (!pack) return;
    this.#open.delete(hex);
    closeSync(pack.fd);
  }

  close(): void {
    for (const { fd } of this.#open.values()) closeSync(fd);
    this.#open.clear();
  }

  #pack(packId: Buffer): { fd: number; size: number } {
    const hex = packId.toString('hex');
    let pack = this.#open.get(hex);
    if (pack) return pack;
    const path = this.path(packId);
    const fd = openSync(path, VAULT_READ_FLAGS);
    try {
      const stats = fstatSync(fd);
      requireRegularFile(stats, path);
      pack = { fd, size: stats.size };
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    this.#open.set(hex, pack);
    if (this.#open.size > MAX_OPEN) {
      const [oldest, { fd: oldestFd }] = this.#open.entries().next().value as [string, { fd: number }];
      this.#open.delete(oldest);
      closeSync(oldestFd);
    }
    return pack;
  }
}
