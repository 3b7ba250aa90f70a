/**
 * Small-file jobs, run on a crypto-pool worker. For an add: read small source files, seal each into a complete
 * blob (up to 16 chunks), and write the blobs as one new pack. For a restore: read such blobs from their packs,
 * open them and write each authenticated plaintext to its temp file, then publish it at its target.
 * Either way another core does the system calls and the crypto while the main thread deals with the index and
 * publishing. Never log a batch: it carries content subkeys; the caller wipes `material` after the run.
 */
import { closeSync, fstatSync, fsyncSync, futimesSync, openSync, readSync, rmSync, writeSync } from 'node:fs';

import { dirname } from 'node:path';

import { fileChanged } from '../file-stat.js';
import { fsyncDirectorySync, publishFile, writeFileAtomicSync } from '../publish.js';
import { requireRegularFile, VAULT_READ_FLAGS } from '../vault/layout.js';
import { ascii } from './bytes.js';
import { plaintextViews, runBatch } from './chunk-batch.js';
import { LABEL, TAG_BYTES } from './constants.js';
import { BLOB_HEADER_BYTES } from './content.js';
import { badPaddingAt, blobPlaintextSize, contentPart, fillPadding } from './padding.js';
import type { SodiumBackend } from './sodium.js';
import {
  chunksOf,
  keyMaterialOf,
  smallBlobSlot,
  type OpenBatch,
  type OpenedSmallFile,
  type SealBatch,
  type SealedBatch,
  type SealedSmallFile,
} from './small-file-protocol.js';

/** This thread's batch buffer, kept from batch to batch: fresh memory costs a page fault per 4 KiB. */
let scratch = new Uint8Array(0);

function scratchOf(bytes: number): Uint8Array {
  if (scratch.byteLength < bytes) scratch = new Uint8Array(bytes);
  return scratch;
}

const aadPrefix = new Uint8Array(LABEL.content.length + BLOB_HEADER_BYTES);
aadPrefix.set(ascii(LABEL.content));

type KeyMaterial = ReturnType<typeof keyMaterialOf>;

/** The job for all `count` chunks of a blob, whose chunk records are `records` (the blob after its header). */
function wholeBlob(
  op: 'seal' | 'open',
  material: KeyMaterial,
  chunkSize: number,
  count: number,
  records: Uint8Array,
) {
  aadPrefix.set(material.header, LABEL.content.length);
  return {
    op,
    key: material.key,
    noncePrefix: material.noncePrefix,
    aadPrefix,
    chunkSize,
    firstIndex: 0,
    count,
    lastLength: records.byteLength - (count - 1) * (chunkSize + TAG_BYTES) - TAG_BYTES,
    endsWithFinal: true,
    records,
  };
}

/**
 * Reads the file into its slot (one byte more than expected, to notice growth), spreads its chunks apart to make
 * room for their tags, and seals it there.
 */
function sealOne(
  sodium: SodiumBackend,
  path: string,
  size: number,
  material: KeyMaterial,
  shape: { chunkSize: number; padded: boolean },
  out: Uint8Array,
  at: number,
): SealedSmallFile {
  const { chunkSize, padded } = shape;
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    return { ok: false, code: (error as NodeJS.ErrnoException).code ?? 'EIO' };
  }
  const dataAt = at + BLOB_HEADER_BYTES;
  const slotEnd = at + smallBlobSlot(size, chunkSize, padded);
  // Whatever was read of a file that is not stored is wiped, not left in a buffer that is reused.
  const failed = (code: string): SealedSmallFile => {
    out.fill(0, dataAt, slotEnd);
    return { ok: false, code };
  };
  try {
    const before = fstatSync(fd);
    let got = 0;
    for (let n = -1; n !== 0 && got <= size; got += n)
      n = readSync(fd, out, dataAt + got, size + 1 - got, null);
    if (got !== size || before.size !== size || fileChanged(before, fstatSync(fd))) return failed('CHANGED');
    const total = blobPlaintextSize(size, padded);
    fillPadding(out.subarray(dataAt, dataAt + total), 0, size, total);
    const count = chunksOf(total, chunkSize);
    // Last chunk first: each moves right, onto bytes whose chunk has already moved.
    for (let i = count - 1; i > 0; i--) {
      out.copyWithin(
        dataAt + i * (chunkSize + TAG_BYTES),
        dataAt + i * chunkSize,
        dataAt + Math.min(total, (i + 1) * chunkSize),
      );
    }
    out.set(material.header, at);
    runBatch(sodium, wholeBlob('seal', material, chunkSize, count, out.subarray(dataAt, slotEnd)));
    return { ok: true, offset: at, length: slotEnd - at, mtimeMs: before.mtimeMs };
  } catch (error) {
    return failed((error as NodeJS.ErrnoException).code ?? 'EIO');
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads and seals a batch, each file in its own slot of this thread's buffer, then moves the sealed blobs together
 * and writes them as one pack; see {@link SealBatch}.
 */
export function sealSmallFiles(sodium: SodiumBackend, batch: SealBatch): SealedBatch {
  const out = scratchOf(
    batch.sizes.reduce((sum, size) => sum + smallBlobSlot(size, batch.chunkSize, batch.padded), 0),
  );
  const files: SealedSmallFile[] = [];
  let slot = 0;
  let packed = 0;
  batch.paths.forEach((path, i) => {
    const size = batch.sizes[i] ?? 0;
    const sealed = sealOne(sodium, path, size, keyMaterialOf(batch.material, i), batch, out, slot);
    if (sealed.ok) {
      out.copyWithin(packed, sealed.offset, sealed.offset + sealed.length);
      files.push({ ...sealed, offset: packed });
      packed += sealed.length;
    } else files.push(sealed);
    slot += smallBlobSlot(size, batch.chunkSize, batch.padded);
  });
  if (packed === 0) return { ok: true, files };
  try {
    writeFileAtomicSync(batch.pack, out.subarray(0, packed));
  } catch (error) {
    return { ok: false, ...errnoOf(error, 'write') };
  }
  return { ok: true, files };
}

/** Writes, stamps and fsyncs a new temp file; removes it again if any of that fails. */
function writeTemp(temp: string, plaintext: readonly Uint8Array[], mtime: number): void {
  // 0o666 less the user's umask, as `cp` would create it.
  const fd = openSync(temp, 'wx', 0o666);
  try {
    for (const part of plaintext) for (let at = 0; at < part.byteLength;) at += writeSync(fd, part, at);
    futimesSync(fd, new Date(mtime), new Date(mtime));
    fsyncSync(fd);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  } finally {
    closeSync(fd);
  }
}

/** A failed system call's code and name, as plain data (`syscall` when the error names none). */
function errnoOf(error: unknown, syscall: string): { code: string; syscall: string } {
  const cause = error as NodeJS.ErrnoException;
  return { code: cause.code ?? 'EIO', syscall: cause.syscall ?? syscall };
}

function ioFailure(error: unknown, syscall: string): OpenedSmallFile {
  return { ok: false, ...errnoOf(error, syscall) };
}

/**
 * Opens a blob's chunks in place and only if all authenticate writes the plaintext to its temp file and
 * publishes that at its target (see {@link publishFile}).
 */
function openOne(
  sodium: SodiumBackend,
  file: { temp: string; target: string; replace: boolean; mtime: number; size: number },
  records: Uint8Array,
  material: KeyMaterial,
  chunkSize: number,
): OpenedSmallFile {
  const job = wholeBlob(
    'open',
    material,
    chunkSize,
    Math.ceil(records.byteLength / (chunkSize + TAG_BYTES)),
    records,
  );
  const outcome = runBatch(sodium, job);
  if (outcome.failure) return { ok: false, failure: outcome.failure.reason };
  const opened = plaintextViews(job);
  const total = opened.reduce((sum, view) => sum + view.byteLength, 0);
  if (badPaddingAt(opened, 0, file.size, total) !== undefined) return { ok: false, failure: 'malformed' };
  try {
    writeTemp(file.temp, contentPart(opened, 0, file.size), file.mtime);
  } catch (error) {
    return ioFailure(error, 'write');
  }
  try {
    if (publishFile(file.temp, file.target, file.replace) === 'published') return { ok: true };
    rmSync(file.temp, { force: true });
    return { ok: false, exists: true };
  } catch (error) {
    rmSync(file.temp, { force: true });
    return ioFailure(error, 'rename');
  }
}

/** Packs opened for one batch, each once: a batch's files mostly come from one or two packs. */
class BatchPacks {
  readonly #fds = new Map<string, number>();

  /** Reads `length` bytes at `offset` of a pack into `into`; a short read leaves the rest as it was. */
  read(path: string, offset: number, into: Uint8Array): number {
    let fd = this.#fds.get(path);
    if (fd === undefined) {
      // As the main thread opens packs: never through a link planted since it checked, and only a regular file (a
      // pipe put in its place would be read as the pack; FORMAT.md section 8.1).
      fd = openSync(path, VAULT_READ_FLAGS);
      try {
        requireRegularFile(fstatSync(fd), path);
      } catch (error) {
        closeSync(fd);
        throw error;
      }
      this.#fds.set(path, fd);
    }
    let got = 0;
    for (let n = -1; n !== 0 && got < into.byteLength; got += n)
      n = readSync(fd, into, got, into.byteLength - got, offset + got);
    return got;
  }

  close(): void {
    for (const fd of this.#fds.values()) closeSync(fd);
  }
}

/** Reads a file's chunk record from its pack and restores it; see {@link openOne}. */
function restoreOne(sodium: SodiumBackend, batch: OpenBatch, i: number, packs: BatchPacks): OpenedSmallFile {
  const records = scratchOf(batch.lengths[i] ?? 0).subarray(0, batch.lengths[i] ?? 0);
  try {
    if (packs.read(batch.packs[i] ?? '', batch.offsets[i] ?? 0, records) < records.byteLength)
      return { ok: false, failure: 'truncated' };
  } catch (error) {
    return { ok: false, pack: errnoOf(error, 'read') };
  }
  const file = {
    temp: batch.temps[i] ?? '',
    target: batch.targets[i] ?? '',
    replace: batch.replace[i] ?? false,
    mtime: batch.mtimes[i] ?? 0,
    size: batch.sizes[i] ?? 0,
  };
  try {
    return openOne(sodium, file, records, keyMaterialOf(batch.material, i), batch.chunkSizes[i] ?? 0);
  } finally {
    records.fill(0);
  }
}

/**
 * Reads, opens, writes and publishes each file of a batch, then fsyncs each folder that got one, once; see
 * {@link OpenBatch}.
 */
export function openSmallFiles(sodium: SodiumBackend, batch: OpenBatch): OpenedSmallFile[] {
  const packs = new BatchPacks();
  let results: OpenedSmallFile[];
  try {
    results = batch.temps.map((_, i) => restoreOne(sodium, batch, i, packs));
  } finally {
    packs.close();
  }
  const folders = new Set(
    batch.targets.filter((_, i) => results[i]?.ok === true).map((target) => dirname(target)),
  );
  for (const folder of folders) {
    try {
      fsyncDirectorySync(folder);
    } catch (error) {
      // Published but not durable: the restore fails rather than report these as restored.
      batch.targets.forEach((target, i) => {
        if (results[i]?.ok === true && dirname(target) === folder) results[i] = ioFailure(error, 'fsync');
      });
    }
  }
  return results;
}
