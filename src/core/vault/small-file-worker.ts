/**
 * Worker-thread side of {@link SmallFileWorker}: reads small source files and seals each into a complete one-chunk
 * blob, so an add of many small files uses a second core for the system calls and the crypto while the main
 * thread seals records and commits rows. Never log a batch: it carries content subkeys, wiped after use.
 */
import { closeSync, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { parentPort } from 'node:worker_threads';

import { ascii } from '../crypto/bytes.js';
import { runBatch } from '../crypto/chunk-batch.js';
import { KEY_BYTES, LABEL, TAG_BYTES } from '../crypto/constants.js';
import { BLOB_HEADER_BYTES, NONCE_PREFIX_BYTES } from '../crypto/content.js';
import { loadNativeSodium } from '../crypto/sodium.js';
import {
  MATERIAL_BYTES,
  smallBlobSlot,
  type SealedSmallFile,
  type SmallFileBatch,
} from './small-file-protocol.js';

const sodium = loadNativeSodium();
const port = parentPort;
if (!sodium || !port) throw new Error('the small-file worker needs sodium-native and a parent thread');
const native = sodium;
const aadPrefix = new Uint8Array(LABEL.content.length + BLOB_HEADER_BYTES);
aadPrefix.set(ascii(LABEL.content));

function changed(before: Stats, after: Stats): boolean {
  return before.size !== after.size || before.mtimeMs !== after.mtimeMs || before.ctimeMs !== after.ctimeMs;
}

/** Reads the file into its slot (one byte more than expected, to notice growth) and seals it there. */
function sealOne(
  path: string,
  size: number,
  material: Uint8Array,
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
  try {
    const before = fstatSync(fd);
    const dataAt = at + BLOB_HEADER_BYTES;
    let got = 0;
    for (let n = -1; n !== 0 && got <= size; got += n)
      n = readSync(fd, out, dataAt + got, size + 1 - got, null);
    if (got !== size || before.size !== size || changed(before, fstatSync(fd)))
      return { ok: false, code: 'CHANGED' };
    const header = material.subarray(KEY_BYTES + NONCE_PREFIX_BYTES);
    out.set(header, at);
    aadPrefix.set(header, LABEL.content.length);
    runBatch(native, {
      op: 'seal',
      key: material.subarray(0, KEY_BYTES),
      noncePrefix: material.subarray(KEY_BYTES, KEY_BYTES + NONCE_PREFIX_BYTES),
      aadPrefix,
      chunkSize,
      firstIndex: 0,
      count: 1,
      lastLength: got,
      endsWithFinal: true,
      records: out.subarray(dataAt, dataAt + got + TAG_BYTES),
    });
    return { ok: true, offset: at, length: BLOB_HEADER_BYTES + got + TAG_BYTES, mtimeMs: before.mtimeMs };
  } catch (error) {
    return { ok: false, code: (error as NodeJS.ErrnoException).code ?? 'EIO' };
  } finally {
    closeSync(fd);
  }
}

port.on('message', (batch: SmallFileBatch) => {
  const needed = batch.sizes.reduce((sum, size) => sum + smallBlobSlot(size), 0);
  const out = batch.spare && batch.spare.byteLength >= needed ? batch.spare : new Uint8Array(needed);
  const results: SealedSmallFile[] = [];
  let at = 0;
  try {
    batch.paths.forEach((path, i) => {
      const size = batch.sizes[i] ?? 0;
      const material = batch.material.subarray(i * MATERIAL_BYTES, (i + 1) * MATERIAL_BYTES);
      results.push(sealOne(path, size, material, batch.chunkSize, out, at));
      at += smallBlobSlot(size);
    });
  } finally {
    native.memzero(batch.material);
  }
  port.postMessage({ id: batch.id, results, buffer: out }, [out.buffer as ArrayBuffer]);
});
port.postMessage({ ready: true });
