/** The Coffer engine: everything the CLI and the Electron main process use. No Electron imports here. */
export { Vault, type CreateOptions, type OpenOptions } from './vault/vault.js';
export type { AddSource, StreamedFile } from './vault/add.js';
export * from './types.js';
export * from './errors.js';
export { encodePassphrase, KDF_PRESETS, DEFAULT_KDF_PRESET, type KdfPreset } from './crypto/kdf.js';
export { RecoveryKey } from './crypto/recovery-key.js';
export { loadSodium, loadNativeSodium, loadWasmSodium, type SodiumBackend } from './crypto/sodium.js';
export { checkName, parseVaultPath, formatVaultPath } from './names.js';
export { startWorkers } from './workers.js';
export { configureHostRuntime, hostRuntime, type HostRuntime } from './host-runtime.js';
export { SMALL_FILE_LIMIT } from './vault/layout.js';
export { DEFAULT_CONTENT_PADDING, type ContentPadding } from './crypto/padding.js';
export { defaultStateDir, removeStaleRestoreTemps } from './vault/restore-record.js';
export { rollbackWarning, SeenStates, type IndexState } from './vault/seen-states.js';
export type { ActivityLogReport, LogProblem } from './vault/activity-log.js';
export type { ActivityEntry, ActivityKind, ActivityOutcome } from './vault/log-entry.js';
