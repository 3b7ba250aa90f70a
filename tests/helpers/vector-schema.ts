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
}

/** A vault header to unlock with `passphrase`; on success the DEKs it must yield. */
export interface HeaderVector extends VectorBase {
  passphrase: string;
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
  ],
  header: ['name', 'description', 'expect', 'reason', 'passphrase', 'header', 'vaultId', 'deks'],
  record: [
    'name',
    'description',
    'expect',
    'reason',
    'dek',
    'keyId',
    'vaultId',
    'recordId',
    'sealed',
    'plaintext',
  ],
  snapshot: ['name', 'description', 'expect', 'reason', 'dek', 'keyId', 'vaultId', 'stored', 'entries'],
  log: ['name', 'description', 'expect', 'reason', 'dek', 'keyId', 'vaultId', 'entry', 'decoded'],
} as const;

type Kinds = {
  content: ContentVector;
  header: HeaderVector;
  record: RecordVector;
  snapshot: SnapshotVector;
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
