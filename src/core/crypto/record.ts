import { IntegrityError, InvalidArgumentError, type IntegrityReason } from '../errors.js';
import { ascii } from './bytes.js';
import { ID_BYTES, LABEL, NONCE_BYTES, TAG_BYTES } from './constants.js';
import { deriveSubkey, type Keyring, type SecretKey } from './keys.js';
import type { SodiumBackend } from './sodium.js';

/** Readers accept padded lengths in multiples of this: what writers before format 1.1 padded to. */
const RECORD_PADDING_BLOCK = 32;
/**
 * Writers pad to multiples of this: nearly every record (about 130 bytes plus its name) then seals to the same
 * 296 bytes, so renaming an entry no longer changes its length (FORMAT.md section 7 has the measurements).
 */
export const RECORD_BUCKET = 256;
const SUBJECT = 'metadata record';

/** Which row a sealed record belongs to; bound into the AAD so records cannot be swapped or moved. */
export interface RecordBinding {
  /** The record's permanent random 16-byte id (never reused, unlike an SQLite rowid). */
  readonly recordId: Buffer;
  readonly keyId: number;
  /**
   * Format 1.1: the row's version (`nodes.version`), bumped at every reseal, so no two records ever sealed for a row
   * share an AAD. Absent for a format 1.0 record, sealed under the 1.0 label without a version.
   */
  readonly version?: bigint | undefined;
}

const VERSION_BYTES = 8;

/** The padded length of a record: ISO/IEC 7816-4 padding (0x80, then zeros) up to the next multiple of the bucket. */
function paddedLength(length: number): number {
  return (Math.floor(length / RECORD_BUCKET) + 1) * RECORD_BUCKET;
}

function unpad(padded: Buffer): Buffer | null {
  if (padded.length === 0 || padded.length % RECORD_PADDING_BLOCK !== 0) return null;
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  return end >= 0 && padded[end] === 0x80 ? padded.subarray(0, end) : null;
}

/**
 * Seals and opens index records (names, sizes, times, parents) under a per-DEK record subkey.
 * Sealed form: 24-byte random nonce ‖ XChaCha20-Poly1305 ciphertext of the padded record ‖ tag, with
 * AAD = label ‖ vault id ‖ record id ‖ key id (‖ version, format 1.1). Subkeys are cached per key id; {@link RecordSealer.wipe} at lock.
 */
export class RecordSealer {
  readonly #sodium: SodiumBackend;
  readonly #keyring: Keyring;
  readonly #vaultId: Buffer;
  readonly #subkeys = new Map<number, SecretKey>();
  #aadBuffer: Buffer | undefined;
  #aadBufferV11: Buffer | undefined;

  constructor(sodium: SodiumBackend, keyring: Keyring, vaultId: Buffer) {
    this.#sodium = sodium;
    this.#keyring = keyring;
    this.#vaultId = vaultId;
  }

  #subkey(keyId: number): SecretKey | undefined {
    let subkey = this.#subkeys.get(keyId);
    // A wiped subkey's DEK was retired (Keyring.remove): look again, so its rows read as unknown-key.
    if (!subkey || subkey.wiped) {
      const dek = this.#keyring.find(keyId);
      if (!dek) return undefined;
      subkey = deriveSubkey(this.#sodium, dek, LABEL.recordKey, this.#vaultId);
      this.#subkeys.set(keyId, subkey);
    }
    return subkey;
  }

  /**
   * The AAD (FORMAT.md section 7), written into one reused buffer per format: only the record id, key id and
   * version change between records.
   */
  #aad(binding: RecordBinding): Buffer {
    const { version } = binding;
    const label = version === undefined ? LABEL.record : LABEL.recordV11;
    const prefix = label.length + this.#vaultId.length;
    let aad: Buffer;
    if (version === undefined) {
      aad = this.#aadBuffer ??= Buffer.concat([ascii(label), this.#vaultId, Buffer.alloc(ID_BYTES + 4)]);
    } else {
      aad = this.#aadBufferV11 ??= Buffer.concat([
        ascii(label),
        this.#vaultId,
        Buffer.alloc(ID_BYTES + 4 + VERSION_BYTES),
      ]);
      aad.writeBigUInt64LE(version, prefix + ID_BYTES + 4);
    }
    binding.recordId.copy(aad, prefix);
    aad.writeUInt32LE(binding.keyId, prefix + ID_BYTES);
    return aad;
  }

  /**
   * Seals a record's plaintext for the given row.
   * @throws {@link IntegrityError} (`unknown-key`) when the keyring has no such key id.
   * @throws {@link InvalidArgumentError} for a record id that is not 16 bytes.
   */
  seal(binding: RecordBinding, plaintext: Uint8Array): Buffer {
    if (binding.recordId.length !== ID_BYTES)
      throw new InvalidArgumentError(`A record id is ${ID_BYTES} bytes.`);
    const subkey = this.#subkey(binding.keyId);
    if (!subkey) throw new IntegrityError('unknown-key', { subject: SUBJECT });
    // nonce ‖ padded record, encrypted in place into ciphertext ‖ tag: one buffer per record (an add seals one per
    // file), where the padding, the ciphertext and the concatenation took three, and no plaintext copy is left.
    const length = paddedLength(plaintext.byteLength);
    const sealed = Buffer.alloc(NONCE_BYTES + length + TAG_BYTES);
    const nonce = sealed.subarray(0, NONCE_BYTES);
    nonce.set(this.#sodium.randomBytes(NONCE_BYTES));
    const body = sealed.subarray(NONCE_BYTES, NONCE_BYTES + length);
    body.set(plaintext);
    body[plaintext.byteLength] = 0x80;
    const tag = sealed.subarray(NONCE_BYTES + length);
    this.#sodium.aeadEncryptDetached(body, tag, body, this.#aad(binding), nonce, subkey.bytes);
    return sealed;
  }

  /**
   * Opens a sealed record read from the row named by `binding`.
   * @throws {@link IntegrityError} when the record fails authentication (damaged, edited, or moved from another row
   * or vault), is malformed, names an unknown key, or its row's id is not 16 bytes.
   */
  open(binding: RecordBinding, sealed: Uint8Array): Buffer {
    // Built only on failure: the hex of every id opened at an unlock from the rows was wasted work and garbage.
    const failed = (reason: IntegrityReason): IntegrityError =>
      new IntegrityError(reason, { subject: SUBJECT, fileId: binding.recordId.toString('hex') });
    // The AAD holds exactly 16 id bytes: any other length would open under a prefix of the id, or a stale one.
    if (binding.recordId.length !== ID_BYTES) throw failed('malformed');
    const subkey = this.#subkey(binding.keyId);
    if (!subkey) throw failed('unknown-key');
    if (sealed.byteLength < NONCE_BYTES + TAG_BYTES) throw failed('truncated');
    const nonce = sealed.subarray(0, NONCE_BYTES);
    const padded = this.#sodium.aeadDecrypt(
      sealed.subarray(NONCE_BYTES),
      this.#aad(binding),
      nonce,
      subkey.bytes,
    );
    if (!padded) throw failed('tampered');
    const plaintext = unpad(padded);
    if (!plaintext) throw failed('malformed');
    return plaintext;
  }

  wipe(): void {
    for (const subkey of this.#subkeys.values()) subkey.wipe();
    this.#subkeys.clear();
  }
}
