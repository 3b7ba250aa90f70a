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

/** No key slot of the vault opens with the passphrase (or recovery key) given. */
export class WrongPassphraseError extends CofferError {
  readonly code = 'WRONG_PASSPHRASE';

  constructor(secret: 'passphrase' | 'recovery key' = 'passphrase') {
    super(
      secret === 'passphrase'
        ? 'Wrong passphrase: it does not unlock this vault. Check for typos, Caps Lock and the keyboard layout, then try again.'
        : 'Wrong recovery key: it is well formed but does not unlock this vault. It may belong to another vault, or ' +
            'have been replaced by a newer recovery key (which revokes the old one).',
    );
  }
}

/** Why authenticated data was rejected; lets the UI and CLI say something more useful than "failed". */
export type IntegrityReason =
  | 'tampered'
  | 'truncated'
  | 'missing'
  | 'empty'
  | 'trailing-data'
  | 'wrong-file'
  | 'unknown-key'
  | 'malformed'
  | 'corrupt'
  | 'header-damaged'
  | 'header-modified';

const INTEGRITY_DESCRIPTIONS: Record<IntegrityReason, string> = {
  tampered: 'failed authentication: it was damaged or modified',
  truncated: 'is truncated: its end is missing',
  missing: 'is missing',
  empty: 'is empty',
  'trailing-data': 'has unexpected data after its final chunk',
  'wrong-file': 'belongs to a different file or vault (swapped or copied in)',
  'unknown-key': 'names an encryption key the header in use does not hold',
  malformed: 'is not laid out as the vault format requires',
  corrupt: 'is damaged: some of its pages are corrupt',
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
  /** What to do, when restoring from a backup is not the right advice. */
  readonly advice?: string;
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
        (location.advice ?? 'Nothing unauthenticated was released. Restore the affected data from a backup.'),
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

/** Another process (or window) has this vault open. */
export class VaultInUseError extends CofferError {
  readonly code = 'VAULT_IN_USE';

  constructor() {
    super('The vault is in use by another Coffer window or process. Close it there, then try again.');
  }
}

/** No file or folder at that path (in the vault, or on disk). */
export class NotFoundError extends CofferError {
  readonly code = 'NOT_FOUND';
}

/** Something already exists where a new file or folder would go. */
export class AlreadyExistsError extends CofferError {
  readonly code = 'ALREADY_EXISTS';
}

/** Why a file or folder name cannot be stored or restored. */
export type InvalidNameReason =
  | 'empty'
  | 'dot'
  | 'separator'
  | 'nul'
  | 'control'
  | 'too-long'
  | 'windows-reserved'
  | 'trailing-dot-or-space';

/** A name that could escape its folder or cannot exist on every supported system. */
export class InvalidNameError extends CofferError {
  readonly code = 'INVALID_NAME';
  readonly reason: InvalidNameReason;

  constructor(reason: InvalidNameReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** The user cancelled a long operation; whatever was unfinished was rolled back. */
export class CancelledError extends CofferError {
  readonly code = 'CANCELLED';

  constructor() {
    super('Cancelled. Whatever was not finished left no trace; everything finished before that is kept.');
  }
}

/** The vault folder cannot be written (read-only media or permissions): browsing and restoring still work. */
export class ReadOnlyVaultError extends CofferError {
  readonly code = 'READ_ONLY';

  constructor() {
    super(
      'This vault is read-only (its folder cannot be written). You can browse and restore, but not change it.',
    );
  }
}

/** A source file changed while it was being added; it was not stored. */
export class SourceChangedError extends CofferError {
  readonly code = 'SOURCE_CHANGED';
}

/** The operating system refused a read or write (disk full, permission denied, I/O error). */
export class IoError extends CofferError {
  readonly code = 'IO';
}

/** Another operation on the vault is changing what this one would change; it was not started. */
export class BusyError extends CofferError {
  readonly code = 'BUSY';

  /**
   * @param doing - What the running operation is doing ("adding files").
   * @param next - What to do about it, when not to wait for it to finish or cancel it.
   */
  constructor(doing: string, next = 'Try again when that has finished, or cancel it.') {
    super(`The vault is busy ${doing}. ${next}`);
  }
}
