/**
 * Generates the committed known-answer vectors under tests/vectors/ (content, header, record, snapshot, log), one JSON
 * file per case,
 * named for the case. Run: npm run gen-vectors. Randomness is a seeded BLAKE2b stream, so output is reproducible;
 * tests check the committed bytes, so regenerating after a format change shows up as a diff to review.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { ascii, u16, u32 } from '../src/core/crypto/bytes.js';
import { LABEL, NONCE_BYTES } from '../src/core/crypto/constants.js';
import {
  BLOB_HEADER_BYTES,
  ChunkCipher,
  ContentDecryptor,
  ContentEncryptor,
  encodeBlobHeader,
  type BlobHeader,
  type ContentBinding,
} from '../src/core/crypto/content.js';
import { KDF_PRESETS } from '../src/core/crypto/kdf.js';
import { blobPlaintextSize, fillPadding } from '../src/core/crypto/padding.js';
import { deriveSubkey, Keyring, SecretKey } from '../src/core/crypto/keys.js';
import {
  addInto,
  encodeRow,
  IndexCommitter,
  ROW_TABLE,
  type SqlValue,
} from '../src/core/crypto/index-commitment.js';
import { RecordSealer } from '../src/core/crypto/record.js';
import { loadNativeSodium, type SodiumBackend } from '../src/core/crypto/sodium.js';
import { changePassphraseSlot, replaceRecoverySlot } from '../src/core/crypto/key-slots.js';
import { RecoveryKey } from '../src/core/crypto/recovery-key.js';
import {
  addPassphraseSlot,
  createVaultKeys,
  parseVaultHeader,
  type UnlockSecret,
} from '../src/core/crypto/vault-header.js';
import { CofferError, IntegrityError } from '../src/core/errors.js';
import { LogSealer } from '../src/core/vault/log-entry.js';
import {
  openSnapshot,
  sealSnapshot,
  snapshotPlaintextSize,
  type SnapshotKeys,
} from '../src/core/vault/snapshot.js';
import type { TreeNode } from '../src/core/vault/tree.js';
import type {
  CommitmentRow,
  ContentVector,
  Expectation,
  IndexCommitmentVector,
  VectorValue,
  HeaderVector,
  LogVector,
  RecordVector,
  SnapshotEntry,
  SnapshotVector,
} from '../tests/helpers/vector-schema.js';
import { VECTOR_ROOT } from '../tests/helpers/vector-schema.js';
import { flipped } from '../tests/helpers/backends.js';
import { readThroughRecord } from '../tests/helpers/file-content.js';

const native = loadNativeSodium();
if (!native) throw new Error('gen-vectors needs sodium-native');

/** The same backend with randomness drawn from BLAKE2b(seed ‖ counter): reproducible vectors, nothing else changed. */
function seeded(base: SodiumBackend, seed: string): SodiumBackend {
  let counter = 0;
  return {
    ...base,
    randomBytes(length: number) {
      const out = Buffer.alloc(length);
      for (let filled = 0; filled < length; filled += 64) {
        const block = base.blake2b(64, Buffer.concat([ascii(seed), u32(counter++)]));
        block.copy(out, filled, 0, Math.min(64, length - filled));
      }
      return out;
    },
  };
}

const sodium = seeded(native, 'coffer test vectors');
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const pattern = (length: number, salt = 0): Buffer =>
  Buffer.from(Array.from({ length }, (_, i) => (i * 31 + salt) % 251));

const EXPECT_BY_CODE: Partial<Record<string, Exclude<Expectation, 'success'>>> = {
  INTEGRITY: 'integrity',
  UNSUPPORTED_FORMAT: 'unsupported-format',
  WRONG_PASSPHRASE: 'wrong-passphrase',
  KDF_LIMIT: 'kdf-limit',
  NOT_A_VAULT: 'not-a-vault',
};

function outcomeOf(error: unknown): Pick<ContentVector, 'expect' | 'reason'> {
  if (error === undefined) return { expect: 'success' };
  const expect = error instanceof CofferError ? EXPECT_BY_CODE[error.code] : undefined;
  if (!expect) throw new Error('unexpected failure while generating vectors', { cause: error });
  return error instanceof IntegrityError ? { expect, reason: error.reason } : { expect };
}

/** What `open` returns, or the outcome its error stands for: how a keyed vector (snapshot, log) is recorded. */
function attempt<T>(open: () => T): { value?: T } & Pick<ContentVector, 'expect' | 'reason'> {
  try {
    return { value: open(), ...outcomeOf(undefined) };
  } catch (error) {
    return outcomeOf(error);
  }
}

function write(kind: string, vector: { name: string }): void {
  writeFileSync(join(VECTOR_ROOT, kind, `${vector.name}.json`), `${JSON.stringify(vector, null, 2)}\n`);
}

for (const kind of ['content', 'header', 'record', 'snapshot', 'index-commitment', 'log']) {
  rmSync(join(VECTOR_ROOT, kind), { recursive: true, force: true });
  mkdirSync(join(VECTOR_ROOT, kind), { recursive: true });
}

// ---------------------------------------------------------------- content
const CS = 64;
const dekBytes = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex');
const keyId = 7;
const vaultId = Buffer.from('a0a1a2a3a4a5a6a7a8a9aaabacadaeaf', 'hex');
const fileId = Buffer.from('f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff', 'hex');
const otherFileId = Buffer.from('e0e1e2e3e4e5e6e7e8e9eaebecedeeef', 'hex');
const otherVaultId = Buffer.from('b0b1b2b3b4b5b6b7b8b9babbbcbdbebf', 'hex');
const dek = (): SecretKey => SecretKey.copyOf(sodium, dekBytes);
const binding: ContentBinding = { vaultId, fileId };

function headerFor(fields: Partial<Omit<BlobHeader, 'bytes'>> = {}): BlobHeader {
  return encodeBlobHeader({
    chunkSize: CS,
    keyId,
    fileId,
    noncePrefix: Buffer.from('101112131415161718191a1b1c1d1e1f', 'hex'),
    ...fields,
  });
}

function encrypt(plaintext: Buffer, header = headerFor(), bind = binding): Buffer {
  const encryptor = new ContentEncryptor(sodium, dek(), bind, header);
  const out: Buffer[] = [];
  encryptor.push(plaintext, (bytes) => out.push(bytes));
  encryptor.finish((bytes) => out.push(bytes));
  return Buffer.concat(out);
}

/** Seals chunks one by one with chosen final flags, for encodings no honest writer produces. */
function craft(header: BlobHeader, chunks: { plaintext: Buffer; final: boolean }[]): Buffer {
  const cipher = new ChunkCipher(sodium, dek(), binding, header);
  const out = Buffer.concat([header.bytes, ...chunks.map((c, i) => cipher.seal(i, c.plaintext, c.final))]);
  cipher.wipe();
  return out;
}

/** A file's padded plaintext (section 5.7): content, zeros, u64 size. */
function padded(content: Buffer): Buffer {
  const total = blobPlaintextSize(content.length, true);
  const out = Buffer.alloc(total);
  content.copy(out);
  fillPadding(out, 0, content.length, total);
  return out;
}

function contentVector(
  name: string,
  description: string,
  blob: Buffer,
  expectedFileId = fileId,
  fileSize?: number,
): void {
  const keyring = new Keyring();
  keyring.add(keyId, dek());
  const decryptor = new ContentDecryptor(sodium, (id) => keyring.find(id), {
    vaultId,
    fileId: expectedFileId,
  });
  const released: Buffer[] = [];
  let error: unknown;
  try {
    decryptor.push(blob, (bytes) => released.push(bytes));
    decryptor.finish((bytes) => released.push(bytes));
  } catch (caught) {
    error = caught;
  }
  const all = Buffer.concat(released);
  const vector: ContentVector = {
    name,
    description,
    ...outcomeOf(error),
    dek: hex(dekBytes),
    keyId,
    vaultId: hex(vaultId),
    fileId: hex(expectedFileId),
    blob: hex(blob),
    releasedSha256: sha256(all),
    releasedBytes: all.length,
  };
  if (fileSize !== undefined) {
    let file: NonNullable<ContentVector['file']>;
    try {
      const binding = { vaultId, fileId: expectedFileId };
      const content = readThroughRecord(sodium, blob, fileSize, (id) => keyring.find(id), binding);
      file = { expect: 'success', sha256: sha256(content), bytes: content.length };
    } catch (caught) {
      file = outcomeOf(caught);
    }
    Object.assign(vector, { fileSize, file });
  }
  write('content', vector);
}

const RECORD = CS + 16;
const base = pattern(150);
const blob150 = encrypt(base);
const rec = (blob: Buffer, i: number): Buffer =>
  blob.subarray(BLOB_HEADER_BYTES + i * RECORD, BLOB_HEADER_BYTES + (i + 1) * RECORD);
const flip = (bytes: Buffer, offset: number): Buffer => flipped(bytes, offset);
const withHeader = (header: Buffer): Buffer => Buffer.concat([header, blob150.subarray(BLOB_HEADER_BYTES)]);
const headerField = (offset: number, bytes: Buffer): Buffer => {
  const header = Buffer.from(blob150.subarray(0, BLOB_HEADER_BYTES));
  bytes.copy(header, offset);
  return withHeader(header);
};

for (const [name, size] of [
  ['empty', 0],
  ['one-byte', 1],
  ['chunk-minus-one', CS - 1],
  ['exact-chunk', CS],
  ['chunk-plus-one', CS + 1],
  ['two-exact-chunks', 2 * CS],
  ['three-chunks-short-final', 150],
] as const) {
  contentVector(`success-${name}`, `${size} plaintext bytes with ${CS}-byte chunks`, encrypt(pattern(size)));
}
contentVector(
  'success-default-chunk-size',
  '65537 bytes with the default 64 KiB chunk size: one full chunk and a 1-byte final chunk',
  encrypt(pattern(65537), headerFor({ chunkSize: 65536 })),
);

contentVector('header-magic-flipped', 'first magic byte changed', flip(blob150, 0));
contentVector('header-version-2', 'format version field set to 2', headerField(8, u16(2)));
contentVector('header-algorithm-2', 'algorithm id set to 2', headerField(10, Buffer.of(2)));
contentVector('header-flags-set', 'unknown flag bit 1 set', headerField(11, Buffer.of(2)));
contentVector(
  'header-padded-flag-set',
  'the padded flag set on an unpadded blob: the header is in every AAD',
  headerField(11, Buffer.of(1)),
);
contentVector('header-chunk-size-changed', 'chunk size edited from 64 to 65', headerField(12, u32(65)));
contentVector(
  'header-chunk-size-too-small',
  'chunk size edited to 32, below the minimum',
  headerField(12, u32(32)),
);
contentVector(
  'header-key-id-unknown',
  'key id edited to one the vault does not have',
  headerField(16, u32(8)),
);
contentVector('header-file-id-flipped', 'one byte of the file id changed', flip(blob150, 20));
contentVector('header-nonce-prefix-flipped', 'one byte of the nonce prefix changed', flip(blob150, 36));
contentVector(
  'chunk-body-flipped',
  'one ciphertext byte of chunk 1 flipped',
  flip(blob150, BLOB_HEADER_BYTES + RECORD + 5),
);
contentVector(
  'chunk-tag-flipped',
  'last tag byte of chunk 0 flipped',
  flip(blob150, BLOB_HEADER_BYTES + RECORD - 1),
);
contentVector(
  'final-chunk-flipped',
  'one byte of the final chunk flipped',
  flip(blob150, blob150.length - 20),
);
contentVector('truncated-inside-header', 'only the first 30 bytes', blob150.subarray(0, 30));
contentVector('truncated-after-header', 'the header and no chunk', blob150.subarray(0, BLOB_HEADER_BYTES));
contentVector(
  'truncated-at-chunk-boundary',
  'final chunk dropped',
  blob150.subarray(0, BLOB_HEADER_BYTES + 2 * RECORD),
);
contentVector(
  'truncated-after-first-chunk',
  'everything after chunk 0 dropped',
  blob150.subarray(0, BLOB_HEADER_BYTES + RECORD),
);
contentVector(
  'truncated-mid-chunk',
  'cut in the middle of chunk 1',
  blob150.subarray(0, BLOB_HEADER_BYTES + RECORD + 40),
);
contentVector('truncated-mid-final-chunk', 'last 5 bytes cut', blob150.subarray(0, blob150.length - 5));
contentVector(
  'reordered-chunks',
  'chunks 0 and 1 swapped',
  Buffer.concat([blob150.subarray(0, BLOB_HEADER_BYTES), rec(blob150, 1), rec(blob150, 0), rec(blob150, 2)]),
);
contentVector(
  'duplicated-chunk',
  'chunk 0 repeated',
  Buffer.concat([
    blob150.subarray(0, BLOB_HEADER_BYTES),
    rec(blob150, 0),
    rec(blob150, 0),
    rec(blob150, 1),
    rec(blob150, 2),
  ]),
);
contentVector(
  'dropped-middle-chunk',
  'chunk 1 removed',
  Buffer.concat([blob150.subarray(0, BLOB_HEADER_BYTES), rec(blob150, 0), rec(blob150, 2)]),
);
const otherBlob = encrypt(pattern(150, 7), headerFor({ fileId: otherFileId }), {
  vaultId,
  fileId: otherFileId,
});
contentVector(
  'chunk-spliced-from-other-file',
  'chunk 1 replaced by chunk 1 of another file of the same vault (same DEK)',
  Buffer.concat([
    blob150.subarray(0, BLOB_HEADER_BYTES),
    rec(blob150, 0),
    rec(otherBlob, 1),
    rec(blob150, 2),
  ]),
);
contentVector('blob-of-other-file', "another file's whole blob presented as this file", otherBlob);
contentVector(
  'blob-of-other-file-header-rewritten',
  "another file's blob with its header's file id rewritten to this file's",
  Buffer.concat([headerFor({ fileId }).bytes.subarray(0, 36), otherBlob.subarray(36)]),
);
contentVector(
  'blob-from-other-vault',
  'same DEK bytes, same file id, sealed for another vault id',
  encrypt(base, headerFor(), { vaultId: otherVaultId, fileId }),
);
const blob128 = encrypt(pattern(128));
contentVector(
  'trailing-byte-after-full-final',
  'one byte appended after a full final chunk',
  Buffer.concat([blob128, Buffer.of(0)]),
);
contentVector(
  'trailing-byte-after-short-final',
  'one byte appended after a short final chunk',
  Buffer.concat([blob150, Buffer.of(0)]),
);
{
  const cipher = new ChunkCipher(sodium, dek(), binding, headerFor());
  contentVector(
    'chunk-appended-after-final',
    'a validly sealed chunk 2 appended after the final chunk 1',
    Buffer.concat([blob128, cipher.seal(2, pattern(CS), false)]),
  );
  cipher.wipe();
}
contentVector(
  'final-flag-missing',
  'the last chunk sealed as non-final',
  craft(headerFor(), [
    { plaintext: pattern(CS), final: false },
    { plaintext: pattern(CS), final: false },
  ]),
);
contentVector(
  'final-flag-on-first-chunk',
  'chunk 0 sealed as final, then another chunk',
  craft(headerFor(), [
    { plaintext: pattern(CS), final: true },
    { plaintext: pattern(10), final: true },
  ]),
);
contentVector(
  'empty-final-after-full-chunk',
  'a full chunk followed by an empty final chunk (non-canonical)',
  craft(headerFor(), [
    { plaintext: pattern(CS), final: false },
    { plaintext: Buffer.alloc(0), final: true },
  ]),
);
contentVector('empty-blob', 'zero bytes', Buffer.alloc(0));

// Padded blobs (section 5.7), read as the contents of a file of the given size.
const paddedHeader = (fields: Partial<Omit<BlobHeader, 'bytes'>> = {}): BlobHeader =>
  headerFor({ padded: true, ...fields });
for (const [name, size, chunkSize, note] of [
  ['empty', 0, CS, '8 bytes: the size alone'],
  ['one-byte', 1, CS, 'padded to 10'],
  ['one-full-chunk', 56, CS, 'padded to 64: exactly one chunk'],
  ['two-chunks', 57, CS, 'padded to 72: the size in the second chunk'],
  ['three-chunks', 150, CS, 'padded to 160'],
  ['size-across-chunks', 100, 107, 'padded to 112 with 107-byte chunks: the size spans the two chunks'],
  ['default-chunk-size', 65537, 65536, 'padded to 67584: two chunks of 64 KiB'],
] as const) {
  const content = pattern(size, 3);
  contentVector(
    `padded-${name}`,
    `${size} bytes, ${note}`,
    encrypt(padded(content), paddedHeader({ chunkSize })),
    fileId,
    size,
  );
}
const padded150 = padded(pattern(150, 3));
contentVector(
  'padded-unpadded-blob-of-old-vault',
  'no padded flag: the plaintext is the whole file, as written before padding existed',
  blob150,
  fileId,
  150,
);
{
  const nonZero = Buffer.from(padded150);
  nonZero[151] = 1;
  const otherSize = Buffer.from(padded150);
  otherSize.writeBigUInt64LE(149n, otherSize.length - 8);
  // The blob of a 150-byte file (or one sealed wrongly by a key holder), read as a file of the given size.
  for (const [name, description, plaintext, size] of [
    [
      'padded-record-size-other-bucket',
      "the record's size (200) pads to 208, but the blob holds 160 bytes",
      padded150,
      200,
    ],
    [
      'padded-record-size-same-bucket',
      "the record's size (151) pads to 160 like the blob, but the size the blob ends with is 150",
      padded150,
      151,
    ],
    [
      'padded-padding-byte-not-zero',
      'a padding byte between the content and the size is 1 (sealed so, by a key holder)',
      nonZero,
      150,
    ],
    [
      'padded-size-trailer-other',
      'the size at the end says 149 (sealed so, by a key holder); the record says 150',
      otherSize,
      150,
    ],
  ] as const) {
    contentVector(name, description, encrypt(plaintext, paddedHeader()), fileId, size);
  }
}
contentVector(
  'padded-padding-ciphertext-flipped',
  'one ciphertext byte of the padding changed',
  flip(encrypt(padded150, paddedHeader()), BLOB_HEADER_BYTES + 2 * RECORD + 25),
  fileId,
  150,
);
contentVector(
  'padded-flag-cleared',
  'the padded flag cleared on a padded blob',
  (() => {
    const blob = encrypt(padded150, paddedHeader());
    blob[11] = 0;
    return blob;
  })(),
  fileId,
  150,
);

// ---------------------------------------------------------------- record
const recordId = Buffer.from('c0c1c2c3c4c5c6c7c8c9cacbcccdcecf', 'hex');
function recordVector(
  name: string,
  description: string,
  sealed: Buffer,
  open: { vaultId?: Buffer; recordId?: Buffer; keyId?: number; version?: bigint } = {},
): void {
  const keyring = new Keyring();
  keyring.add(keyId, dek());
  const sealer = new RecordSealer(sodium, keyring, open.vaultId ?? vaultId);
  const bind = { recordId: open.recordId ?? recordId, keyId: open.keyId ?? keyId, version: open.version };
  let plaintext: Buffer | undefined;
  let error: unknown;
  try {
    plaintext = sealer.open(bind, sealed);
  } catch (caught) {
    error = caught;
  }
  const vector: RecordVector = {
    name,
    description,
    ...outcomeOf(error),
    dek: hex(dekBytes),
    keyId: bind.keyId,
    vaultId: hex(open.vaultId ?? vaultId),
    recordId: hex(bind.recordId),
    ...(bind.version === undefined ? {} : { version: bind.version.toString() }),
    sealed: hex(sealed),
    ...(plaintext ? { plaintext: hex(plaintext) } : {}),
  };
  write('record', vector);
}
{
  const keyring = new Keyring();
  keyring.add(keyId, dek());
  const sealer = new RecordSealer(sodium, keyring, vaultId);
  const json = Buffer.from(
    JSON.stringify({ name: 'Tax return 2025.pdf', size: 48213, mtime: 1767225600000 }),
  );
  const sealed = sealer.seal({ recordId, keyId }, json);
  recordVector('success', 'a record sealed for this row', sealed);
  recordVector(
    'success-empty',
    'an empty record (padding only)',
    sealer.seal({ recordId, keyId }, Buffer.alloc(0)),
  );
  recordVector(
    'success-block-length',
    'a 256-byte record: padding adds a whole bucket',
    sealer.seal({ recordId, keyId }, pattern(256)),
  );
  recordVector('byte-flipped', 'one ciphertext byte flipped', flip(sealed, 30));
  recordVector('moved-to-other-row', 'the sealed record read from another row', sealed, {
    recordId: Buffer.from('d0d1d2d3d4d5d6d7d8d9dadbdcdddedf', 'hex'),
  });
  recordVector('from-other-vault', 'the sealed record read in another vault', sealed, {
    vaultId: otherVaultId,
  });
  recordVector('unknown-key-id', 'the row names a key id the vault does not have', sealed, { keyId: 9 });
  recordVector('truncated', 'shorter than a nonce and a tag', sealed.subarray(0, 30));
  const subkey = deriveSubkey(sodium, dek(), LABEL.recordKey, vaultId);
  const nonce = sodium.randomBytes(NONCE_BYTES);
  const aad = Buffer.concat([ascii(LABEL.record), vaultId, recordId, u32(keyId)]);
  const oldPadded = Buffer.alloc(Math.ceil((json.length + 1) / 32) * 32);
  json.copy(oldPadded);
  oldPadded[json.length] = 0x80;
  // A nonce of its own that draws nothing from the seeded stream, so the vectors after it keep their bytes.
  const oldNonce = sodium.blake2b(NONCE_BYTES, ascii('success-padded-to-32'));
  recordVector(
    'success-padded-to-32',
    'padded to a multiple of 32 bytes, as writers before format 1.1 did',
    Buffer.concat([oldNonce, sodium.aeadEncrypt(oldPadded, aad, oldNonce, subkey.bytes)]),
  );
  recordVector(
    'bad-padding',
    'authenticates, but the plaintext is not padded (32 zero bytes)',
    Buffer.concat([nonce, sodium.aeadEncrypt(Buffer.alloc(32), aad, nonce, subkey.bytes)]),
  );
  subkey.wipe();
}

// ---------------------------------------------------------------- header
const PASSPHRASE = 'correct horse battery staple';
const SECOND = 'Tr0ub4dor & 3 — ünïcödé';
const encode = (text: string): Buffer => Buffer.from(text.normalize('NFC'), 'utf8');

async function headerVector(
  name: string,
  description: string,
  header: Buffer,
  passphrase = PASSPHRASE,
  recoveryKey?: string,
): Promise<void> {
  const { unlockVaultKeys } = await import('../src/core/crypto/vault-header.js');
  let error: unknown;
  let extra: Pick<HeaderVector, 'vaultId' | 'deks'> = {};
  const secret: UnlockSecret =
    recoveryKey === undefined ? encode(passphrase) : RecoveryKey.parse(sodium, recoveryKey);
  try {
    const keys = await unlockVaultKeys(sodium, header, secret);
    const deks: Record<string, string> = {};
    for (const id of keys.keyring.keyIds)
      deks[String(id)] = hex(keys.keyring.find(id)?.bytes ?? Buffer.alloc(0));
    extra = { vaultId: hex(keys.vaultId), deks };
    keys.wipe();
  } catch (caught) {
    error = caught;
  }
  const vector: HeaderVector = {
    name,
    description,
    ...outcomeOf(error),
    ...(recoveryKey === undefined ? { passphrase } : { recoveryKey }),
    header: hex(header),
    ...extra,
  };
  write('header', vector);
}

/** Edits header bytes and recomputes the unkeyed checksum, as a deliberate attacker would. */
function edit(header: Buffer, offset: number, bytes: Buffer): Buffer {
  const out = Buffer.from(header);
  bytes.copy(out, offset);
  native?.blake2b(32, out.subarray(0, out.length - 32)).copy(out, out.length - 32);
  return out;
}

async function headers(): Promise<void> {
  const { headerBytes, keys } = await createVaultKeys(sodium, encode(PASSPHRASE), KDF_PRESETS.interactive);
  const twoSlots = await addPassphraseSlot(
    sodium,
    keys,
    headerBytes,
    encode(SECOND),
    KDF_PRESETS.interactive,
  );
  keys.wipe();
  const parsed = parseVaultHeader(sodium, headerBytes);
  if (parsed.slots.length !== 1) throw new Error('unexpected slot count');
  const SLOT = 32; // first slot's offset: magic 8, version 2, reserved 2, vault id 16, counts 4
  await headerVector('success', 'one passphrase slot at the INTERACTIVE floor', headerBytes);
  await headerVector(
    'success-second-slot',
    'two slots; unlocked with the second passphrase (NFC, non-ASCII)',
    twoSlots,
    SECOND,
  );
  await headerVector('success-two-slots-first', 'two slots; unlocked with the first passphrase', twoSlots);
  await headerVector(
    'wrong-passphrase',
    'a passphrase no slot accepts',
    headerBytes,
    'correct horse battery stapler',
  );
  await headerVector('not-a-vault', 'magic bytes changed', edit(headerBytes, 0, ascii('X')));
  await headerVector(
    'unsupported-version',
    'format version 2, checksum recomputed (as a newer Coffer writes it)',
    edit(headerBytes, 8, u16(2)),
  );
  await headerVector(
    'damaged-version',
    'a bit of the version field flipped (1 reads as 3), checksum left alone: damage, not a newer format',
    flipped(headerBytes, 8, 2),
  );
  await headerVector(
    'damaged-salt',
    'one salt byte flipped, checksum left alone',
    flip(headerBytes, SLOT + 12),
  );
  await headerVector('damaged-checksum', 'checksum byte flipped', flip(headerBytes, headerBytes.length - 1));
  await headerVector('truncated', 'last 10 bytes missing', headerBytes.subarray(0, headerBytes.length - 10));
  await headerVector(
    'trailing-byte',
    'a byte appended, checksum recomputed',
    edit(Buffer.concat([headerBytes, Buffer.of(0)]), 0, Buffer.alloc(0)),
  );
  await headerVector(
    'reserved-field-set',
    'reserved field set, checksum recomputed',
    edit(headerBytes, 10, u16(1)),
  );
  await headerVector(
    'kdf-memlimit-over-ceiling',
    'memlimit set to 4 GiB, checksum recomputed',
    edit(headerBytes, SLOT + 8, u32(4 * 1024 * 1024)),
  );
  await headerVector(
    'kdf-opslimit-over-ceiling',
    'opslimit set to 1000, checksum recomputed',
    edit(headerBytes, SLOT + 4, u32(1000)),
  );
  await headerVector(
    'kdf-opslimit-below-floor',
    'opslimit set to 1, checksum recomputed',
    edit(headerBytes, SLOT + 4, u32(1)),
  );
  await headerVector(
    'kdf-memlimit-below-floor',
    'memlimit set to 8 MiB, checksum recomputed',
    edit(headerBytes, SLOT + 8, u32(8192)),
  );
  await headerVector(
    'kdf-params-edited-within-limits',
    'opslimit 2 -> 3 with checksum recomputed: the slot no longer opens, indistinguishable from a wrong passphrase',
    edit(headerBytes, SLOT + 4, u32(3)),
  );
  await headerVector(
    'vault-id-edited',
    'vault id byte changed, checksum recomputed',
    edit(headerBytes, 12, Buffer.of(0xff)),
  );
  const dekOffset = SLOT + 100;
  await headerVector(
    'dek-entry-edited',
    'a byte of the wrapped DEK changed, checksum recomputed: caught by the header MAC',
    edit(headerBytes, dekOffset + 30, Buffer.of((headerBytes[dekOffset + 30] ?? 0) ^ 1)),
  );
  await headerVector(
    'slot-removed',
    'second slot deleted from a two-slot header (count and checksum fixed): caught by the header MAC',
    edit(Buffer.concat([twoSlots.subarray(0, SLOT + 100), twoSlots.subarray(SLOT + 200)]), 28, Buffer.of(1)),
  );
}

await headers();

/**
 * Several slots and the recovery slot (FORMAT.md 4.2.1, 4.6). Their own seeded stream, so the vectors above keep
 * their committed bytes.
 */
async function keySlotHeaders(): Promise<void> {
  const slotSodium = seeded(native as SodiumBackend, 'coffer key-slot vectors');
  const created = await createVaultKeys(slotSodium, encode(PASSPHRASE), KDF_PRESETS.interactive);
  const { keys } = created;
  let header = await addPassphraseSlot(
    slotSodium,
    keys,
    created.headerBytes,
    encode(SECOND),
    KDF_PRESETS.interactive,
  );
  header = await addPassphraseSlot(slotSodium, keys, header, encode('third'), KDF_PRESETS.interactive);
  const first = await replaceRecoverySlot(slotSodium, keys, header);
  const firstKey = first.recoveryKey.format(slotSodium);
  const withRecovery = first.headerBytes;
  const second = await replaceRecoverySlot(slotSodium, keys, withRecovery);
  const secondKey = second.recoveryKey.format(slotSodium);
  const changed = await changePassphraseSlot(
    slotSodium,
    keys,
    withRecovery,
    encode('changed'),
    KDF_PRESETS.interactive,
  );
  keys.wipe();
  const RECOVERY = 32 + 3 * 100; // the recovery slot follows three passphrase slots
  await headerVector(
    'several-slots-third',
    'three passphrase slots and a recovery slot; unlocked with the third passphrase',
    withRecovery,
    'third',
  );
  await headerVector(
    'recovery-key',
    'three passphrase slots and a recovery slot; unlocked with the recovery key (printed form)',
    withRecovery,
    PASSPHRASE,
    firstKey,
  );
  await headerVector(
    'recovery-key-lower-case-spaced',
    'the same recovery key in lower case with spaces instead of dashes',
    withRecovery,
    PASSPHRASE,
    firstKey.toLowerCase().replaceAll('-', ' '),
  );
  await headerVector(
    'recovery-key-revoked',
    'the first recovery key against the header whose recovery slot was replaced',
    second.headerBytes,
    PASSPHRASE,
    firstKey,
  );
  await headerVector(
    'recovery-key-replaced',
    'the second recovery key against the header whose recovery slot was replaced',
    second.headerBytes,
    PASSPHRASE,
    secondKey,
  );
  await headerVector(
    'passphrase-changed-old',
    'the first passphrase after its slot was rewritten for another one',
    changed.headerBytes,
  );
  await headerVector(
    'passphrase-changed-new',
    'the new passphrase of the rewritten first slot',
    changed.headerBytes,
    'changed',
  );
  await headerVector(
    'recovery-slot-memlimit-set',
    'recovery slot with a non-zero memlimit, checksum recomputed',
    edit(withRecovery, RECOVERY + 8, u32(65536)),
    PASSPHRASE,
    firstKey,
  );
  await headerVector(
    'recovery-slot-argon2id',
    'recovery slot (type 2) claiming KDF algorithm 1, checksum recomputed',
    edit(withRecovery, RECOVERY + 1, Buffer.of(1)),
    PASSPHRASE,
    firstKey,
  );
  await headerVector(
    'slot-type-3',
    'a slot of unknown type 3, checksum recomputed',
    edit(withRecovery, RECOVERY, Buffer.of(3)),
  );
  const slotCount = withRecovery[28] ?? 0;
  const recoverySlot = withRecovery.subarray(RECOVERY, RECOVERY + 100);
  await headerVector(
    'two-recovery-slots',
    'the recovery slot duplicated (count and checksum fixed)',
    edit(
      Buffer.concat([
        withRecovery.subarray(0, RECOVERY + 100),
        recoverySlot,
        withRecovery.subarray(RECOVERY + 100),
      ]),
      28,
      Buffer.of(slotCount + 1),
    ),
  );
}

await keySlotHeaders();

// ---------------------------------------------------------------- snapshot
// Last, so the seeded randomness drawn by the kinds above (and their committed bytes) stays as it was.
/** The keys of the vault `forVault` holding the test DEK: what snapshots and log entries are sealed with. */
function snapshotKeys(forVault: Buffer): SnapshotKeys {
  const keyring = new Keyring();
  keyring.add(keyId, dek());
  return { sodium, keyring, vaultId: forVault };
}

function entriesOf(nodes: readonly TreeNode[]): SnapshotEntry[] {
  return [...nodes]
    .sort((a, b) => a.id.localeCompare(b.id))
    .map(({ id, keyId: entryKeyId, type, name, parent, size, mtime, fileId: entryFileId }) => ({
      id,
      keyId: entryKeyId,
      type,
      name,
      parent,
      size,
      mtime,
      ...(entryFileId === undefined ? {} : { fileId: entryFileId }),
    }));
}

/** The fields naming the DEK and vault a keyed vector (snapshot, log) is opened with. */
function keyedBy(forVault: Buffer): { dek: string; keyId: number; vaultId: string } {
  return { dek: hex(dekBytes), keyId, vaultId: hex(forVault) };
}

function snapshotVector(name: string, description: string, stored: Buffer, forVault = vaultId): void {
  const { value: opened, ...outcome } = attempt(() => openSnapshot(snapshotKeys(forVault), stored));
  const nodes = opened?.nodes;
  const sum = opened?.sum;
  const vector: SnapshotVector = {
    name,
    description,
    ...outcome,
    ...keyedBy(forVault),
    stored: hex(stored),
    ...(nodes ? { entries: entriesOf(nodes) } : {}),
    ...(sum ? { sum: hex(sum) } : {}),
  };
  write('snapshot', vector);
}

{
  const folder = 'd0d1d2d3d4d5d6d7d8d9dadbdcdddedf';
  const tree: TreeNode[] = [
    { type: 'folder', name: 'Fotos', parent: null, size: 0, mtime: 1767225600000, id: folder, keyId },
    {
      type: 'file',
      name: 'Été 2025 — plage.jpg',
      parent: folder,
      size: 2_345_678,
      mtime: 1767225600123.5,
      fileId: hex(fileId),
      id: 'c0c1c2c3c4c5c6c7c8c9cacbcccdcecf',
      keyId,
    },
    {
      type: 'file',
      name: 'empty.txt',
      parent: null,
      size: 0,
      mtime: 0,
      fileId: hex(otherFileId),
      id: 'e0e1e2e3e4e5e6e7e8e9eaebecedeee0',
      keyId,
    },
  ];
  const generation = 5n;
  const stored = sealSnapshot(snapshotKeys(vaultId), tree, generation);
  snapshotVector('success', 'a folder, a file in it and an empty file at the root, at generation 5', stored);
  snapshotVector('success-empty', 'an empty vault', sealSnapshot(snapshotKeys(vaultId), [], 1n));
  snapshotVector('byte-flipped', 'one ciphertext byte flipped', flip(stored, 60));
  snapshotVector('from-other-vault', 'the snapshot read in another vault', stored, otherVaultId);
  const regenerated = Buffer.from(stored);
  regenerated.writeBigUInt64LE(6n, 4);
  snapshotVector(
    'generation-edited',
    'the stored generation changed from 5 to 6 (bound by the AAD)',
    regenerated,
  );
  const rekeyed = Buffer.from(stored);
  rekeyed.writeUInt32LE(9, 0);
  snapshotVector('unknown-key-id', 'names a key id the vault does not have', rekeyed);
  snapshotVector('truncated', 'shorter than key id, generation, nonce and tag', stored.subarray(0, 40));
  // Authenticates, but the one entry names a parent entry that does not exist.
  const plaintext = Buffer.alloc(5 + 57 + 1);
  plaintext[0] = 1;
  plaintext.writeUInt32LE(1, 1);
  plaintext.writeUInt32LE(keyId, 5 + 16);
  plaintext[5 + 20] = 1;
  plaintext.writeUInt32LE(3, 5 + 21);
  plaintext.write('x', 5 + 57);
  const subkey = deriveSubkey(sodium, dek(), LABEL.snapshotKey, vaultId);
  const prefix = Buffer.concat([u32(keyId), Buffer.alloc(8)]);
  prefix.writeBigUInt64LE(1n, 4);
  const nonce = sodium.randomBytes(NONCE_BYTES);
  const aad = Buffer.concat([ascii(LABEL.snapshot), vaultId, prefix]);
  const sealPlain = (bytes: Buffer): Buffer =>
    Buffer.concat([prefix, nonce, sodium.aeadEncrypt(bytes, aad, nonce, subkey.bytes)]);
  snapshotVector(
    'parent-out-of-range',
    'authenticates, but its one entry points at parent entry 3 of 1',
    sealPlain(plaintext),
  );
  // Version 1 (before padding): one folder "x" at the root, its name ending the plaintext.
  const version1 = Buffer.from(plaintext);
  version1.writeUInt32LE(0xffffffff, 5 + 21);
  snapshotVector(
    'success-version-1',
    'version 1, unpadded, as written before format 1.1',
    sealPlain(version1),
  );
  // Version 2 of the same tree (format 1.1): a sum, the count and entry, the names' length, the name, zeros to
  // 4096 bytes.
  const version2 = Buffer.alloc(snapshotPlaintextSize(1, 1));
  version2[0] = 2;
  version2.fill(0x5a, 1, 33);
  version1.copy(version2, 33, 1, 5 + 57);
  version2.writeUInt32LE(1, 32 + 5 + 57);
  version2.write('x', 32 + 5 + 57 + 4);
  snapshotVector(
    'success-version-2',
    'version 2: a sum of 32 bytes 0x5a and the same tree, padded to 4096 bytes',
    sealPlain(version2),
  );
  const dirty = Buffer.from(version2);
  dirty[4000] = 1;
  snapshotVector('padding-not-zero', 'version 2 with a padding byte of 1', sealPlain(dirty));
  snapshotVector(
    'padded-length-wrong',
    'version 2 cut to 4095 bytes: not the length its names pad to',
    sealPlain(version2.subarray(0, 4095)),
  );
  subkey.wipe();
}

// ---------------------------------------------------------------- format 1.1
// Its own seeded stream, so the vectors above keep their bytes whatever is added here.
{
  const sodium11 = seeded(native, 'coffer 1.1 test vectors');
  const keyring = new Keyring();
  keyring.add(keyId, dek());

  // Records bound to their row's version (FORMAT.md 7).
  const sealer = new RecordSealer(sodium11, keyring, vaultId);
  const json = Buffer.from(
    JSON.stringify({ t: 'f', n: 'plan.txt', p: '', s: 5, m: 1767225600000, c: hex(fileId) }),
  );
  const v3 = sealer.seal({ recordId, keyId, version: 3n }, json);
  recordVector('v1.1-success', 'a format 1.1 record sealed for this row at version 3', v3, { version: 3n });
  recordVector(
    'v1.1-older-version',
    'a record sealed at version 2, read where the row is at version 3',
    sealer.seal({ recordId, keyId, version: 2n }, json),
    { version: 3n },
  );
  recordVector('v1.1-read-as-1.0', 'a format 1.1 record read with the format 1.0 AAD', v3);
  recordVector(
    'v1.0-read-as-1.1',
    'a format 1.0 record read as format 1.1 at version 1',
    sealer.seal({ recordId, keyId }, json),
    { version: 1n },
  );
  sealer.wipe();

  // The index commitment (FORMAT.md 8.7).
  const committer = new IndexCommitter(sodium11, keyring, vaultId, keyId);
  const schema = Buffer.alloc(4);
  schema.writeUInt32LE(4);
  const rows: [number, SqlValue[]][] = [
    [ROW_TABLE.nodes, [recordId, BigInt(keyId), pattern(72), 3n]],
    [ROW_TABLE.contents, [fileId, recordId, null, pattern(16, 5), 0n, 4242n]],
    [
      ROW_TABLE.contents,
      [otherFileId, Buffer.from('d0d1d2d3d4d5d6d7d8d9dadbdcdddedf', 'hex'), null, null, null, null],
    ],
    [ROW_TABLE.meta, ['vault_id', vaultId]],
    [ROW_TABLE.meta, ['index_schema', schema]],
  ];
  const asVector = (value: SqlValue): VectorValue =>
    value === null
      ? { null: true }
      : typeof value === 'bigint'
        ? { integer: value.toString() }
        : typeof value === 'number'
          ? { real: value }
          : typeof value === 'string'
            ? { text: value }
            : { blob: hex(value) };
  const sum = Buffer.alloc(32);
  const contentsSum = Buffer.alloc(32);
  const described = rows.map(([table, values]): CommitmentRow => {
    const hash = committer.hashRow(table, values);
    addInto(sum, hash);
    if (table === ROW_TABLE.contents) addInto(contentsSum, hash);
    return { table, values: values.map(asVector), encoded: hex(encodeRow(table, values)), hash: hex(hash) };
  });
  const generation = 5n;
  const stored = committer.seal(sum, generation);
  // Its own randomness, so that adding it left every vector generated after it as it was.
  const contentsSumStored = new IndexCommitter(
    seeded(native, 'coffer test vectors: contents sum'),
    keyring,
    vaultId,
    keyId,
  ).sealContentsSum(contentsSum);
  const commitmentVector = (
    name: string,
    description: string,
    sealed: Buffer,
    at = generation,
    forVault = vaultId,
  ): void => {
    let opened: Buffer | undefined;
    let error: unknown;
    try {
      const reader = new IndexCommitter(
        sodium11,
        keyring,
        forVault,
        sealed.length >= 4 ? sealed.readUInt32LE(0) : keyId,
      );
      opened = reader.open(sealed, at);
    } catch (caught) {
      error = caught;
    }
    const vector: IndexCommitmentVector = {
      name,
      description,
      ...outcomeOf(error),
      dek: hex(dekBytes),
      keyId,
      vaultId: hex(forVault),
      generation: at.toString(),
      stored: hex(sealed),
      ...(opened
        ? {
            rows: described,
            sum: hex(opened),
            contentsSum: hex(contentsSum),
            contentsSumStored: hex(contentsSumStored),
          }
        : {}),
    };
    write('index-commitment', vector);
  };
  commitmentVector(
    'success',
    'a node row, two contents rows (in a pack, in a blob file) and two meta rows, at generation 5',
    stored,
  );
  commitmentVector('other-generation', 'sealed at generation 5, read where meta.generation is 6', stored, 6n);
  const regenerated = Buffer.from(stored);
  regenerated.writeBigUInt64LE(6n, 4);
  commitmentVector(
    'generation-edited',
    'the stored generation changed from 5 to 6 (bound by the AAD), read at 6',
    regenerated,
    6n,
  );
  commitmentVector('byte-flipped', 'one ciphertext byte flipped', flip(stored, 50));
  commitmentVector(
    'from-other-vault',
    'the commitment read in another vault',
    stored,
    generation,
    otherVaultId,
  );
  const rekeyed = Buffer.from(stored);
  rekeyed.writeUInt32LE(9, 0);
  commitmentVector('unknown-key-id', 'names a key id the vault does not have', rekeyed);
  commitmentVector('truncated', 'shorter than 84 bytes', stored.subarray(0, 40));

  // A format 1.1 snapshot carries the commitment's sum (FORMAT.md 8.6).
  const keys: SnapshotKeys = { sodium: sodium11, keyring, vaultId };
  const folder = 'd0d1d2d3d4d5d6d7d8d9dadbdcdddedf';
  snapshotVector(
    'v1.1-success',
    'format 1.1 (plaintext version 2): a folder with the sum of the commitment above, at generation 5',
    sealSnapshot(
      keys,
      [{ type: 'folder', name: 'Docs', parent: null, size: 0, mtime: 1767225600000, id: folder, keyId }],
      generation,
      sum,
    ),
  );
  committer.wipe();
}

// ---------------------------------------------------------------- log (FORMAT.md 10.2)
// After the snapshot, for the same reason.
function logVector(name: string, description: string, entry: Buffer, forVault = vaultId): void {
  const { value: decoded, ...outcome } = attempt(() => new LogSealer(snapshotKeys(forVault)).open(entry));
  const vector: LogVector = {
    name,
    description,
    ...outcome,
    ...keyedBy(forVault),
    entry: hex(entry),
    ...(decoded ? { decoded } : {}),
  };
  write('log', vector);
}

/** An entry sealed from a plaintext given byte for byte, to show what a reader must refuse after opening it. */
function sealRawLogEntry(seq: bigint, plaintext: Buffer): Buffer {
  const subkey = deriveSubkey(sodium, dek(), LABEL.logKey, vaultId);
  const prefix = Buffer.alloc(12);
  prefix.writeBigUInt64LE(seq, 0);
  prefix.writeUInt32LE(keyId, 8);
  const nonce = sodium.randomBytes(NONCE_BYTES);
  const aad = Buffer.concat([ascii(LABEL.log), vaultId, prefix]);
  try {
    return Buffer.concat([prefix, nonce, sodium.aeadEncrypt(plaintext, aad, nonce, subkey.bytes)]);
  } finally {
    subkey.wipe();
  }
}

{
  const sealer = new LogSealer(snapshotKeys(vaultId));
  const time = 1795270370702;
  const added = sealer.seal(5, {
    kind: 'add',
    counts: { files: 3, folders: 1, bytes: 299_000, problems: 0 },
    time,
  });
  logVector('success-add', 'entry 5: an add of 3 files and 1 folder (299,000 bytes)', added);
  logVector(
    'success-verify-flags',
    'entry 0: a verify with all data read and repair, done with 2 problems',
    sealer.seal(0, {
      kind: 'verify',
      outcome: 'problems',
      flags: ['readData', 'repair'],
      counts: { files: 40, problems: 2, unreferenced: 1, recovered: 1 },
      time,
    }),
  );
  /** A 48-byte plaintext (FORMAT.md 10.2) written byte for byte: kind, reserved field, counts by slot. */
  const rawPlaintext = (kind: number, counts: readonly bigint[], reserved = 0): Buffer => {
    const out = Buffer.alloc(48);
    out[0] = kind;
    out.writeUInt16LE(reserved, 2);
    out.writeBigUInt64LE(BigInt(time), 8);
    counts.forEach((value, slot) => out.writeBigUInt64LE(value, 16 + 8 * slot));
    return out;
  };
  logVector(
    'success-unknown-kind',
    'kind 200 (unknown to this reader): shown as unknown with its counts, not refused',
    sealRawLogEntry(1n, rawPlaintext(200, [7n])),
  );
  logVector('byte-flipped', 'one ciphertext byte flipped', flip(added, 50));
  const moved = Buffer.from(added);
  moved.writeBigUInt64LE(6n, 0);
  logVector('seq-edited', 'the stored sequence number changed from 5 to 6 (bound by the AAD)', moved);
  const rekeyed = Buffer.from(added);
  rekeyed.writeUInt32LE(9, 8);
  logVector('unknown-key-id', 'names a key id the vault does not have', rekeyed);
  logVector('from-other-vault', 'the entry read in another vault', added, otherVaultId);
  logVector('truncated', 'one byte short of 100', added.subarray(0, 99));
  logVector(
    'reserved-set',
    'authenticates, but its reserved field is 1',
    sealRawLogEntry(1n, rawPlaintext(2, [], 1)),
  );
  logVector(
    'unused-count-set',
    'authenticates, but a delete entry has its second (unused) count set',
    sealRawLogEntry(1n, rawPlaintext(4, [0n, 1n])),
  );
  // Last: a vector added later draws its nonce after the others, which keep theirs.
  logVector(
    'success-reencrypt',
    'entry 9: a re-encryption to key 7 (the one it is sealed under) of 1,200 files and 30 other records, 1 older key removed (FORMAT.md 11.2)',
    sealer.seal(9, {
      kind: 'reencrypt',
      counts: { keyId: 7, files: 1200, records: 30, keysRemoved: 1 },
      time,
    }),
  );
}
