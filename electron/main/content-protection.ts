import type { Settings } from '../../src/shared/contract.js';

/** The slice of a BrowserWindow that content protection needs (structural, so a test can pass a stand-in). */
export interface ProtectableWindow {
  isDestroyed(): boolean;
  setContentProtection(enable: boolean): void;
}

/**
 * Whether `setContentProtection` has an effect here: macOS (the window's sharing type; apps built on
 * ScreenCaptureKit may still capture it) and Windows (excluded from capture). Not on Linux, where Electron ignores
 * it: the setting is shown there as not available rather than pretending.
 */
export function canProtectContent(platform: NodeJS.Platform): boolean {
  return platform === 'darwin' || platform === 'win32';
}

/** Applies the setting to every window (at creation, and whenever the settings change). */
export function applyContentProtection(
  windows: readonly ProtectableWindow[],
  settings: Pick<Settings, 'contentProtection'>,
): void {
  for (const window of windows)
    if (!window.isDestroyed()) window.setContentProtection(settings.contentProtection);
}
