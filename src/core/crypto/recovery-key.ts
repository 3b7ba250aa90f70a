import { InvalidArgumentError } from '../errors.js';
import { ascii } from './bytes.js';
import { LABEL } from './constants.js';
import type { SodiumBackend } from './sodium.js';

/** Random bytes of a recovery key: 160 bits, beyond guessing without any key stretching (FORMAT.md 4.2.1). */
const RECOVERY_KEY_BYTES = 20;
/** Bytes of the checksum printed after the key: a typo passes it about once in 10^12. */
const CHECK_BYTES = 5;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** 25 bytes are exactly 40 base32 characters: no padding, no partial group. */
const PRINTED_CHARS = ((RECOVERY_KEY_BYTES + CHECK_BYTES) * 8) / 5;
const GROUP = 5;
const SEPARATORS = /[\s-]/gu;

function checkOf(sodium: SodiumBackend, secret: Uint8Array): Buffer {
  return sodium.blake2b(32, Buffer.concat([ascii(LABEL.recoveryCheck), secret])).subarray(0, CHECK_BYTES);
}

function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET.charAt((value >>> bits) & 31);
    }
    value &= (1 << bits) - 1;
  }
  return out;
}

/**
 * A vault's recovery key: 20 random bytes, printed as 40 base32 characters with a checksum. Holds the bytes in a
 * buffer that {@link RecoveryKey.wipe} clears; the printed form is a string, which JavaScript cannot wipe.
 */
export class RecoveryKey {
  readonly #secret: Buffer;
  #wiped = false;

  private constructor(secret: Buffer) {
    this.#secret = secret;
  }

  /** A new random recovery key. */
  static generate(sodium: SodiumBackend): RecoveryKey {
    return new RecoveryKey(sodium.randomBytes(RECOVERY_KEY_BYTES));
  }

  /**
   * Reads a printed recovery key. Spaces, line breaks and dashes are ignored and letters may be lower case.
   * @throws {@link InvalidArgumentError} when it is not a well-formed recovery key (a character outside the
   * alphabet, too short or too long, or a checksum that does not match: a typo), so a typo is never reported as a
   * wrong key.
   */
  static parse(sodium: SodiumBackend, text: string): RecoveryKey {
    const compact = text.replace(SEPARATORS, '').toUpperCase();
    const bad = /[^A-Z2-7]/u.exec(compact)?.[0];
    const format = `A recovery key is ${PRINTED_CHARS} letters and digits 2-7 in groups of ${GROUP} (XXXXX-XXXXX-…).`;
    if (bad !== undefined) {
      throw new InvalidArgumentError(
        `This is not a Coffer recovery key: "${bad}" cannot be part of one. ${format} Check it for typos ` +
          '(0 is the letter O, 1 the letter I, 8 the letter B).',
      );
    }
    if (compact.length !== PRINTED_CHARS) {
      throw new InvalidArgumentError(
        `This is not a Coffer recovery key: it has ${compact.length} characters instead of ${PRINTED_CHARS}. ${format}`,
      );
    }
    const bytes = Buffer.alloc(RECOVERY_KEY_BYTES + CHECK_BYTES);
    let bits = 0;
    let value = 0;
    let at = 0;
    for (const char of compact) {
      value = (value << 5) | ALPHABET.indexOf(char);
      bits += 5;
      if (bits >= 8) {
        bits -= 8;
        bytes[at++] = (value >>> bits) & 0xff;
        value &= (1 << bits) - 1;
      }
    }
    const secret = Buffer.from(bytes.subarray(0, RECOVERY_KEY_BYTES));
    const matches = checkOf(sodium, secret).equals(bytes.subarray(RECOVERY_KEY_BYTES));
    sodium.memzero(bytes);
    if (!matches) {
      sodium.memzero(secret);
      throw new InvalidArgumentError(
        'This recovery key has a typo: its checksum does not match. Compare it character by character with the ' +
          'printed key and try again.',
      );
    }
    return new RecoveryKey(secret);
  }

  /**
   * The 20 secret bytes, for the key derivation only.
   * @throws {@link InvalidArgumentError} after {@link RecoveryKey.wipe}.
   */
  get secret(): Buffer {
    if (this.#wiped) throw new InvalidArgumentError('This recovery key has been wiped; read it again.');
    return this.#secret;
  }

  /** The printed form: 8 groups of 5 base32 characters, the last 8 characters holding the checksum. */
  format(sodium: SodiumBackend): string {
    const printed = base32(Buffer.concat([this.secret, checkOf(sodium, this.secret)]));
    return printed.match(new RegExp(`.{${GROUP}}`, 'gu'))?.join('-') ?? printed;
  }

  wipe(sodium: SodiumBackend): void {
    sodium.memzero(this.#secret);
    this.#wiped = true;
  }
}
