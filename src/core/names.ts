import path from 'node:path';

import { InvalidArgumentError, InvalidNameError, type InvalidNameReason } from './errors.js';

/**
 * Longest name, in UTF-8 bytes of its NFC form. ext4, APFS and most Linux file systems cap a name at 255 bytes;
 * NTFS caps it at 255 UTF-16 units, and a string never has more UTF-16 units than UTF-8 bytes, so a name within
 * this limit fits everywhere.
 */
export const MAX_NAME_BYTES = 255;

// Windows opens the device instead of the file whatever the extension, so "aux.tar.gz" is as unusable as "AUX".
// Microsoft lists COM¹ to LPT³ too: Windows counts the Latin-1 superscript digits as digits when matching devices.
const WINDOWS_DEVICE = /^(?:CON|PRN|AUX|NUL|COM[1-9¹²³]|LPT[1-9¹²³])$/iu;

const WINDOWS_FORBIDDEN = new Set(['<', '>', ':', '"', '|', '?', '*']);

// Unpaired surrogates cannot be encoded as UTF-8: two different strings would be stored as the same bytes.
const LONE_SURROGATE = /\p{Cs}/u;

// Invisible or reordering characters are legal in names but must not garble or disguise a name in a message.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

const SHOWN_CODE_POINTS = 80;

type Context = 'store' | 'restore';

interface Violation {
  readonly reason: InvalidNameReason;
  /** Why the name is refused, as a clause that follows "cannot be stored: ". */
  readonly why: string;
}

/** A name as it can safely appear in a message: quoted, shortened, with invisible characters spelled out. */
function show(name: string): string {
  let shown = '';
  let count = 0;
  for (const ch of name) {
    if (count === SHOWN_CODE_POINTS) {
      shown += '…';
      break;
    }
    shown += ch;
    count++;
  }
  return `"${shown.replace(UNPRINTABLE, (ch) => `<${codePoint(ch)}>`)}"`;
}

function codePoint(ch: string): string {
  return `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The first rule the NFC name breaks, most specific first, or undefined when it may be stored. */
function findViolation(name: string): Violation | undefined {
  if (name === '') return { reason: 'empty', why: 'a file or folder needs a name' };
  if (name === '.' || name === '..') {
    return { reason: 'dot', why: 'it means "this folder" or "the parent folder" in every path, not a name' };
  }
  // NUL first: it truncates the name in every C-based file-system call, so it is the most dangerous control.
  if (name.includes('\u0000')) {
    return {
      reason: 'nul',
      why: 'it contains a NUL character (U+0000), which no file system allows in names',
    };
  }
  for (const separator of ['/', '\\']) {
    if (name.includes(separator)) {
      return {
        reason: 'separator',
        why: `it contains "${separator}", which separates folders in paths${separator === '\\' ? ' on Windows' : ''}`,
      };
    }
  }
  for (const ch of name) {
    const code = ch.charCodeAt(0);
    if (code < 0x20 || code === 0x7f) {
      return { reason: 'control', why: `it contains the invisible control character ${codePoint(ch)}` };
    }
  }
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_NAME_BYTES) {
    return {
      reason: 'too-long',
      why:
        `it is ${bytes} bytes long in UTF-8 and the limit is ${MAX_NAME_BYTES} ` +
        '(accented letters take 2 bytes each, most other scripts 3, emoji 4)',
    };
  }
  for (const ch of name) {
    if (WINDOWS_FORBIDDEN.has(ch)) {
      return {
        reason: 'windows-reserved',
        why: `it contains "${ch}", which Windows does not allow in names`,
      };
    }
  }
  // Windows ignores spaces before the extension when it matches device names, so "CON .txt" is CON too.
  const stem = (name.split('.', 1)[0] ?? '').replace(/ +$/u, '');
  if (WINDOWS_DEVICE.test(stem)) {
    return { reason: 'windows-reserved', why: 'it is a reserved device name on Windows' };
  }
  // Windows silently drops these, so such a file could not be restored there under its own name. "..." is
  // refused for the same reason, although Linux and macOS accept it.
  if (name.endsWith('.') || name.endsWith(' ')) {
    return {
      reason: 'trailing-dot-or-space',
      why: 'it ends with a dot or a space, which Windows removes, so it could not be restored there as it is',
    };
  }
  return undefined;
}

// Printable ASCII without a character any rule refuses, not ending in a dot or a space: most names. Such a name is
// its own NFC form and breaks no rule unless it is a device name, so it skips the full check (unlocking a large
// vault checks every name).
const PLAIN_NAME = /^[\w !#$%&'()+,\-.;=@[\]^`{}~]*[\w!#$%&'()+,\-;=@[\]^`{}~]$/;
const DEVICE_PREFIX = /^(?:con|prn|aux|nul|com|lpt)/i;

/** True for a name that certainly breaks no rule; false means "run the full check". Exported for tests. */
export function isPlainName(name: string): boolean {
  return name.length <= MAX_NAME_BYTES && PLAIN_NAME.test(name) && !DEVICE_PREFIX.test(name);
}

/** The first rule a name breaks (see {@link checkName}), or undefined. Exported for tests. */
export function nameViolation(name: string): InvalidNameReason | undefined {
  return findViolation(name.normalize('NFC'))?.reason;
}

function check(name: string, context: Context): string {
  if (isPlainName(name)) return name;
  if (LONE_SURROGATE.test(name)) {
    throw new InvalidArgumentError(
      `The name ${show(name)} is not valid Unicode (it has an unpaired UTF-16 surrogate), so it cannot be ` +
        'stored or restored. This is a bug in the caller: names read from disk or from the vault never contain one.',
    );
  }
  const nfc = name.normalize('NFC');
  const violation = findViolation(nfc);
  if (violation === undefined) return nfc;
  const subject = nfc === '' ? 'An empty name' : show(nfc);
  const message =
    context === 'store'
      ? `${subject} cannot be stored: ${violation.why}. ${storeAdvice(violation.reason)}`
      : `${subject} cannot be restored: ${violation.why}. Coffer never stores such a name, so the vault's index ` +
        'may have been altered or written by a faulty program. Restore this item from a backup.';
  throw new InvalidNameError(violation.reason, message);
}

function storeAdvice(reason: InvalidNameReason): string {
  switch (reason) {
    case 'empty':
      return 'Give it a name and try again.';
    case 'too-long':
      return 'Shorten it and add it again.';
    default:
      return 'Rename it and add it again.';
  }
}

/**
 * Decides whether a file or folder may be stored under this name, on every system a vault may be restored to.
 * Checks the NFC form, which is the one stored, so the same name typed on macOS (NFD) and elsewhere is one name.
 * @param name - One name, not a path.
 * @returns The name in NFC.
 * @throws {@link InvalidNameError} when the name cannot be stored; `reason` says why.
 * @throws {@link InvalidArgumentError} when the string is not well-formed Unicode (an unpaired surrogate), which
 * only a programming error can produce.
 */
export function checkName(name: string): string {
  return check(name, 'store');
}

/**
 * Whether `name` is one a writer stores as it is ({@link checkName} accepts it unchanged): a read of stored names
 * in bulk, where anything else means a forged index.
 */
export function isStorableName(name: string): boolean {
  if (isPlainName(name)) return true;
  try {
    return checkName(name) === name;
  } catch (error) {
    if (error instanceof InvalidNameError || error instanceof InvalidArgumentError) return false;
    throw error;
  }
}

/**
 * Splits an absolute vault path ("/Photos/a.jpg") into checked names. "/" and "" are the root.
 * @param vaultPath - Absolute, "/"-separated; one trailing "/" is tolerated.
 * @returns The names from the root down, each in NFC; empty for the root.
 * @throws {@link InvalidArgumentError} when the path is relative or has an empty component ("//").
 * @throws {@link InvalidNameError} when a component is not a name that can be stored (see {@link checkName}).
 */
export function parseVaultPath(vaultPath: string): string[] {
  if (vaultPath === '' || vaultPath === '/') return [];
  if (!vaultPath.startsWith('/')) {
    throw new InvalidArgumentError(
      `The vault path ${show(vaultPath)} is not absolute. Vault paths start with "/", for example "/Photos/a.jpg".`,
    );
  }
  const body = vaultPath.endsWith('/') ? vaultPath.slice(1, -1) : vaultPath.slice(1);
  const parts = body.split('/');
  if (parts.includes('')) {
    throw new InvalidArgumentError(
      `The vault path ${show(vaultPath)} has an empty component ("//"). Remove the extra "/" and try again.`,
    );
  }
  return parts.map((part) => checkName(part));
}

/**
 * Joins names into an absolute vault path; the inverse of {@link parseVaultPath}. Every name is checked, so the
 * result always parses back into the same names and never addresses some other entry.
 * @param parts - Names from the root down; empty for the root.
 * @returns The vault path, "/" for the root, with every name in NFC.
 * @throws {@link InvalidNameError} when a name cannot be stored (see {@link checkName}).
 */
export function formatVaultPath(parts: readonly string[]): string {
  return `/${parts.map((part) => checkName(part)).join('/')}`;
}

/**
 * Where a vault entry is written on restore. The names come from decrypted index records, which anyone holding
 * the passphrase can forge, so each is checked again and the result is confirmed to stay inside `destDir`.
 * @param destDir - The folder being restored into; resolved against the working directory if relative.
 * @param parts - Names from the restored folder down to the entry; at least one.
 * @returns An absolute path strictly inside `destDir`, with every name in NFC.
 * @throws {@link InvalidNameError} when a name could not have been stored (`reason` says why), or, as a last
 * line of defence, with reason `separator` when the path would leave `destDir`.
 * @throws {@link InvalidArgumentError} when `parts` is empty, which would name `destDir` itself.
 */
export function destinationPath(destDir: string, parts: readonly string[]): string {
  if (parts.length === 0) {
    throw new InvalidArgumentError(
      'A restore destination needs at least one name below the destination folder; an empty list names the ' +
        'folder itself.',
    );
  }
  const root = path.resolve(destDir);
  const names = parts.map((part) => check(part, 'restore'));
  const destination = path.join(root, ...names);
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  if (!destination.startsWith(prefix) || destination.length === prefix.length) {
    throw new InvalidNameError(
      'separator',
      `The vault path ${show(`/${names.join('/')}`)} cannot be restored: it would be written outside ` +
        `${show(root)}. The vault's index may have been altered; restore this item from a backup.`,
    );
  }
  return destination;
}
