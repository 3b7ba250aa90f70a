import { timingSafeEqual } from 'node:crypto';

import {
  IntegrityError,
  InvalidArgumentError,
  KdfLimitError,
  NotAVaultError,
  UnsupportedFormatError,
  WrongPassphraseError,
} from '../errors.js';
import { ascii, ByteReader, u16, u32, u8 } from './bytes.js';
import {
  FORMAT_VERSION,
  HASH_BYTES,
  ID_BYTES,
  KEY_BYTES,
  LABEL,
  NONCE_BYTES,
  SALT_BYTES,
  TAG_BYTES,
} from './constants.js';
import { checkKdfParams, derivePassphraseKey, type KdfParams } from './kdf.js';
import { deriveSubkey, Keyring, SecretKey } from './keys.js';
import type { RecoveryKey } from './recovery-key.js';
import type { SodiumBackend } from './sodium.js';

/** First bytes of a vault header file: "COFFERVH". */
const VAULT_HEADER_MAGIC = ascii('COFFERVH');

const SLOT_TYPE_PASSPHRASE = 1;
const SLOT_TYPE_RECOVERY = 2;
const KDF_ALG_ARGON2ID13 = 1;
/** Keyed BLAKE2b over the recovery key (FORMAT.md 4.2.1). */
const KDF_ALG_KEYED_BLAKE2B = 2;
/** At most this many key slots in a header, recovery slot included. */
export const MAX_SLOTS = 8;
/** The largest header file (FORMAT.md 4.1): 8 slots of 100 bytes and 65,535 wrapped DEKs of 76. */
export const MAX_HEADER_BYTES = 96 + 100 * MAX_SLOTS + 76 * 0xffff;
/**
 * Total Argon2id work (passes × KiB, summed over slots) unlock may face: a crafted header with many costly slots
 * could otherwise stall unlock for minutes. 16 passes over 1 GiB: about 14 s here in the worst case.
 */
export const KDF_TOTAL_BUDGET = 16 * 1024 * 1024;
const SUBJECT = 'vault header';

interface SealedSlot {
  readonly salt: Buffer;
  readonly nonce: Buffer;
  /** The KEK sealed under the slot key: 32 bytes of ciphertext and a 16-byte tag. */
  readonly wrappedKek: Buffer;
}

/** One way in: a passphrase whose Argon2id output unwraps the vault's KEK (slot type 1). */
export interface PassphraseSlot extends SealedSlot {
  readonly kind: 'passphrase';
  readonly kdf: KdfParams;
}

/** The recovery key's way in (slot type 2, at most one per header): no Argon2id, FORMAT.md 4.2.1. */
export interface RecoverySlot extends SealedSlot {
  readonly kind: 'recovery-key';
}

export type KeySlot = PassphraseSlot | RecoverySlot;

/** What opens a slot: a passphrase (NFC UTF-8 bytes) tries the passphrase slots, a recovery key the recovery slot. */
export type UnlockSecret = Uint8Array | RecoveryKey;

/** A data-encryption key sealed under the KEK, named by its key id. */
export interface WrappedDek {
  readonly keyId: number;
  readonly nonce: Buffer;
  readonly wrappedKey: Buffer;
}

/** The parsed, not yet authenticated, contents of a vault header file. */
export interface VaultHeader {
  readonly version: number;
  readonly vaultId: Buffer;
  readonly slots: readonly KeySlot[];
  readonly deks: readonly WrappedDek[];
}

/** Keys of an unlocked vault. Wipe with {@link UnlockedKeys.wipe} at lock. Never log or send over IPC. */
export class UnlockedKeys {
  constructor(
    readonly vaultId: Buffer,
    readonly kek: SecretKey,
    readonly keyring: Keyring,
    /**
     * The salt of the slot that opened (salts are random, so it names the slot however the table changes). Moved to
     * the new slot when that slot is rewritten (a passphrase change) once the new header is written.
     */
    public openedSlotSalt: Buffer,
  ) {}

  wipe(): void {
    this.kek.wipe();
    this.keyring.wipe();
  }
}

type SlotParams = Pick<PassphraseSlot, 'kind' | 'kdf' | 'salt'> | Pick<RecoverySlot, 'kind' | 'salt'>;

function slotParamBytes(slot: SlotParams): Buffer {
  const passphrase = slot.kind === 'passphrase';
  return Buffer.concat([
    u8(passphrase ? SLOT_TYPE_PASSPHRASE : SLOT_TYPE_RECOVERY),
    u8(passphrase ? KDF_ALG_ARGON2ID13 : KDF_ALG_KEYED_BLAKE2B),
    u16(0),
    u32(passphrase ? slot.kdf.opslimit : 0),
    u32(passphrase ? slot.kdf.memlimitKiB : 0),
    slot.salt,
  ]);
}

function slotAad(vaultId: Buffer, slot: SlotParams): Buffer {
  return Buffer.concat([ascii(LABEL.slot), vaultId, slotParamBytes(slot)]);
}

function dekAad(vaultId: Buffer, keyId: number): Buffer {
  return Buffer.concat([ascii(LABEL.dek), vaultId, u32(keyId)]);
}

function headerBody(header: VaultHeader): Buffer {
  return Buffer.concat([
    VAULT_HEADER_MAGIC,
    u16(header.version),
    u16(0),
    header.vaultId,
    u8(header.slots.length),
    u8(0),
    u16(header.deks.length),
    ...header.slots.flatMap((slot) => [slotParamBytes(slot), slot.nonce, slot.wrappedKek]),
    ...header.deks.flatMap((dek) => [u32(dek.keyId), dek.nonce, dek.wrappedKey]),
  ]);
}

function headerMac(sodium: SodiumBackend, kek: SecretKey, body: Buffer): Buffer {
  const macKey = deriveSubkey(sodium, kek, LABEL.headerMac);
  try {
    return sodium.blake2b(HASH_BYTES, body, macKey.bytes);
  } finally {
    macKey.wipe();
  }
}

/** @throws {@link IntegrityError} (`header-modified`) unless the header's MAC verifies under `kek`. */
export function verifyHeaderMac(sodium: SodiumBackend, kek: SecretKey, headerBytes: Buffer): void {
  const body = headerBytes.subarray(0, headerBytes.length - 2 * HASH_BYTES);
  const mac = headerBytes.subarray(body.length, body.length + HASH_BYTES);
  if (!timingSafeEqual(headerMac(sodium, kek, body), mac)) {
    throw new IntegrityError('header-modified', { subject: SUBJECT });
  }
}

/**
 * Serialises a header: body, then a MAC keyed from the KEK (detects deliberate edits), then an unkeyed checksum
 * (tells accidental damage apart from a wrong passphrase before any key derivation runs).
 */
export function serializeVaultHeader(sodium: SodiumBackend, header: VaultHeader, kek: SecretKey): Buffer {
  const body = headerBody(header);
  const withMac = Buffer.concat([body, headerMac(sodium, kek, body)]);
  return Buffer.concat([withMac, sodium.blake2b(HASH_BYTES, withMac)]);
}

/**
 * Parses a header file and checks its structure and checksum. Nothing here needs the passphrase, so damage is
 * reported as damage rather than as a wrong passphrase.
 * @throws {@link NotAVaultError} when the magic bytes are missing.
 * @throws {@link UnsupportedFormatError} for a newer format version (with a checksum that holds).
 * @throws {@link IntegrityError} when the checksum fails (whatever the version says) or the layout is malformed.
 */
export function parseVaultHeader(sodium: SodiumBackend, bytes: Buffer): VaultHeader {
  if (
    bytes.length < VAULT_HEADER_MAGIC.length ||
    !bytes.subarray(0, VAULT_HEADER_MAGIC.length).equals(VAULT_HEADER_MAGIC)
  ) {
    throw new NotAVaultError(
      'This is not a Coffer vault: its header file does not start with the Coffer signature.',
    );
  }
  // The checksum before the version (FORMAT.md 4.5): every version keeps it, so an unknown version with a good
  // checksum was written by a newer Coffer, and one with a bad checksum is damage, for which the backup is tried.
  if (bytes.length < 2 * HASH_BYTES) throw new IntegrityError('truncated', { subject: SUBJECT });
  const checked = bytes.subarray(0, bytes.length - HASH_BYTES);
  if (!sodium.blake2b(HASH_BYTES, checked).equals(bytes.subarray(bytes.length - HASH_BYTES))) {
    throw new IntegrityError('header-damaged', { subject: SUBJECT });
  }
  const reader = new ByteReader(bytes, SUBJECT);
  reader.bytes(VAULT_HEADER_MAGIC.length);
  const version = reader.u16();
  if (version !== FORMAT_VERSION) throw new UnsupportedFormatError('vault', version, FORMAT_VERSION);
  const malformed = (): IntegrityError => new IntegrityError('malformed', { subject: SUBJECT });
  if (reader.u16() !== 0) throw malformed();
  const vaultId = reader.bytes(ID_BYTES);
  const slotCount = reader.u8();
  if (reader.u8() !== 0) throw malformed();
  const dekCount = reader.u16();
  if (slotCount === 0 || slotCount > MAX_SLOTS || dekCount === 0) throw malformed();
  const slots: KeySlot[] = [];
  for (let i = 0; i < slotCount; i++) slots.push(readSlot(reader, malformed));
  if (slots.filter((slot) => slot.kind === 'recovery-key').length > 1) throw malformed();
  const deks: WrappedDek[] = [];
  const seen = new Set<number>();
  for (let i = 0; i < dekCount; i++) {
    const keyId = reader.u32();
    if (seen.has(keyId)) throw malformed();
    seen.add(keyId);
    deks.push({ keyId, nonce: reader.bytes(NONCE_BYTES), wrappedKey: reader.bytes(KEY_BYTES + TAG_BYTES) });
  }
  if (reader.remaining !== 2 * HASH_BYTES) throw malformed();
  return { version, vaultId, slots, deks };
}

function readSlot(reader: ByteReader, malformed: () => IntegrityError): KeySlot {
  const type = reader.u8();
  const algorithm = reader.u8();
  const expected = {
    [SLOT_TYPE_PASSPHRASE]: KDF_ALG_ARGON2ID13,
    [SLOT_TYPE_RECOVERY]: KDF_ALG_KEYED_BLAKE2B,
  }[type];
  if (expected === undefined) throw new UnsupportedFormatError('key slot type', type, SLOT_TYPE_RECOVERY);
  if (algorithm !== expected)
    throw new UnsupportedFormatError('key-derivation algorithm', algorithm, expected);
  if (reader.u16() !== 0) throw malformed();
  const kdf = { opslimit: reader.u32(), memlimitKiB: reader.u32() };
  const sealed = {
    salt: reader.bytes(SALT_BYTES),
    nonce: reader.bytes(NONCE_BYTES),
    wrappedKek: reader.bytes(KEY_BYTES + TAG_BYTES),
  };
  if (type === SLOT_TYPE_PASSPHRASE) return { kind: 'passphrase', kdf, ...sealed };
  if (kdf.opslimit !== 0 || kdf.memlimitKiB !== 0) throw malformed();
  return { kind: 'recovery-key', ...sealed };
}

/** The recovery slot's key: keyed BLAKE2b over its salt, keyed with the recovery key's 20 bytes (FORMAT.md 4.2.1). */
function recoverySlotKey(sodium: SodiumBackend, recoveryKey: RecoveryKey, salt: Buffer): SecretKey {
  const derived = sodium.blake2b(
    KEY_BYTES,
    Buffer.concat([ascii(LABEL.recoveryKey), salt]),
    recoveryKey.secret,
  );
  const key = SecretKey.ephemeral(sodium, derived);
  sodium.memzero(derived);
  return key;
}

function isPassphrase(secret: UnlockSecret): secret is Uint8Array {
  return secret instanceof Uint8Array;
}

/** Derives the key of a slot of `params`' kind from `secret`, or undefined when the secret is of the other kind. */
async function slotKey(
  sodium: SodiumBackend,
  params: SlotParams,
  secret: UnlockSecret,
): Promise<SecretKey | undefined> {
  if (params.kind === 'passphrase') {
    return isPassphrase(secret) ? derivePassphraseKey(sodium, secret, params.salt, params.kdf) : undefined;
  }
  return isPassphrase(secret) ? undefined : recoverySlotKey(sodium, secret, params.salt);
}

/**
 * Seals the KEK into a new slot for `secret`, with a fresh salt and nonce: a passphrase slot with `kdf` (required
 * then), or the recovery slot. Costs one key derivation.
 * @throws {@link InvalidArgumentError} for an empty passphrase; {@link KdfLimitError} for `kdf` out of range.
 */
export async function sealSlot(
  sodium: SodiumBackend,
  vaultId: Buffer,
  kek: SecretKey,
  secret: UnlockSecret,
  kdf?: KdfParams,
  salt: Buffer = sodium.randomBytes(SALT_BYTES),
): Promise<KeySlot> {
  let params: SlotParams;
  if (isPassphrase(secret)) {
    if (secret.byteLength === 0) throw new InvalidArgumentError('The passphrase must not be empty.');
    if (!kdf) throw new Error('internal error: a passphrase slot needs its KDF parameters');
    checkKdfParams(kdf);
    params = { kind: 'passphrase', kdf, salt };
  } else params = { kind: 'recovery-key', salt };
  const key = await slotKey(sodium, params, secret);
  if (!key) throw new Error("internal error: a slot key of the secret's own kind");
  try {
    const nonce = sodium.randomBytes(NONCE_BYTES);
    const wrappedKek = sodium.aeadEncrypt(kek.bytes, slotAad(vaultId, params), nonce, key.bytes);
    return { ...params, nonce, wrappedKek };
  } finally {
    key.wipe();
  }
}

export function wrapDek(
  sodium: SodiumBackend,
  vaultId: Buffer,
  kek: SecretKey,
  keyId: number,
  dek: SecretKey,
): WrappedDek {
  const nonce = sodium.randomBytes(NONCE_BYTES);
  const wrapKey = deriveSubkey(sodium, kek, LABEL.dekWrap);
  try {
    return {
      keyId,
      nonce,
      wrappedKey: sodium.aeadEncrypt(dek.bytes, dekAad(vaultId, keyId), nonce, wrapKey.bytes),
    };
  } finally {
    wrapKey.wipe();
  }
}

/** The key id of the first DEK of a new vault. */
const FIRST_KEY_ID = 1;

/**
 * Creates the keys of a new vault: a random vault id, KEK and first DEK, and one passphrase slot.
 * @returns the header file bytes and the unlocked keys (the caller owns them and must wipe them).
 * @throws {@link KdfLimitError} when `kdf` is outside the floor/ceiling.
 * @throws {@link InvalidArgumentError} for an empty passphrase.
 */
export async function createVaultKeys(
  sodium: SodiumBackend,
  passphrase: Uint8Array,
  kdf: KdfParams,
): Promise<{ headerBytes: Buffer; keys: UnlockedKeys }> {
  if (passphrase.byteLength === 0) throw new InvalidArgumentError('The passphrase must not be empty.');
  checkKdfParams(kdf);
  const vaultId = sodium.randomBytes(ID_BYTES);
  const salt = sodium.randomBytes(SALT_BYTES);
  const kek = SecretKey.generate(sodium);
  const dek = SecretKey.generate(sodium);
  try {
    const slot = await sealSlot(sodium, vaultId, kek, passphrase, kdf, salt);
    const header: VaultHeader = {
      version: FORMAT_VERSION,
      vaultId,
      slots: [slot],
      deks: [wrapDek(sodium, vaultId, kek, FIRST_KEY_ID, dek)],
    };
    const keyring = new Keyring();
    keyring.add(FIRST_KEY_ID, dek);
    return {
      headerBytes: serializeVaultHeader(sodium, header, kek),
      keys: new UnlockedKeys(vaultId, kek, keyring, slot.salt),
    };
  } catch (error) {
    kek.wipe();
    dek.wipe();
    throw error;
  }
}

/**
 * Rewrites an unlocked vault's header: authenticates the current bytes with the KEK, lets `change` build the new
 * header from them, checks it against the header rules and serialises it with a new MAC and checksum. The one way
 * every header change (slots, DEKs) is made (FORMAT.md 4.6); nothing is written here.
 * @returns the new header bytes, to be written in place of the old (see `header-file.ts`).
 * @throws {@link IntegrityError} if `headerBytes` is not this vault's header or fails its MAC; whatever `change`
 * throws; {@link InvalidArgumentError} when the result would have no slot, more than {@link MAX_SLOTS} or two
 * recovery slots; {@link KdfLimitError} when its passphrase slots break the limits or the total budget.
 */
export async function rewriteVaultHeader(
  sodium: SodiumBackend,
  keys: UnlockedKeys,
  headerBytes: Buffer,
  change: (header: VaultHeader) => VaultHeader | Promise<VaultHeader>,
): Promise<Buffer> {
  const header = parseVaultHeader(sodium, headerBytes);
  if (!header.vaultId.equals(keys.vaultId)) throw new IntegrityError('wrong-file', { subject: SUBJECT });
  // Re-MACing an unverified header would bless whatever an attacker slipped into it.
  verifyHeaderMac(sodium, keys.kek, headerBytes);
  const changed = await change(header);
  if (changed.slots.length === 0) throw new InvalidArgumentError('A vault needs at least one key slot.');
  if (changed.slots.length > MAX_SLOTS)
    throw new InvalidArgumentError(`A vault has at most ${MAX_SLOTS} key slots. Remove one first.`);
  if (changed.slots.filter((slot) => slot.kind === 'recovery-key').length > 1)
    throw new Error('internal error: a header holds at most one recovery slot');
  checkSlotBudget(passphraseParams(changed.slots));
  return serializeVaultHeader(sodium, changed, keys.kek);
}

/**
 * Adds a passphrase slot to an unlocked vault's header. Costs one key derivation; no data is re-encrypted.
 * @returns the new header bytes, to be written atomically in place of the old.
 * @throws as {@link rewriteVaultHeader} and {@link sealSlot}; {@link KdfLimitError} before any derivation when the
 * new slot would break the total budget.
 */
export async function addPassphraseSlot(
  sodium: SodiumBackend,
  keys: UnlockedKeys,
  headerBytes: Buffer,
  passphrase: Uint8Array,
  kdf: KdfParams,
): Promise<Buffer> {
  return rewriteVaultHeader(sodium, keys, headerBytes, async (header) => {
    checkSlotBudget([...passphraseParams(header.slots), kdf]);
    if (header.slots.length >= MAX_SLOTS)
      throw new InvalidArgumentError(
        `A vault has at most ${MAX_SLOTS} key slots, and this one has them all. Remove one first.`,
      );
    const slot = await sealSlot(sodium, header.vaultId, keys.kek, passphrase, kdf);
    return { ...header, slots: [...header.slots, slot] };
  });
}

function passphraseParams(slots: readonly KeySlot[]): KdfParams[] {
  return slots.flatMap((slot) => (slot.kind === 'passphrase' ? [slot.kdf] : []));
}

/**
 * Checks every slot's parameters and their summed work before any derivation runs.
 * @throws {@link KdfLimitError} when one slot is out of range or all of them together exceed the budget.
 */
export function checkSlotBudget(params: readonly KdfParams[]): void {
  for (const kdf of params) checkKdfParams(kdf);
  const totalWork = params.reduce((sum, kdf) => sum + kdf.opslimit * kdf.memlimitKiB, 0);
  if (totalWork > KDF_TOTAL_BUDGET) {
    throw new KdfLimitError(
      `The vault's ${params.length} key slots together demand too much key-derivation work. Refusing to run ` +
        'them; the vault header may have been crafted to stall unlocking.',
    );
  }
}

async function openKek(
  sodium: SodiumBackend,
  header: VaultHeader,
  secret: UnlockSecret,
): Promise<{ kek: SecretKey; slot: KeySlot }> {
  // Limits are checked for every slot before the first derivation runs.
  checkSlotBudget(passphraseParams(header.slots));
  for (const slot of header.slots) {
    const key = await slotKey(sodium, slot, secret);
    if (!key) continue;
    try {
      const kek = sodium.aeadDecrypt(slot.wrappedKek, slotAad(header.vaultId, slot), slot.nonce, key.bytes);
      if (kek) {
        const copy = SecretKey.copyOf(sodium, kek);
        sodium.memzero(kek);
        return { kek: copy, slot };
      }
    } finally {
      key.wipe();
    }
  }
  throw new WrongPassphraseError(isPassphrase(secret) ? 'passphrase' : 'recovery key');
}

/**
 * Unlocks a vault header with a passphrase or the recovery key: checks structure and checksum, checks KDF limits,
 * derives, unwraps the KEK, verifies the header MAC, then unwraps every DEK.
 * @throws {@link NotAVaultError}, {@link UnsupportedFormatError} or {@link IntegrityError} for a bad header.
 * @throws {@link KdfLimitError} when a slot's parameters are out of range (before deriving anything).
 * @throws {@link WrongPassphraseError} when no slot opens.
 */
export async function unlockVaultKeys(
  sodium: SodiumBackend,
  headerBytes: Buffer,
  secret: UnlockSecret,
): Promise<UnlockedKeys> {
  const header = parseVaultHeader(sodium, headerBytes);
  const { kek, slot } = await openKek(sodium, header, secret);
  const keyring = new Keyring();
  const wrapKey = deriveSubkey(sodium, kek, LABEL.dekWrap);
  try {
    verifyHeaderMac(sodium, kek, headerBytes);
    for (const dek of header.deks) {
      const key = sodium.aeadDecrypt(
        dek.wrappedKey,
        dekAad(header.vaultId, dek.keyId),
        dek.nonce,
        wrapKey.bytes,
      );
      if (!key) throw new IntegrityError('tampered', { subject: `vault header's key ${dek.keyId}` });
      keyring.add(dek.keyId, SecretKey.copyOf(sodium, key));
      sodium.memzero(key);
    }
    return new UnlockedKeys(Buffer.from(header.vaultId), kek, keyring, Buffer.from(slot.salt));
  } catch (error) {
    kek.wipe();
    keyring.wipe();
    throw error;
  } finally {
    wrapKey.wipe();
  }
}
