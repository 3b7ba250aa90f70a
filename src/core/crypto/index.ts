export { loadSodium, loadNativeSodium, loadWasmSodium, type SodiumBackend } from './sodium.js';
export {
  KDF_PRESETS,
  KDF_FLOOR,
  KDF_CEILING,
  DEFAULT_KDF_PRESET,
  checkKdfParams,
  derivePassphraseKey,
  encodePassphrase,
  type KdfParams,
  type KdfPreset,
} from './kdf.js';
export { SecretKey, Keyring } from './keys.js';
export {
  createVaultKeys,
  unlockVaultKeys,
  addPassphraseSlot,
  parseVaultHeader,
  UnlockedKeys,
  FIRST_KEY_ID,
} from './vault-header.js';
export {
  ContentEncryptor,
  ContentDecryptor,
  ChunkCipher,
  chunkTransform,
  parseBlobHeader,
  blobLayout,
  blobSize,
  BLOB_HEADER_BYTES,
  type ContentBinding,
  type KeyResolver,
} from './content.js';
export { RecordSealer, type RecordBinding } from './record.js';
export { DEFAULT_CHUNK_SIZE, FORMAT_VERSION, ID_BYTES } from './constants.js';
