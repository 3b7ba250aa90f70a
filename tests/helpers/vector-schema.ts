import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { IntegrityReason } from '../../src/core/errors.js';

/** Outcomes a vector may expect; each maps to one error class (or success). */
export const EXPECTATIONS = [
  'success',
  'integrity',
  'unsupported-format',
  'wrong-passphrase',
  'kdf-limit',
  'not-a-vault',
] as const;
export type Expectation = (typeof EXPECTATIONS)[number];

interface VectorBase {
  name: string;
  description: string;
  expect: Expectation;
  reason?: IntegrityReason;
}

/** A content blob to decrypt as file `fileId` of vault `vaultId`, with `dek` under `keyId`. */
export interface ContentVector extends VectorBase {
  dek: string;
  keyId: number;
  vaultId: string;
  fileId: string;
  blob: string;
  /** SHA-256 of every plaintext byte released, in order, before success or failure. */
  releasedSha256: string;
  releasedBytes: number;
  /**
   * When present, the blob is also read as the contents of a file whose record says it has `fileSize` bytes
   * (FORMAT.md section 5.7): `file` is the outcome, and on success the file's bytes.
   */
  fileSize?: number;
  file?: { expect: Expectation; reason?: IntegrityReason; sha256?: string; bytes?: number };
}

/** A vault header to unlock with `passphrase` or the printed `recoveryKey`; on success the DEKs it must yield. */
export interface HeaderVector extends VectorBase {
  passphrase?: string;
  recoveryKey?: string;
  header: string;
  vaultId?: string;
  deks?: Record<string, string>;
}

/** A sealed record to open as row `recordId` of vault `vaultId` under key `keyId`. */
export interface RecordVector extends VectorBase {
  dek: string;
  keyId: number;
  vaultId: string;
  recordId: string;
  /** Format 1.1: the row's version (a u64, in decimal), bound into the AAD; absent for a format 1.0 record. */
  version?: string;
  sealed: string;
  plaintext?: string;
}

/** One entry of a decoded tree snapshot, as a vector lists it. */
export interface SnapshotEntry {
  id: string;
  keyId: number;
  type: 'file' | 'folder';
  name: string;
  parent: string | null;
  size: number;
  mtime: number;
  fileId?: string;
}

/** A stored tree snapshot to open in vault `vaultId` holding `dek` under `keyId`; on success, its entries by id. */
export interface SnapshotVector extends VectorBase {
  dek: string;
  keyId: number;
  vaultId: string;
  stored: string;
  entries?: SnapshotEntry[];
  /** Format 1.1: the index commitment's sum the snapshot carries. */
  sum?: string;
}

/** One SQLite value of an index row, by storage class (FORMAT.md 8.7). */
export type VectorValue =
  { null: true } | { integer: string } | { real: number } | { text: string } | { blob: string };

/** One covered index row: its table tag, its values, encode(row) and h(row). */
export interface CommitmentRow {
  table: number;
  values: VectorValue[];
  encoded: string;
  hash: string;
}

/**
 * A stored index commitment (FORMAT.md 8.7) to open in vault `vaultId` holding `dek` under `keyId`, at the index's
 * `generation`; on success the rows it covers, their hashes and their sum.
 */
export interface IndexCommitmentVector extends VectorBase {
  dek: string;
  keyId: number;
  vaultId: string;
  generation: string;
  stored: string;
  rows?: CommitmentRow[];
  sum?: string;
  /** Σ h over the contents rows among `rows` only, and `meta.contents_sum` holding it sealed (FORMAT.md 8.7). */
  contentsSum?: string;
  contentsSumStored?: string;
}

/** One stored activity-log entry (100 bytes) to open in vault `vaultId` holding `dek` under `keyId`. */
export interface LogVector extends VectorBase {
  dek: string;
  keyId: number;
  vaultId: string;
  entry: string;
  decoded?: {
    seq: number;
    time: number;
    kind: string;
    outcome: string;
    counts: Record<string, number>;
    flags: readonly string[];
    keyId: number;
  };
}

export const VECTOR_ROOT = join(import.meta.dirname, '..', 'vectors');

const KEYS = {
  content: [
    'name',
    'description',
    'expect',
    'reason',
    'dek',
    'keyId',
    'vaultId',
    'fileId',
    'blob',
    'releasedSha256',
    'releasedBytes',
    'fileSize',
    'file',
  ],
  header: [
    'name',
    'description',
    'expect',
    'reason',
    'passphrase',
    'recoveryKey',
    'header',
    'vaultId',
    'deks',
  ],
  record: [
    'name',
    'description',
    'expect',
    'reason',
    'dek',
    'keyId',
    'vaultId',
    'recordId',
    'version',
    'sealed',
    'plaintext',
  ],
  snapshot: [
    'name',
    'description',
    'expect',
    'reason',
    'dek',
    'keyId',
    'vaultId',
    'stored',
    'entries',
    'sum',
  ],
  'index-commitment': [
    'name',
    'description',
    'expect',
    'reason',
    'dek',
    'keyId',
    'vaultId',
    'generation',
    'stored',
    'rows',
    'sum',
    'contentsSum',
    'contentsSumStored',
  ],
  log: ['name', 'description', 'expect', 'reason', 'dek', 'keyId', 'vaultId', 'entry', 'decoded'],
} as const;

type Kinds = {
  content: ContentVector;
  header: HeaderVector;
  record: RecordVector;
  snapshot: SnapshotVector;
  'index-commitment': IndexCommitmentVector;
  log: LogVector;
};

/**
 * Reads every vector of a kind, rejecting unknown keys and unknown expectations so a typo cannot silently turn a
 * vector into one that checks nothing.
 */
export function loadVectors<K extends keyof Kinds>(kind: K): Kinds[K][] {
  const dir = join(VECTOR_ROOT, kind);
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => {
      const parsed = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown>;
      const allowed: readonly string[] = KEYS[kind];
      for (const key of Object.keys(parsed)) {
        if (!allowed.includes(key)) throw new Error(`${kind}/${file}: unknown key "${key}"`);
      }
      if (!EXPECTATIONS.includes(parsed.expect as Expectation)) {
        throw new Error(`${kind}/${file}: unknown expectation "${String(parsed.expect)}"`);
      }
      if (`${String(parsed.name)}.json` !== file)
        throw new Error(`${kind}/${file}: name does not match file name`);
      return parsed as unknown as Kinds[K];
    });
}
