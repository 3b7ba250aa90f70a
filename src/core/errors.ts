import type { ErrorCode } from '../shared/error-codes.js';

/**
 * Root of every error the engine throws on purpose. Anything else escaping the engine is a bug.
 * Messages are written for the person using the app: what happened, then what to do.
 */
export abstract class CofferError extends Error {
  abstract readonly code: ErrorCode;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** No key slot of the vault opens with the passphrase given. */
export class WrongPassphraseError extends CofferError {
  readonly code = 'WRONG_PASSPHRASE';

  constructor() {
    super(
      'Wrong passphrase: it does not unlock this vault. Check for typos, Caps Lock and the keyboard layout, then try again.',
    );
  }
}

/** Why authenticated data was rejected; lets the UI and CLI say something more useful than "failed". */
export type IntegrityReason =
  | 'tampered'
  | 'truncated'
  | 'trailing-data'
  | 'wrong-file'
  | 'unknown-key'
  | 'malformed'
  | 'header-damaged'
  | 'header-modified';

const INTEGRITY_DESCRIPTIONS: Record<IntegrityReason, string> = {
  tampered: 'failed authentication: it was damaged or modified',
  truncated: 'is truncated: its end is missing',
  'trailing-data': 'has unexpected data after its final chunk',
  'wrong-file': 'belongs to a different file or vault (swapped or copied in)',
  'unknown-key': 'names an encryption key this vault does not have',
  malformed: 'is not laid out as the vault format requires',
  'header-damaged': 'is damaged (its checksum does not match)',
  'header-modified': 'was modified after it was written (authentication failed)',
};

/** Where authenticated data failed, as far as the failing layer knows it. */
export interface IntegrityLocation {
  /** What failed, in words: "file contents", "vault header", "metadata record". */
  readonly subject: string;
  /** Hex id of the file whose contents failed, when known. */
  readonly fileId?: string;
  /** Index of the chunk that failed, when known. */
  readonly chunkIndex?: number;
}

/** Stored data did not authenticate or is not laid out as the format requires. Never retried, never ignored. */
export class IntegrityError extends CofferError {
  readonly code = 'INTEGRITY';
  readonly reason: IntegrityReason;
  readonly subject: string;
  readonly fileId: string | undefined;
  readonly chunkIndex: number | undefined;

  constructor(reason: IntegrityReason, location: IntegrityLocation) {
    const where = location.chunkIndex === undefined ? '' : ` (chunk ${location.chunkIndex})`;
    super(
      `Integrity check failed: the ${location.subject}${where} ${INTEGRITY_DESCRIPTIONS[reason]}. ` +
        'Nothing unauthenticated was released. Restore the affected data from a backup.',
    );
    this.reason = reason;
    this.subject = location.subject;
    this.fileId = location.fileId;
    this.chunkIndex = location.chunkIndex;
  }
}

/** Data written by a newer (or unknown) version of the format, or with an algorithm this build does not know. */
export class UnsupportedFormatError extends CofferError {
  readonly code = 'UNSUPPORTED_FORMAT';

  constructor(what: string, found: number, supported: number) {
    super(
      `Unsupported format: the ${what} uses version ${found}, but this version of Coffer reads only version ${supported}. ` +
        'Update Coffer to open it.',
    );
  }
}

/** Key-derivation parameters outside the accepted range; refused before any derivation runs. */
export class KdfLimitError extends CofferError {
  readonly code = 'KDF_LIMIT';
}

/** The folder or file given is not a Coffer vault. */
export class NotAVaultError extends CofferError {
  readonly code = 'NOT_A_VAULT';
}

/** A key was used after the vault was locked and its keys wiped. */
export class VaultLockedError extends CofferError {
  readonly code = 'VAULT_LOCKED';

  constructor() {
    super('The vault is locked. Unlock it with its passphrase and try again.');
  }
}

/** A caller passed a value the API does not accept (programming or usage error, not stored-data damage). */
export class InvalidArgumentError extends CofferError {
  readonly code = 'INVALID_ARGUMENT';
}

/** The crypto library misbehaved (e.g. an all-zero derived key). Nothing was written; not the user's fault. */
export class CryptoBackendError extends CofferError {
  readonly code = 'CRYPTO_BACKEND';
}
