/**
 * How the process that hosts the engine differs from plain Node. The Electron main process sets these once at
 * launch, before the first vault opens; the CLI and the tests keep the defaults.
 */
export interface HostRuntime {
  /**
   * Keep long-lived keys (KEK, DEKs) in sodium_malloc memory: guard pages, mlock, zeroed on free. Under Electron
   * sodium_malloc is reported to crash the process (V8's memory cage; holepunchto/sodium-native#185, #168), so
   * there keys live in ordinary zeroed, unpooled buffers, still wiped with sodium_memzero on lock. Defaults to off
   * when `process.versions.electron` is set.
   */
  readonly guardedKeyMemory: boolean;
  /**
   * A better-sqlite3 addon to load instead of the package's own build: Electron needs one compiled for its ABI,
   * while the CLI and tests use the Node build in node_modules. `undefined` = the package's own.
   */
  readonly sqliteNativeBinding: string | undefined;
}

let current: HostRuntime = {
  guardedKeyMemory: !('electron' in process.versions),
  sqliteNativeBinding: undefined,
};

/** Changes some of the host settings; call before opening a vault (keys already allocated keep their memory). */
export function configureHostRuntime(changes: Partial<HostRuntime>): void {
  current = { ...current, ...changes };
}

/** The host settings in force. */
export function hostRuntime(): HostRuntime {
  return current;
}
