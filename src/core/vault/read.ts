import { open } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import { TAG_BYTES } from '../crypto/constants.js';
import {
  BLOB_HEADER_BYTES,
  blobLayout,
  ChunkCipher,
  chunkTransform,
  ContentDecryptor,
  parseBlobHeader,
  type ContentBinding,
} from '../crypto/content.js';
import { IntegrityError, InvalidArgumentError } from '../errors.js';
import { blobPath } from './layout.js';
import type { Session } from './session.js';
import type { TreeNode } from './tree.js';

function binding(session: Session, node: TreeNode): ContentBinding {
  return {
    vaultId: session.keys.vaultId,
    fileId: Buffer.from(node.fileId ?? '', 'hex'),
    label: `contents of "${session.tree.pathOf(node)}"`,
  };
}

/**
 * A streaming decryption of a whole file: emits each chunk only after it authenticated, and fails at the end if
 * the authenticated contents are not the size the index records.
 */
export function decryptedStream(session: Session, node: TreeNode): Readable {
  const decryptor = new ContentDecryptor(
    session.sodium,
    (id) => session.keys.keyring.find(id),
    binding(session, node),
  );
  let released = 0;
  const sizeCheck = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      released += chunk.length;
      done(null, chunk);
    },
    flush(done) {
      done(
        released === node.size
          ? null
          : new IntegrityError('malformed', {
              subject: `contents of "${session.tree.pathOf(node)}" (size differs from the index)`,
              fileId: node.fileId ?? '',
            }),
      );
    },
  });
  // Errors reach the consumer through sizeCheck, which pipeline destroys with the first error.
  pipeline(session.blobSource(node), chunkTransform(decryptor), sizeCheck).catch(() => undefined);
  return sizeCheck;
}

interface BlobBytes {
  readonly size: number;
  read(offset: number, length: number): Promise<Buffer>;
  close(): Promise<void>;
}

async function openBlob(session: Session, node: TreeNode): Promise<BlobBytes> {
  const content = session.db.content(Buffer.from(node.fileId ?? '', 'hex'));
  const inline = content?.inline_blob;
  if (inline) {
    return {
      size: inline.length,
      read: (offset, length) => Promise.resolve(inline.subarray(offset, offset + length)),
      close: () => Promise.resolve(),
    };
  }
  const handle = await open(blobPath(session.dir, node.fileId ?? ''), 'r').catch((error: unknown) => {
    throw session.missingBlob(node, error);
  });
  return {
    size: (await handle.stat()).size,
    async read(offset, length) {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, offset);
      return buffer.subarray(0, bytesRead);
    },
    close: () => handle.close(),
  };
}

/** Decrypts only the chunks that cover plaintext bytes [start, end] (inclusive), for previews. */
async function* rangeChunks(
  session: Session,
  node: TreeNode,
  start: number,
  end: number,
): AsyncGenerator<Buffer> {
  const blob = await openBlob(session, node);
  let cipher: ChunkCipher | undefined;
  try {
    const header = parseBlobHeader(await blob.read(0, BLOB_HEADER_BYTES), binding(session, node));
    const layout = blobLayout(blob.size, header.chunkSize, binding(session, node));
    if (layout.plaintextSize !== node.size) {
      throw new IntegrityError('truncated', {
        subject: `contents of "${session.tree.pathOf(node)}" (size differs from the index)`,
        fileId: node.fileId ?? '',
      });
    }
    const dek = session.keys.keyring.find(header.keyId);
    if (!dek)
      throw new IntegrityError('unknown-key', { subject: 'file contents', fileId: node.fileId ?? '' });
    cipher = new ChunkCipher(session.sodium, dek, binding(session, node), header);
    const record = header.chunkSize + TAG_BYTES;
    for (
      let index = Math.floor(start / header.chunkSize);
      index <= Math.floor(end / header.chunkSize);
      index++
    ) {
      const bytes = await blob.read(BLOB_HEADER_BYTES + index * record, record);
      const plaintext = cipher.open(index, bytes, index === layout.chunkCount - 1);
      const chunkStart = index * header.chunkSize;
      yield plaintext.subarray(
        Math.max(0, start - chunkStart),
        Math.min(plaintext.length, end - chunkStart + 1),
      );
    }
  } finally {
    cipher?.wipe();
    await blob.close();
  }
}

/**
 * A file's plaintext as a stream: the whole file, or bytes [start, end] inclusive.
 * @throws {@link InvalidArgumentError} for a range outside the file.
 */
export function readRange(
  session: Session,
  node: TreeNode,
  range?: { start: number; end: number },
): Readable {
  if (!range) return decryptedStream(session, node);
  const { start, end } = range;
  if (
    !Number.isSafeInteger(start) ||
    !Number.isSafeInteger(end) ||
    start < 0 ||
    end < start ||
    end >= node.size
  ) {
    throw new InvalidArgumentError(`Byte range ${start}-${end} is outside the file (${node.size} bytes).`);
  }
  return Readable.from(rangeChunks(session, node, start, end));
}
