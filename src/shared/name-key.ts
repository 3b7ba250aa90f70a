/**
 * When two names are the same name in one folder: shared by the engine, which refuses a second, and the window,
 * which says which name was refused.
 */

/** True when every UTF-16 unit is ASCII. */
export function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

function isOneCodePoint(s: string): boolean {
  const first = s.codePointAt(0);
  return first !== undefined && s.length === (first > 0xffff ? 2 : 1);
}

/**
 * The key under which names clash within one folder. Two names with the same key cannot both be restored onto a
 * case-insensitive file system (Windows, macOS by default), so a folder may hold only one of them.
 *
 * @remarks
 * Each code point is mapped to its single-code-point uppercase, when it has one, and then lowercased: this
 * equates everything plain `toLowerCase()` does, plus the pairs it misses that case-insensitive file systems
 * equate, such as final and medial sigma ("ΟΔΟΣ", "οδος" and "οδοσ") or the micro sign and mu. Expansions such as
 * "ß" to "SS" are not applied, matching NTFS, which compares names one code unit at a time. Does not validate.
 * @param name - A name, in any normalisation form.
 * @returns The comparison key; never shown to the user.
 */
export function nameKey(name: string): string {
  // Most names are ASCII: NFC leaves them unchanged and per-code-point folding equals toLowerCase. Called for every
  // entry at unlock, so the fast path matters for large vaults.
  if (isAscii(name)) return name.toLowerCase();
  let key = '';
  for (const ch of name.normalize('NFC')) {
    const upper = ch.toUpperCase();
    // Per code point, so lowercasing never applies Greek final-sigma context.
    key += (isOneCodePoint(upper) ? upper : ch).toLowerCase();
  }
  return key;
}
