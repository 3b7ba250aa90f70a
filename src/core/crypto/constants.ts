/** Sizes and limits of vault format version 1; docs/FORMAT.md is the normative text, this file mirrors it. */
export const FORMAT_VERSION = 1;

export const KEY_BYTES = 32;
export const NONCE_BYTES = 24;
export const TAG_BYTES = 16;
export const ID_BYTES = 16;
export const SALT_BYTES = 16;
export const HASH_BYTES = 32;

/** Plaintext bytes per non-final content chunk written by this build (see FORMAT.md, "Choosing the chunk size"). */
export const DEFAULT_CHUNK_SIZE = 64 * 1024;
/** Readers accept any chunk size in this range; the ceiling bounds the memory one chunk can make a reader hold. */
export const MIN_CHUNK_SIZE = 64;
export const MAX_CHUNK_SIZE = 16 * 1024 * 1024;

/** Domain-separation labels: one per purpose, so no key or MAC is ever valid in two roles. */
export const LABEL = {
  slot: 'coffer/v1 slot',
  dek: 'coffer/v1 dek',
  dekWrap: 'coffer/v1 dek-wrap-key',
  headerMac: 'coffer/v1 header-mac',
  contentKey: 'coffer/v1 content-key',
  content: 'coffer/v1 content',
  recordKey: 'coffer/v1 record-key',
  record: 'coffer/v1 record',
  snapshotKey: 'coffer/v1 snapshot-key',
  snapshot: 'coffer/v1 snapshot',
  /** Format 1.1 (index schema 4): records bound to a per-row version, and the index commitment (FORMAT.md 8.7). */
  recordV11: 'coffer/v1.1 record',
  indexRowKey: 'coffer/v1.1 index-row-key',
  indexSealKey: 'coffer/v1.1 index-seal-key',
  indexCommitment: 'coffer/v1.1 index-commitment',
  contentsSum: 'coffer/v1.1 contents-sum',
  recoveryKey: 'coffer/v1 recovery-key',
  recoveryCheck: 'coffer/v1 recovery-check',
  logKey: 'coffer/v1 log-key',
  log: 'coffer/v1 log',
} as const;
