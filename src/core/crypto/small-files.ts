/**
 * Small-file jobs, run on a crypto-pool worker. For an add: read small source files and seal each into a complete
 * one-chunk blob. For a restore: open one-chunk blobs and write each authenticated plaintext to its temp file, then
 * publish it at its target.
 * Either way another core does the system calls and the crypto while the main thread deals with the index and
 * publishing. Never log a batch: it carries content subkeys; the caller wipes `material` after the run.
 */
import { closeSync, fstatSync, fsyncSync, futimesSync, openSync, readSync, rmSync, writeSync } from 'node:fs';

import { dirname } from 'node:path';

import { fileChanged } from '../file-stat.js';
import { fsyncDirectorySync, publishFile } from '../publish.js';
import { ascii } from './bytes.js';
import { runBatch } from './chunk-batch.js';
import { LABEL, TAG_BYTES } from './constants.js';
import { BLOB_HEADER_BYTES } from './content.js';
import type { SodiumBackend } from './sodium.js';
import {
  keyMaterialOf,
  smallBlobSlot,
  type OpenBatch,
  type OpenedSmallFile,
  type SealBatch,
  type SealedSmallFile,
} from './small-file-protocol.js';

const aadPrefix = new Uint8Array(LABEL.content.length + BLOB_HEADER_BYTES);
aadPrefix.set(ascii(LABEL.content));

type KeyMaterial = ReturnType<typeof keyMaterialOf>;

/** The job for a blob's one and only (final) chunk, whose record is `records`. */
function onlyChunk(op: 'seal' | 'open', material: KeyMaterial, chunkSize: number, records: Uint8Array) {
  aadPrefix.set(material.header, LABEL.content.length);
  return {
    op,
    key: material.key,
    noncePrefix: material.noncePrefix,
    aadPrefix,
    chunkSize,
    firstIndex: 0,
    count: 1,
    lastLength: records.byteLength - TAG_BYTES,
    endsWithFinal: true,
    records,
  };
}

/** Reads the file into its slot (one byte more than expected, to notice growth) and seals it there. */
function sealOne(
  sodium: SodiumBackend,
  path: string,
  size: number,
  material: KeyMaterial,
  chunkSize: number,
  out: Uint8Array,
  at: number,
): SealedSmallFile {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    return { ok: false, code: (error as NodeJS.ErrnoException).code ?? 'EIO' };
  }
  const dataAt = at + BLOB_HEADER_BYTES;
  // Whatever was read of a file that is not stored is wiped, not left in a buffer that is reused.
  const failed = (code: string): SealedSmallFile => {
    out.fill(0, dataAt, dataAt + size + 1);
    return { ok: false, code };
  };
  try {
    const before = fstatSync(fd);
    let got = 0;
    for (let n = -1; n !== 0 && got <= size; got += n)
      n = readSync(fd, out, dataAt + got, size + 1 - got, null);
    if (got !== size || before.size !== size || fileChanged(before, fstatSync(fd))) return failed('CHANGED');
    out.set(material.header, at);
    runBatch(sodium, onlyChunk('seal', material, chunkSize, out.subarray(dataAt, dataAt + got + TAG_BYTES)));
    return { ok: true, offset: at, length: BLOB_HEADER_BYTES + got + TAG_BYTES, mtimeMs: before.mtimeMs };
  } catch (error) {
    return failed((error as NodeJS.ErrnoException).code ?? 'EIO');
  } finally {
    closeSync(fd);
  }
}

/** Reads and seals a batch into one buffer (the spare one when it is large enough); see {@link SealBatch}. */
export function sealSmallFiles(
  sodium: SodiumBackend,
  batch: SealBatch,
): { results: SealedSmallFile[]; buffer: Uint8Array } {
  const needed = batch.sizes.reduce((sum, size) => sum + smallBlobSlot(size), 0);
  const out = batch.spare && batch.spare.byteLength >= needed ? batch.spare : new Uint8Array(needed);
  const results: SealedSmallFile[] = [];
  let at = 0;
  batch.paths.forEach((path, i) => {
    const size = batch.sizes[i] ?? 0;
    results.push(sealOne(sodium, path, size, keyMaterialOf(batch.material, i), batch.chunkSize, out, at));
    at += smallBlobSlot(size);
  });
  return { results, buffer: out };
}

/** Writes, stamps and fsyncs a new temp file; removes it again if any of that fails. */
function writeTemp(temp: string, plaintext: Uint8Array, mtime: number): void {
  // 0o666 less the user's umask, as `cp` would create it.
  const fd = openSync(temp, 'wx', 0o666);
  try {
    for (let at = 0; at < plaintext.byteLength;) at += writeSync(fd, plaintext, at);
    futimesSync(fd, new Date(mtime), new Date(mtime));
    fsyncSync(fd);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  } finally {
    closeSync(fd);
  }
}

function ioFailure(error: unknown, syscall: string): OpenedSmallFile {
  const cause = error as NodeJS.ErrnoException;
  return { ok: false, code: cause.code ?? 'EIO', syscall: cause.syscall ?? syscall };
}

/**
 * Opens one blob's chunk in place and only if it authenticates writes the plaintext to its temp file and
 * publishes that at its target (see {@link publishFile}).
 */
function openOne(
  sodium: SodiumBackend,
  file: { temp: string; target: string; replace: boolean; mtime: number },
  records: Uint8Array,
  material: KeyMaterial,
  chunkSize: number,
): OpenedSmallFile {
  const outcome = runBatch(sodium, onlyChunk('open', material, chunkSize, records));
  if (outcome.failure) return { ok: false, failure: outcome.failure.reason };
  try {
    writeTemp(file.temp, records.subarray(0, records.byteLength - TAG_BYTES), file.mtime);
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

/**
 * Opens a batch, writes and publishes each authenticated file, then fsyncs each folder that got one, once; see
 * {@link OpenBatch}.
 */
export function openSmallFiles(sodium: SodiumBackend, batch: OpenBatch): OpenedSmallFile[] {
  const results: OpenedSmallFile[] = [];
  let at = 0;
  batch.temps.forEach((temp, i) => {
    const length = batch.lengths[i] ?? 0;
    const material = keyMaterialOf(batch.material, i);
    const file = {
      temp,
      target: batch.targets[i] ?? '',
      replace: batch.replace[i] ?? false,
      mtime: batch.mtimes[i] ?? 0,
    };
    results.push(openOne(sodium, file, batch.records.subarray(at, at + length), material, batch.chunkSize));
    at += length;
  });
  batch.records.fill(0);
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
