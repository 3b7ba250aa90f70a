import { createHash } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { ContentDecryptor, ContentEncryptor, parseBlobHeader } from '../../src/core/crypto/content.js';
import { Keyring, SecretKey } from '../../src/core/crypto/keys.js';
import {
  addInto,
  commitmentKeyId,
  encodeRow,
  IndexCommitter,
  ROW_TABLE,
  type SqlValue,
} from '../../src/core/crypto/index-commitment.js';
import { RecordSealer } from '../../src/core/crypto/record.js';
import type { SodiumBackend } from '../../src/core/crypto/sodium.js';
import { RecoveryKey } from '../../src/core/crypto/recovery-key.js';
import { unlockVaultKeys } from '../../src/core/crypto/vault-header.js';
import {
  CofferError,
  IntegrityError,
  KdfLimitError,
  NotAVaultError,
  UnsupportedFormatError,
  WrongPassphraseError,
} from '../../src/core/errors.js';
import { LogSealer } from '../../src/core/vault/log-entry.js';
import { openSnapshot } from '../../src/core/vault/snapshot.js';
import { backends, hex, unhex } from '../helpers/backends.js';
import { readThroughRecord } from '../helpers/file-content.js';
import { loadVectors, type Expectation, type VectorValue } from '../helpers/vector-schema.js';

const ERROR_CLASS: Record<Exclude<Expectation, 'success'>, abstract new (...args: never[]) => CofferError> = {
  integrity: IntegrityError,
  'unsupported-format': UnsupportedFormatError,
  'wrong-passphrase': WrongPassphraseError,
  'kdf-limit': KdfLimitError,
  'not-a-vault': NotAVaultError,
};

function expectOutcome(error: unknown, vector: { expect: Expectation; reason?: string }): void {
  if (vector.expect === 'success') {
    expect(error).toBeUndefined();
    return;
  }
  expect(error).toBeInstanceOf(ERROR_CLASS[vector.expect]);
  if (vector.reason !== undefined) expect((error as IntegrityError).reason).toBe(vector.reason);
}

function keyringWith(sodium: SodiumBackend, keyId: number, dek: string): Keyring {
  const keyring = new Keyring();
  keyring.add(keyId, SecretKey.copyOf(sodium, unhex(dek)));
  return keyring;
}

const contentVectors = loadVectors('content');
const headerVectors = loadVectors('header');
const recordVectors = loadVectors('record');
const snapshotVectors = loadVectors('snapshot');
const commitmentVectors = loadVectors('index-commitment');

function sqlValue(value: VectorValue): SqlValue {
  if ('null' in value) return null;
  if ('integer' in value) return BigInt(value.integer);
  if ('real' in value) return value.real;
  if ('text' in value) return value.text;
  return unhex(value.blob);
}
const logVectors = loadVectors('log');

describe.each(backends)('generated vectors ($name)', (sodium) => {
  it('has the expected number of cases', () => {
    expect(contentVectors.length).toBeGreaterThanOrEqual(40);
    expect(headerVectors.length).toBeGreaterThanOrEqual(30);
    expect(recordVectors.length).toBeGreaterThanOrEqual(9);
    expect(snapshotVectors.length).toBeGreaterThanOrEqual(9);
    expect(commitmentVectors.length).toBeGreaterThanOrEqual(7);
    expect(logVectors.length).toBeGreaterThanOrEqual(10);
  });

  describe('content', () => {
    // Fed whole and byte by byte: what is released before a failure must not depend on how input arrives.
    it.each(
      contentVectors.flatMap((v) => [
        { ...v, step: 0 },
        { ...v, step: 1 },
      ]),
    )('$name (step $step)', (vector) => {
      const keyring = keyringWith(sodium, vector.keyId, vector.dek);
      const binding = { vaultId: unhex(vector.vaultId), fileId: unhex(vector.fileId) };
      const decryptor = new ContentDecryptor(sodium, (id) => keyring.find(id), binding);
      const blob = unhex(vector.blob);
      const released = createHash('sha256');
      let count = 0;
      const emit = (bytes: Buffer): void => {
        released.update(bytes);
        count += bytes.length;
      };
      let error: unknown;
      try {
        if (vector.step === 0) decryptor.push(blob, emit);
        else for (let i = 0; i < blob.length; i++) decryptor.push(blob.subarray(i, i + 1), emit);
        decryptor.finish(emit);
      } catch (caught) {
        error = caught;
      }
      expectOutcome(error, vector);
      expect(count).toBe(vector.releasedBytes);
      expect(released.digest('hex')).toBe(vector.releasedSha256);
    });

    // Read through a file's record (sections 5.4, 5.7): the size checked before any chunk, then only the file's
    // bytes, and only with exact padding.
    it.each(contentVectors.filter((v) => v.fileSize !== undefined))('$name as a file', (vector) => {
      const keyring = keyringWith(sodium, vector.keyId, vector.dek);
      const binding = { vaultId: unhex(vector.vaultId), fileId: unhex(vector.fileId) };
      const blob = unhex(vector.blob);
      let error: unknown;
      let content: Buffer | undefined;
      try {
        content = readThroughRecord(sodium, blob, vector.fileSize ?? 0, (id) => keyring.find(id), binding);
      } catch (caught) {
        error = caught;
      }
      const file = vector.file ?? { expect: 'success' };
      expectOutcome(error, file);
      if (content) {
        expect(content.length).toBe(file.bytes);
        expect(createHash('sha256').update(content).digest('hex')).toBe(file.sha256);
      }
    });

    // Known-answer check of the writer: same key, ids and nonce prefix must give the committed bytes exactly.
    it.each(contentVectors.filter((v) => v.expect === 'success' && v.releasedBytes > 0))(
      '$name re-encrypts to the committed blob',
      (vector) => {
        const binding = { vaultId: unhex(vector.vaultId), fileId: unhex(vector.fileId) };
        const blob = unhex(vector.blob);
        const header = parseBlobHeader(blob, binding);
        const encryptor = new ContentEncryptor(
          sodium,
          SecretKey.copyOf(sodium, unhex(vector.dek)),
          binding,
          header,
        );
        const keyring = keyringWith(sodium, vector.keyId, vector.dek);
        const plaintext: Buffer[] = [];
        const decryptor = new ContentDecryptor(sodium, (id) => keyring.find(id), binding);
        decryptor.push(blob, (b) => plaintext.push(b));
        decryptor.finish((b) => plaintext.push(b));
        const out: Buffer[] = [];
        encryptor.push(Buffer.concat(plaintext), (b) => out.push(b));
        encryptor.finish((b) => out.push(b));
        expect(hex(Buffer.concat(out))).toBe(vector.blob);
      },
    );
  });

  describe('vault header', () => {
    it.each(headerVectors)('$name', async (vector) => {
      let error: unknown;
      try {
        const keys = await unlockVaultKeys(
          sodium,
          unhex(vector.header),
          vector.recoveryKey === undefined
            ? Buffer.from(vector.passphrase ?? '', 'utf8')
            : RecoveryKey.parse(sodium, vector.recoveryKey),
        );
        expect(hex(keys.vaultId)).toBe(vector.vaultId);
        const deks = Object.fromEntries(
          keys.keyring.keyIds.map((id) => [String(id), hex(keys.keyring.find(id)?.bytes ?? Buffer.alloc(0))]),
        );
        expect(deks).toEqual(vector.deks);
        keys.wipe();
      } catch (caught) {
        error = caught;
      }
      expectOutcome(error, vector);
    });
  });

  describe('metadata record', () => {
    it.each(recordVectors)('$name', (vector) => {
      const sealer = new RecordSealer(sodium, keyringWith(sodium, 7, vector.dek), unhex(vector.vaultId));
      let error: unknown;
      try {
        const plaintext = sealer.open(
          {
            recordId: unhex(vector.recordId),
            keyId: vector.keyId,
            ...(vector.version === undefined ? {} : { version: BigInt(vector.version) }),
          },
          unhex(vector.sealed),
        );
        expect(hex(plaintext)).toBe(vector.plaintext);
      } catch (caught) {
        error = caught;
      }
      expectOutcome(error, vector);
    });
  });

  describe('tree snapshot', () => {
    it.each(snapshotVectors)('$name', (vector) => {
      const keys = {
        sodium,
        keyring: keyringWith(sodium, vector.keyId, vector.dek),
        vaultId: unhex(vector.vaultId),
      };
      let error: unknown;
      try {
        const { nodes, sum } = openSnapshot(keys, unhex(vector.stored));
        const entries = [...nodes].sort((a, b) => a.id.localeCompare(b.id));
        expect(entries).toEqual(vector.entries);
        expect(sum && hex(sum)).toBe(vector.sum);
      } catch (caught) {
        error = caught;
      }
      expectOutcome(error, vector);
    });
  });
  describe('index commitment', () => {
    it.each(commitmentVectors)('$name', (vector) => {
      const keyring = keyringWith(sodium, vector.keyId, vector.dek);
      const vaultId = unhex(vector.vaultId);
      const stored = unhex(vector.stored);
      if (vector.rows && vector.sum) {
        const hasher = new IndexCommitter(sodium, keyring, vaultId, vector.keyId);
        const sum = Buffer.alloc(32);
        const contentsSum = Buffer.alloc(32);
        for (const row of vector.rows) {
          const values = row.values.map(sqlValue);
          expect(hex(encodeRow(row.table, values))).toBe(row.encoded);
          const hash = hasher.hashRow(row.table, values);
          expect(hex(hash)).toBe(row.hash);
          addInto(sum, hash);
          if (row.table === ROW_TABLE.contents) addInto(contentsSum, hash);
        }
        expect(hex(sum)).toBe(vector.sum);
        expect(hex(contentsSum)).toBe(vector.contentsSum);
        expect(hex(hasher.openContentsSum(unhex(vector.contentsSumStored ?? '')))).toBe(vector.contentsSum);
      }
      let error: unknown;
      try {
        const reader = new IndexCommitter(sodium, keyring, vaultId, commitmentKeyId(stored) ?? vector.keyId);
        expect(hex(reader.open(stored, BigInt(vector.generation)))).toBe(vector.sum);
      } catch (caught) {
        error = caught;
      }
      expectOutcome(error, vector);
    });
  });

  describe('activity log entry', () => {
    it.each(logVectors)('$name', (vector) => {
      const sealer = new LogSealer({
        sodium,
        keyring: keyringWith(sodium, vector.keyId, vector.dek),
        vaultId: unhex(vector.vaultId),
      });
      let error: unknown;
      try {
        expect(sealer.open(unhex(vector.entry))).toEqual(vector.decoded);
      } catch (caught) {
        error = caught;
      }
      expectOutcome(error, vector);
    });
  });
});
