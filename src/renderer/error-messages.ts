/**
 * What the window says for each error code: what happened and what to do next. The record is keyed by every code
 * the back end can send, so a new code does not type-check until it has words here. The engine's own message is
 * not shown: it may name internals, and the window speaks with one voice.
 */
import type { ResultErrorCode } from '../shared/contract.js';

export interface ErrorWords {
  /** What happened, in a sentence. */
  readonly message: string;
  /** What the person can do about it. */
  readonly next: string;
}

export const ERROR_WORDS: Readonly<Record<ResultErrorCode, ErrorWords>> = {
  WRONG_PASSPHRASE: {
    message: 'Wrong passphrase.',
    next: 'Check Caps Lock and the keyboard layout, then type it again.',
  },
  INTEGRITY: {
    message: 'Part of the vault is damaged or was changed outside Coffer.',
    next: 'Run “Check all data” in the vault details to see what is affected, and restore from a backup of the vault folder.',
  },
  UNSUPPORTED_FORMAT: {
    message: 'This vault was made by a newer version of Coffer.',
    next: 'Update Coffer to open it. Nothing in the vault was changed.',
  },
  KDF_LIMIT: {
    message: 'The vault asks for key settings outside the safe range, so Coffer will not try them.',
    next: 'The vault header may have been tampered with; open a backup of the vault folder.',
  },
  NOT_A_VAULT: {
    message: 'This folder is not a Coffer vault.',
    next: 'Choose the vault folder itself (the one Coffer created, holding coffer.header), or create a new vault.',
  },
  VAULT_LOCKED: {
    message: 'The vault is locked.',
    next: 'Unlock it with its passphrase and try again.',
  },
  INVALID_ARGUMENT: {
    message: 'Coffer could not do that with what was chosen.',
    next: 'Choose again; if the vault was closed meanwhile, open it again.',
  },
  CRYPTO_BACKEND: {
    message: 'The encryption library failed on this computer.',
    next: 'Close other programs to free memory and try again; if it keeps happening, reinstall Coffer.',
  },
  VAULT_IN_USE: {
    message: 'This vault is in use by another window or program.',
    next: 'Close it there (or wait for that program to finish), then open it again.',
  },
  NOT_FOUND: {
    message: 'That item or folder no longer exists.',
    next: 'It may have been moved or deleted; refresh and choose again.',
  },
  ALREADY_EXISTS: {
    message: 'Something with that name already exists there.',
    next: 'Choose another name or another place.',
  },
  INVALID_NAME: {
    // Every rule of the engine's checkName (src/core/names.ts): each is one a vault may be restored under.
    message: 'That name cannot be used.',
    next:
      'Choose one that is not "." or "..", has none of / \\ < > : " | ? *, does not end in a dot or a space, ' +
      'has no invisible control characters, is not a device name of Windows (such as CON or NUL) and is at most ' +
      '255 bytes long.',
  },
  CANCELLED: {
    message: 'Cancelled.',
    next: 'Nothing unfinished was kept; everything finished before that is kept.',
  },
  READ_ONLY: {
    message: 'This vault can only be read here (its folder is read-only).',
    next: 'Copy the vault folder somewhere writable, or change its permissions, to make changes.',
  },
  SOURCE_CHANGED: {
    message: 'A file changed while Coffer was reading it, so it was not added.',
    next: 'Add it again once the program writing it has finished.',
  },
  IO: {
    message: 'Coffer could not read or write a file on disk.',
    next: 'Check that the disk is connected, not full and that you may write there, then try again.',
  },
  BUSY: {
    message: 'The vault is busy with another task.',
    next: 'Try again when that has finished, or cancel it in the jobs panel.',
  },
  NOT_SUPPORTED: {
    message: 'This cannot be done here.',
    next: 'Use the desktop app for this.',
  },
  INTERNAL: {
    message: 'Something unexpected went wrong inside Coffer (a bug). Nothing was changed by this request.',
    next: 'Try again, and report it if it keeps happening.',
  },
};

/** Words that replace {@link ERROR_WORDS} for some codes where a request gives them a more specific meaning. */
export type SpecificErrorWords = Partial<Readonly<Record<ResultErrorCode, ErrorWords>>>;

/** One error, as the sentences the window shows: `specific`'s words for its code if it has them. */
export function errorSentence(code: ResultErrorCode, specific: SpecificErrorWords = {}): string {
  const words = specific[code] ?? ERROR_WORDS[code];
  return `${words.message} ${words.next}`;
}

/** The Security page's actions, each of which gives some codes a more specific meaning. */
export type SecurityAction =
  | 'change'
  | 'add'
  | 'remove'
  | 'recovery-key'
  | 'rotate'
  | 'reencrypt'
  | 'log'
  | 'header-backup'
  | 'header-restore';

const WRONG_CURRENT: ErrorWords = {
  message: 'That is not the passphrase this vault was unlocked with, so nothing was changed.',
  next: 'Type the current passphrase again (check Caps Lock and the keyboard layout).',
};

const OVER_KDF_BUDGET: ErrorWords = {
  message: "Unlocking would take too long with all of this vault's passphrases at these key strengths.",
  next: 'Choose a faster key strength, or remove a passphrase you no longer use first. Nothing was changed.',
};

/** A change refused because the header in use is older than the vault's data (FORMAT.md 4.7). */
const HEADER_OLDER_THAN_DATA: ErrorWords = {
  message:
    'The vault header in use is older than the data in this vault: an older copy was put back, and the ' +
    'backup copy of the header holds a key the data is sealed under. Nothing was changed, so that backup stays ' +
    'as it is.',
  next: 'Lock the vault, then choose “Restore a header backup…” on the Unlock screen and pick “coffer.header.bak” in the vault folder (show all files).',
};

/**
 * What a change of the browser's (an add, a rename, a move, a delete, a new folder) means by INTEGRITY while the
 * vault refuses every change because its header is older than its data: that refusal, not damage.
 */
export const CHANGE_REFUSED_FOR_OLDER_HEADER: SpecificErrorWords = { INTEGRITY: HEADER_OLDER_THAN_DATA };

/** A rotation or re-encryption refused for damage or for a header older than the data: which is in the notices. */
const KEYS_NOT_CHANGEABLE: ErrorWords = {
  message:
    "The vault's keys cannot be changed now: the vault header in use is older than the data in this vault, or " +
    'its index is damaged. Nothing was changed.',
  next: 'If the notices shown at unlock say an older header was put back, restore “coffer.header.bak” from the Unlock screen; otherwise run “Check all data” in the vault details.',
};

const BUSY_CHANGING: ErrorWords = {
  message: 'Another task is changing the vault right now.',
  next: 'Wait for it to finish in the jobs panel (or cancel it), then try again.',
};

/**
 * What the engine's errors mean on the Security page, where the general words would be vague ("could not do that
 * with what was chosen" for a ninth passphrase). Codes not listed use {@link ERROR_WORDS}.
 */
export const SECURITY_ERROR_WORDS: Readonly<Record<SecurityAction, SpecificErrorWords>> = {
  change: {
    WRONG_PASSPHRASE: WRONG_CURRENT,
    KDF_LIMIT: OVER_KDF_BUDGET,
    INTEGRITY: HEADER_OLDER_THAN_DATA,
    INVALID_ARGUMENT: {
      message: 'This window was unlocked with the recovery key, which has no passphrase to change.',
      next: 'Add a new passphrase instead, then remove the one you forgot.',
    },
  },
  add: {
    WRONG_PASSPHRASE: WRONG_CURRENT,
    KDF_LIMIT: OVER_KDF_BUDGET,
    INTEGRITY: HEADER_OLDER_THAN_DATA,
    INVALID_ARGUMENT: {
      message: 'This vault already has 8 ways in (passphrases and the recovery key), the most it can hold.',
      next: 'Remove a passphrase you no longer use, then add the new one.',
    },
  },
  remove: {
    INTEGRITY: HEADER_OLDER_THAN_DATA,
    INVALID_ARGUMENT: {
      message:
        'That passphrase cannot be removed: it is the last way into the vault, or the one this window used.',
      next: 'Add another passphrase first, or lock and unlock with another one. Nothing was changed.',
    },
  },
  'recovery-key': {
    WRONG_PASSPHRASE: WRONG_CURRENT,
    INTEGRITY: HEADER_OLDER_THAN_DATA,
    INVALID_ARGUMENT: {
      message: 'All 8 key slots hold passphrases, so there is no room for a recovery key.',
      next: 'Remove a passphrase you no longer use, then make the recovery key. The old key still works.',
    },
  },
  rotate: { BUSY: BUSY_CHANGING, INTEGRITY: KEYS_NOT_CHANGEABLE },
  'header-backup': {
    IO: {
      message: 'Coffer could not write the header backup in that folder.',
      next: 'Check that the disk is connected, not full and that you may write there, or choose another folder.',
    },
    INVALID_ARGUMENT: {
      message: 'The folder chosen for the header backup is no longer valid.',
      next: 'Choose the folder again.',
    },
  },
  'header-restore': {
    INTEGRITY: {
      message:
        "That file is not a header backup of this vault: it is another vault's, damaged, or another file.",
      next: 'Choose the ".coffer-header" file saved from this vault\'s Security page. Nothing was changed.',
    },
    NOT_A_VAULT: {
      message: 'That file is not a Coffer header backup, or the vault folder no longer looks like a vault.',
      next: 'Choose the ".coffer-header" file saved from this vault\'s Security page. Nothing was changed.',
    },
    WRONG_PASSPHRASE: {
      message: 'That passphrase or recovery key does not open this header backup.',
      next: 'Type one the vault had when the backup was saved (check Caps Lock). Nothing was changed.',
    },
    VAULT_IN_USE: {
      message: 'Another window or program has this vault open, so its header cannot be replaced now.',
      next: 'Close it there, then try again. Nothing was changed.',
    },
    INVALID_ARGUMENT: {
      message: 'The chosen file is no longer valid, or it is too big to be a header backup.',
      next: 'Choose the file again.',
    },
    IO: {
      message: 'Coffer could not read the header backup or write the vault header.',
      next: 'Check that the disk is connected and that the vault folder can be written, then try again.',
    },
  },
  reencrypt: { BUSY: BUSY_CHANGING, INTEGRITY: KEYS_NOT_CHANGEABLE },
  log: {
    INTEGRITY: {
      message: "The activity log file is not this vault's log, or not a file.",
      next: 'Move "activity.log" out of the vault folder (a new log starts), or put back its own copy from a backup.',
    },
    UNSUPPORTED_FORMAT: {
      message: 'The activity log was written by a newer version of Coffer.',
      next: 'Update Coffer to read it. The vault itself opens as usual.',
    },
  },
};

/** One error of a Security-page action, as the sentences the window shows. */
export function securityErrorSentence(action: SecurityAction, code: ResultErrorCode): string {
  return errorSentence(code, SECURITY_ERROR_WORDS[action]);
}
