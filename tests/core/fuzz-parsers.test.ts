/**
 * Fuzzing of every parser that reads bytes from a vault folder (security checklist item 29): each gets a valid
 * input made by the engine, damaged by fast-check (bit and byte flips, truncation, appended and spliced bytes,
 * extreme values in length and count fields), and must either give what the undamaged input gives or throw one of
 * the engine's typed errors: never a TypeError or RangeError, never a hang. Where a MAC or AEAD tag would reject
 * every edit before the parser's structural checks, the edited plaintext is sealed again with the right key, as
 * whoever holds the keys could. COFFER_FUZZ_RUNS raises the runs; a failure prints the seed to replay it
 * (COFFER_FUZZ_SEED, see tests/helpers/fuzz.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { fc, test } from '@fast-check/vitest';
import { describe, expect, it, vi } from 'vitest';

import { ascii } from '../../src/core/crypto/bytes.js';
import { HASH_BYTES, LABEL, NONCE_BYTES } from '../../src/core/crypto/constants.js';
import {
  blobLayout,
  ChunkCipher,
  ContentDecryptor,
  ContentEncryptor,
  encodeBlobHeader,
  parseBlobHeader,
  type ContentBinding,
} from '../../src/core/crypto/content.js';
import { IndexCommitter } from '../../src/core/crypto/index-commitment.js';
import { deriveSubkey, Keyring, SecretKey } from '../../src/core/crypto/keys.js';
import { blobPlaintextSize, PADDING_TRAILER_BYTES } from '../../src/core/crypto/padding.js';
import { RecordSealer } from '../../src/core/crypto/record.js';
import { RecoveryKey } from '../../src/core/crypto/recovery-key.js';
import { parseVaultHeader, unlockVaultKeys, type UnlockedKeys } from '../../src/core/crypto/vault-header.js';
import {
  IntegrityError,
  InvalidArgumentError,
  KdfLimitError,
  NotAVaultError,
  UnsupportedFormatError,
  WrongPassphraseError,
} from '../../src/core/errors.js';
import { ActivityLog, countFailedUnlock, unlockFailures } from '../../src/core/vault/activity-log.js';
import { bufferSource, openBlob } from '../../src/core/vault/blob-io.js';
import { ACTIVITY_LOG_FILE, TEMP_DIR, UNLOCK_FAILURES_FILE } from '../../src/core/vault/layout.js';
import { ACTIVITY_OUTCOMES, LogSealer } from '../../src/core/vault/log-entry.js';
import { contentSizeOf } from '../../src/core/vault/read.js';
import {
  encodeSnapshot,
  openSnapshot,
  sealSnapshot,
  type SnapshotKeys,
} from '../../src/core/vault/snapshot.js';
import { decodeNode, encodeRecord, type TreeNode } from '../../src/core/vault/tree.js';
import { backends, hex, nativeSodium as sodium, unhex } from '../helpers/backends.js';
import {
  asyncOutcomeOf,
  EXTREME_U32,
  fuzzOptions,
  fuzzTimeout,
  mutate,
  mutation,
  mutations,
  outcomeOf,
  type Mutation,
} from '../helpers/fuzz.js';

import { tempDir } from '../helpers/vault.js';
import recoveryVector from '../vectors/header/recovery-key.json' with { type: 'json' };

// The properties without a timeout of their own (1,000 runs of a parser, a few ms each at most) get one that grows
// with COFFER_FUZZ_RUNS: a long hunt would otherwise end at the default minute, not at a bug.
vi.setConfig({ testTimeout: fuzzTimeout(1000, 5) });

const KEY_ID = 7;
const keyring = new Keyring();
keyring.add(KEY_ID, SecretKey.generate(sodium));
const vaultId = sodium.randomBytes(16);
const keys: SnapshotKeys = { sodium, keyring, vaultId };

function activeDek(): SecretKey {
  const dek = keyring.find(KEY_ID);
  if (!dek) throw new Error('the fixture keyring lost its key');
  return dek;
}

/** Runs `use` with the DEK's subkey for `keyLabel` (FORMAT.md 2), wiped after. */
function withSubkey<T>(keyLabel: string, use: (subkey: Buffer) => T): T {
  const subkey = deriveSubkey(sodium, activeDek(), keyLabel, vaultId);
  try {
    return use(subkey.bytes);
  } finally {
    subkey.wipe();
  }
}

/** AEAD-seals `plaintext` under the DEK's subkey for `keyLabel`, as the format seals every record kind. */
function sealUnder(keyLabel: string, plaintext: Uint8Array, aad: Buffer, nonce: Buffer): Buffer {
  return withSubkey(keyLabel, (subkey) => sodium.aeadEncrypt(plaintext, aad, nonce, subkey));
}

/**
 * The property for an authenticated input damaged as stored: an edit that changed nothing gives the same result,
 * any other edit one of `allowed`.
 */
function expectUnchangedOrRejected(
  original: Buffer,
  edits: readonly Mutation[],
  parse: (bytes: Buffer) => unknown,
  allowed: Parameters<typeof outcomeOf>[1],
): void {
  const damaged = mutate(original, edits);
  const outcome = outcomeOf(() => parse(damaged), allowed);
  if (outcome) {
    expect(damaged.equals(original), 'an edited input was accepted').toBe(true);
    expect(outcome.value).toEqual(parse(original));
  }
}

describe('vault header (FORMAT.md 4)', () => {
  const headerBytes = unhex(recoveryVector.header);
  const recoveryKey = RecoveryKey.parse(sodium, recoveryVector.recoveryKey);
  const HEADER_ERRORS = [NotAVaultError, IntegrityError, UnsupportedFormatError];
  const describeKeys = (unlocked: UnlockedKeys) => ({
    vaultId: hex(unlocked.vaultId),
    kek: hex(unlocked.kek.bytes),
    deks: unlocked.keyring.keyIds.map((id) => [id, hex(unlocked.keyring.find(id)?.bytes ?? Buffer.alloc(0))]),
  });

  test.prop([mutations], fuzzOptions(1000))(
    'parsing damaged bytes: the checksum catches every edit',
    (edits) => {
      expectUnchangedOrRejected(
        headerBytes,
        edits,
        (bytes) => parseVaultHeader(sodium, bytes),
        HEADER_ERRORS,
      );
    },
  );

  // The WebAssembly backend keeps keys in ordinary buffers. The native one puts each in guarded memory
  // (sodium_malloc), freed only when the garbage collector runs, and thousands of unlocks in a tight loop
  // exhaust the process's memory maps before it does: sodium-native then aborts the process.
  const wasm = backends[1] ?? sodium;
  const headerBody = headerBytes.subarray(0, headerBytes.length - 2 * HASH_BYTES);
  /** A header of `body`, its MAC and checksum made as a KEK holder would. */
  const forgeHeader = (body: Uint8Array, kek: UnlockedKeys['kek']): Buffer => {
    const macKey = deriveSubkey(wasm, kek, LABEL.headerMac);
    const withMac = Buffer.concat([body, sodium.blake2b(HASH_BYTES, body, macKey.bytes)]);
    macKey.wipe();
    return Buffer.concat([withMac, sodium.blake2b(HASH_BYTES, withMac)]);
  };

  it('the forging the next property does gives back the header itself when nothing is edited', async () => {
    const original = await unlockVaultKeys(wasm, headerBytes, recoveryKey);
    expect(forgeHeader(headerBody, original.kek)).toEqual(Buffer.from(headerBytes));
    original.wipe();
  });

  test.prop([mutations], fuzzOptions(1000))(
    'unlocking an edited body whose MAC and checksum were recomputed: the same keys or a typed error',
    async (edits) => {
      const original = await unlockVaultKeys(wasm, headerBytes, recoveryKey);
      // Edits fall on the body (before the MAC).
      const forged = forgeHeader(mutate(headerBody, edits), original.kek);
      const outcome = await asyncOutcomeOf(
        () => unlockVaultKeys(wasm, forged, recoveryKey),
        [...HEADER_ERRORS, KdfLimitError, WrongPassphraseError],
      );
      if (outcome) {
        expect(describeKeys(outcome.value)).toEqual(describeKeys(original));
        outcome.value.wipe();
      }
      original.wipe();
    },
  );
});

describe('recovery key text (FORMAT.md 4.2.1)', () => {
  const printed = recoveryVector.recoveryKey;
  const secret = hex(RecoveryKey.parse(sodium, printed).secret);
  const parsesToItsOwnKey = (text: string): void => {
    const outcome = outcomeOf(() => RecoveryKey.parse(sodium, text), [InvalidArgumentError]);
    if (outcome)
      expect(hex(RecoveryKey.parse(sodium, outcome.value.format(sodium)).secret)).toBe(
        hex(outcome.value.secret),
      );
  };

  test.prop([mutations], fuzzOptions(1000))(
    'a damaged printed key reads as the same key or is refused',
    (edits) => {
      const text = mutate(ascii(printed), edits).toString('latin1');
      const outcome = outcomeOf(() => RecoveryKey.parse(sodium, text), [InvalidArgumentError]);
      // Edits that only change case, spaces or dashes leave the key as it was; the checksum catches the rest.
      if (outcome) expect(hex(outcome.value.secret)).toBe(secret);
    },
  );

  test.prop([fc.string({ unit: 'binary', maxLength: 80 })], fuzzOptions(1000))(
    'any text is a well-formed key or refused',
    parsesToItsOwnKey,
  );
});

describe('sealed metadata records (FORMAT.md 7, 8.3)', () => {
  const sealer = new RecordSealer(sodium, keyring, vaultId);
  const binding = { recordId: sodium.randomBytes(16), keyId: KEY_ID, version: 3n };
  const record = encodeRecord({
    type: 'file',
    name: 'Résumé 2026.pdf',
    parent: hex(sodium.randomBytes(16)),
    size: 123_456,
    mtime: 1_795_270_370_702.5,
    fileId: hex(sodium.randomBytes(16)),
  });
  const id = hex(binding.recordId);
  const openNode = (sealed: Buffer): TreeNode => decodeNode(sealer.open(binding, sealed), id, KEY_ID);
  /** A node read from a forged record must be one the engine writes and reads back the same. */
  const expectCanonical = (sealed: Buffer): void => {
    const outcome = outcomeOf(() => openNode(sealed), [IntegrityError]);
    if (outcome) expect(decodeNode(encodeRecord(outcome.value), id, KEY_ID)).toEqual(outcome.value);
  };

  test.prop([mutations], fuzzOptions(1000))('a damaged sealed record is refused', (edits) => {
    expectUnchangedOrRejected(sealer.seal(binding, record), edits, openNode, [IntegrityError]);
  });

  test.prop([mutations], fuzzOptions(1000))(
    'an edited record re-sealed decodes canonically or is refused',
    (edits) => {
      expectCanonical(sealer.seal(binding, mutate(record, edits)));
    },
  );

  // ISO/IEC 7816-4 padding to the next multiple of 256 bytes, as a writer pads.
  const padded = Buffer.alloc(Math.ceil((record.length + 1) / 256) * 256);
  record.copy(padded);
  padded[record.length] = 0x80;
  /** Sealed as a writer seals a record's padded plaintext (FORMAT.md 7). */
  const sealPadded = (plaintext: Uint8Array): Buffer => {
    const nonce = sodium.randomBytes(NONCE_BYTES);
    return Buffer.concat([nonce, sealUnder(LABEL.recordKey, plaintext, aadOfRecord(), nonce)]);
  };

  it('the sealing the next property does opens to the record when nothing is edited', () => {
    expect(openNode(sealPadded(padded))).toEqual(openNode(sealer.seal(binding, record)));
  });

  test.prop([mutations], fuzzOptions(1000))(
    'edited padding re-sealed (under the AAD of FORMAT.md 7) decodes canonically or is refused',
    (edits) => {
      expectCanonical(sealPadded(mutate(padded, edits)));
    },
  );

  const fieldValue = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.constantFrom('f', 'd', '', '0'.repeat(32), 'F'.repeat(32)),
    fc.double(),
    fc.integer(),
    fc.constantFrom(null, true, 2 ** 53, -1, [], {}),
  );
  test.prop(
    [fc.dictionary(fc.constantFrom('t', 'n', 'p', 's', 'm', 'c', 'x', '__proto__'), fieldValue)],
    fuzzOptions(3000),
  )('any JSON object decodes canonically or is refused', (object) => {
    const outcome = outcomeOf(
      () => decodeNode(Buffer.from(JSON.stringify(object)), id, KEY_ID),
      [IntegrityError],
    );
    if (outcome) expect(decodeNode(encodeRecord(outcome.value), id, KEY_ID)).toEqual(outcome.value);
  });

  function aadOfRecord(): Buffer {
    const tail = Buffer.alloc(16 + 4 + 8);
    binding.recordId.copy(tail);
    tail.writeUInt32LE(KEY_ID, 16);
    tail.writeBigUInt64LE(binding.version, 20);
    return Buffer.concat([ascii(LABEL.recordV11), vaultId, tail]);
  }
});

describe('content blobs (FORMAT.md 5)', () => {
  const CHUNK = 64;
  const binding: ContentBinding = { vaultId, fileId: sodium.randomBytes(16) };
  const file = sodium.randomBytes(3 * CHUNK + 10);

  /** Seals `plaintext` as one blob with a header of the given padding flag. */
  function seal(plaintext: Uint8Array, padded: boolean): Buffer {
    const header = encodeBlobHeader({
      padded,
      chunkSize: CHUNK,
      keyId: KEY_ID,
      fileId: binding.fileId,
      noncePrefix: sodium.randomBytes(16),
    });
    const encryptor = new ContentEncryptor(sodium, activeDek(), binding, header);
    const out: Buffer[] = [];
    encryptor.push(plaintext, (bytes) => out.push(bytes));
    encryptor.finish((bytes) => out.push(bytes));
    return Buffer.concat(out);
  }
  const blob = seal(file, false);

  /** The streaming reader, fed in pieces of `piece` bytes. */
  function streamed(bytes: Buffer, piece: number): Buffer {
    const decryptor = new ContentDecryptor(sodium, (keyId) => keyring.find(keyId), binding);
    const out: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += piece)
      decryptor.push(bytes.subarray(at, at + piece), (plain) => out.push(plain));
    decryptor.finish((plain) => out.push(plain));
    return Buffer.concat(out);
  }

  /**
   * The random-access reader as read.ts runs it: header, layout from the size, key, then the chunks; a padded
   * blob's size proved from its trailer and its padding checked against the record's `contentSize`.
   */
  async function randomAccess(bytes: Buffer, contentSize: number): Promise<Buffer> {
    const header = parseBlobHeader(bytes.subarray(0, 52), binding);
    const layout = blobLayout(bytes.length, header.chunkSize, binding);
    const dek = keyring.find(header.keyId);
    if (!dek) throw new IntegrityError('unknown-key', { subject: 'file contents' });
    const cipher = new ChunkCipher(sodium, dek, binding, header);
    const source = bufferSource(bytes);
    try {
      if (layout.plaintextSize !== blobPlaintextSize(contentSize, header.padded))
        throw new IntegrityError('malformed', { subject: 'file contents' });
      if ((await contentSizeOf({ source, cipher, layout })) !== contentSize)
        throw new IntegrityError('malformed', { subject: 'file contents' });
      const out: Buffer[] = [];
      await openBlob({
        place: { sodium, executor: undefined },
        cipher,
        source,
        chunkCount: layout.chunkCount,
        plaintextSize: layout.plaintextSize,
        contentSize,
        sink: (views) => {
          out.push(...views.map((view) => Buffer.from(view)));
          return Promise.resolve();
        },
      });
      return Buffer.concat(out);
    } finally {
      cipher.wipe();
    }
  }

  test.prop([mutations, fc.integer({ min: 1, max: 200 })], fuzzOptions(1000))(
    'the streaming reader refuses a damaged blob, fed in any pieces',
    (edits, piece) => {
      expectUnchangedOrRejected(blob, edits, (bytes) => streamed(bytes, piece), [IntegrityError]);
    },
  );

  test.prop([mutations], fuzzOptions(1000))(
    'the random-access reader refuses a damaged blob',
    async (edits) => {
      const damaged = mutate(blob, edits);
      const outcome = await asyncOutcomeOf(() => randomAccess(damaged, file.length), [IntegrityError]);
      if (outcome) {
        expect(damaged.equals(blob)).toBe(true);
        expect(outcome.value.equals(file)).toBe(true);
      }
    },
  );

  test.prop([mutations], fuzzOptions(1000))(
    "a padded blob's plaintext edited and re-sealed gives the file or is refused (FORMAT.md 5.7)",
    async (edits) => {
      const padded = Buffer.alloc(blobPlaintextSize(file.length, true));
      padded.set(file);
      padded.writeBigUInt64LE(BigInt(file.length), padded.length - PADDING_TRAILER_BYTES);
      const edited = mutate(padded, edits);
      const outcome = await asyncOutcomeOf(
        () => randomAccess(seal(edited, true), file.length),
        [IntegrityError],
      );
      // The file's own bytes may be edited (that is what the AEAD is for); everything past them is checked.
      if (outcome) expect(edited.subarray(file.length).equals(padded.subarray(file.length))).toBe(true);
    },
  );
});

describe('tree snapshot (FORMAT.md 8.6)', () => {
  const folder = hex(sodium.randomBytes(16));
  const nodes: TreeNode[] = [
    { id: folder, keyId: KEY_ID, type: 'folder', name: 'Photos', parent: null, size: 0, mtime: 1.5e12 },
    {
      id: hex(sodium.randomBytes(16)),
      keyId: KEY_ID,
      type: 'file',
      name: 'été.jpg',
      parent: folder,
      size: 4096,
      mtime: 1.6e12,
      fileId: hex(sodium.randomBytes(16)),
    },
    {
      id: hex(sodium.randomBytes(16)),
      keyId: KEY_ID,
      type: 'file',
      name: 'notes.txt',
      parent: null,
      size: 0,
      mtime: -1,
      fileId: hex(sodium.randomBytes(16)),
    },
  ];
  const sum = sodium.randomBytes(HASH_BYTES);
  const GENERATION = 5n;

  test.prop([mutations], fuzzOptions(1000))('a damaged stored snapshot is refused', (edits) => {
    expectUnchangedOrRejected(
      sealSnapshot(keys, nodes, GENERATION, sum),
      edits,
      (bytes) => openSnapshot(keys, bytes),
      [IntegrityError],
    );
  });

  /** Stored as a writer stores a snapshot's plaintext (FORMAT.md 8.6). */
  const storeSnapshot = (plaintext: Uint8Array): Buffer => {
    const prefix = Buffer.alloc(12);
    prefix.writeUInt32LE(KEY_ID, 0);
    prefix.writeBigUInt64LE(GENERATION, 4);
    const nonce = sodium.randomBytes(NONCE_BYTES);
    const aad = Buffer.concat([ascii(LABEL.snapshot), vaultId, prefix]);
    return Buffer.concat([prefix, nonce, sealUnder(LABEL.snapshotKey, plaintext, aad, nonce)]);
  };

  it('the sealing the next property does opens to the snapshot when nothing is edited', () => {
    for (const withSum of [undefined, sum]) {
      expect(openSnapshot(keys, storeSnapshot(encodeSnapshot(nodes, withSum)))).toEqual(
        openSnapshot(keys, sealSnapshot(keys, nodes, GENERATION, withSum)),
      );
    }
  });

  test.prop([mutations, fc.boolean()], fuzzOptions(1000))(
    'an edited plaintext re-sealed opens to nodes that seal and open the same, or is refused',
    (edits, withSum) => {
      const stored = storeSnapshot(mutate(encodeSnapshot(nodes, withSum ? sum : undefined), edits));
      const outcome = outcomeOf(() => openSnapshot(keys, stored), [IntegrityError]);
      if (outcome) {
        const again = openSnapshot(
          keys,
          sealSnapshot(keys, outcome.value.nodes, GENERATION, outcome.value.sum),
        );
        expect(again).toEqual(outcome.value);
      }
    },
  );
});

describe('activity log (FORMAT.md 10)', () => {
  const logSealer = new LogSealer(keys);
  const entry = logSealer.seal(5, {
    kind: 'add',
    counts: { files: 3, folders: 1, bytes: 299_000 },
    time: 1.7e12,
  });
  const sane = (opened: ReturnType<LogSealer['open']>): void => {
    expect(ACTIVITY_OUTCOMES).toContain(opened.outcome);
    for (const value of [opened.seq, opened.time, ...Object.values(opened.counts)])
      expect(Number.isSafeInteger(value) && value >= 0).toBe(true);
  };

  test.prop([mutations], fuzzOptions(1000))('a damaged stored entry is refused', (edits) => {
    expectUnchangedOrRejected(entry, edits, (bytes) => logSealer.open(bytes), [IntegrityError]);
  });

  const plaintext = withSubkey(LABEL.logKey, (subkey) =>
    sodium.aeadDecrypt(
      entry.subarray(12 + NONCE_BYTES),
      Buffer.concat([ascii(LABEL.log), vaultId, entry.subarray(0, 12)]),
      entry.subarray(12, 12 + NONCE_BYTES),
      subkey,
    ),
  );
  if (!plaintext) throw new Error('the fixture entry does not open');
  const prefixAndPlaintext = Buffer.concat([entry.subarray(0, 12), plaintext]);
  /** Stored as a writer stores an entry: its first 12 bytes the prefix (and the AAD's tail), the rest sealed. */
  const storeEntry = (bytes: Buffer): Buffer => {
    const prefix = Buffer.alloc(12);
    bytes.copy(prefix, 0, 0, 12);
    const nonce = sodium.randomBytes(NONCE_BYTES);
    const aad = Buffer.concat([ascii(LABEL.log), vaultId, prefix]);
    return Buffer.concat([prefix, nonce, sealUnder(LABEL.logKey, bytes.subarray(12), aad, nonce)]);
  };

  it('the sealing the next property does opens to the entry when nothing is edited', () => {
    expect(logSealer.open(storeEntry(prefixAndPlaintext))).toEqual(logSealer.open(entry));
  });

  test.prop([mutations], fuzzOptions(1000))(
    'an edited entry (sequence number, key id, plaintext) re-sealed opens to sane values or is refused',
    (edits) => {
      // Prefix and plaintext edited together, so an edit may move bytes between them; the prefix is then the AAD.
      const stored = storeEntry(mutate(prefixAndPlaintext, edits));
      const outcome = outcomeOf(() => logSealer.open(stored), [IntegrityError]);
      if (outcome) sane(outcome.value);
    },
  );

  test.prop([mutations], fuzzOptions(1000))(
    'a damaged log file is read, its keys listed and appended to, or refused as a whole',
    (edits) => {
      const dir = tempDir();
      mkdirSync(join(dir, TEMP_DIR));
      const header = Buffer.alloc(32);
      ascii('COFFERAL').copy(header);
      header.writeUInt16LE(1, 8);
      vaultId.copy(header, 16);
      const entries = [0, 1, 2].map((seq) => logSealer.seal(seq, { kind: 'verify', time: 1.7e12 + seq }));
      writeFileSync(join(dir, ACTIVITY_LOG_FILE), mutate(Buffer.concat([header, ...entries]), edits));
      const log = new ActivityLog(dir, keys);
      const allowed = [IntegrityError, UnsupportedFormatError];
      const report = outcomeOf(() => log.read(), allowed);
      report?.value.entries.forEach(sane);
      outcomeOf(() => log.keyIdsNamed(), allowed);
      const appended = outcomeOf(() => {
        log.append({ kind: 'verify' });
      }, allowed);
      if (appended) {
        // An append repairs what it can; what it wrote reads back, with the new entry last.
        expect(log.read().entries.at(-1)?.kind).toBe('verify');
      }
    },
    fuzzTimeout(150, 10),
  );
});

describe('failed-unlock count (FORMAT.md 10.5)', () => {
  // Any stored count, its ceiling included, then edited or not.
  test.prop([fc.constantFrom(...EXTREME_U32), fc.array(mutation, { maxLength: 3 })], fuzzOptions(100))(
    'a damaged count reads as a u32, and counting one more failure adds one up to its ceiling',
    (stored, edits) => {
      const count = Buffer.alloc(16);
      ascii('COFFERUF').copy(count);
      count.writeUInt32LE(stored, 8);
      const dir = tempDir();
      mkdirSync(join(dir, TEMP_DIR));
      writeFileSync(join(dir, UNLOCK_FAILURES_FILE), mutate(count, edits));
      const failures = unlockFailures(dir);
      expect(Number.isInteger(failures) && failures >= 0 && failures <= 0xffffffff).toBe(true);
      countFailedUnlock(dir);
      expect(unlockFailures(dir)).toBe(Math.min(failures + 1, 0xffffffff));
    },
    fuzzTimeout(100, 10),
  );
});

describe('index commitment (FORMAT.md 8.7)', () => {
  const committer = new IndexCommitter(sodium, keyring, vaultId, KEY_ID);
  const sum = sodium.randomBytes(HASH_BYTES);

  test.prop([mutations], fuzzOptions(1000))('a damaged commitment is refused', (edits) => {
    expectUnchangedOrRejected(committer.seal(sum, 9n), edits, (bytes) => committer.open(bytes, 9n), [
      IntegrityError,
    ]);
  });

  test.prop([mutations], fuzzOptions(1000))("a damaged contents rows' sum is refused", (edits) => {
    expectUnchangedOrRejected(
      committer.sealContentsSum(sum),
      edits,
      (bytes) => committer.openContentsSum(bytes),
      [IntegrityError],
    );
  });
});
