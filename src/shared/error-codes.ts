/**
 * Stable, machine-readable error codes. They cross process boundaries (IPC, CLI exit codes, JSON output), so a code
 * is never renamed or reused once released.
 */
export const ERROR_CODES = [
  'WRONG_PASSPHRASE',
  'INTEGRITY',
  'UNSUPPORTED_FORMAT',
  'KDF_LIMIT',
  'NOT_A_VAULT',
  'VAULT_LOCKED',
  'INVALID_ARGUMENT',
  'CRYPTO_BACKEND',
  'VAULT_IN_USE',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'INVALID_NAME',
  'CANCELLED',
  'READ_ONLY',
  'SOURCE_CHANGED',
  'IO',
  'BUSY',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];
