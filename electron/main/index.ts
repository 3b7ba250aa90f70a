/**
 * Coffer's Electron main process: one hardened window showing the renderer from `app://coffer/`, the app back
 * end (src/app) behind one IPC door, and the locks that protect keys (idle, suspend, screen lock, quit).
 * Each concern is its own module; this file only wires them in the order Electron requires.
 */
import { join } from 'node:path';

import { app, BrowserWindow, dialog, Notification, powerMonitor, session } from 'electron';

import { createBackend, type Backend } from '../../src/app/backend.js';
import { CofferError, configureHostRuntime, startWorkers } from '../../src/core/index.js';
import type { LockReason, Settings } from '../../src/shared/contract.js';
import { APP_URL } from './app-origin.js';
import { registerAppScheme, serveAppProtocol } from './app-protocol.js';
import { applyContentProtection, canProtectContent } from './content-protection.js';
import { nativeDialogs } from './dialogs.js';
import { denyPermissions, refuseEscapes } from './hardening.js';
import { startAutoLock } from './idle-lock.js';
import { registerIpc } from './ipc.js';
import { electronShell } from './shell.js';
import { startJobNotifier } from './job-notifier.js';
import { installMenu } from './menu.js';
import { findElectronSqliteBinding } from './native-binding.js';
import { windowOptions } from './window-options.js';

/** Used when the settings cannot be read: lock after ten idle minutes rather than never. */
const FALLBACK_AUTO_LOCK_MINUTES = 10;

// Both must happen before `ready`.
registerAppScheme();
app.enableSandbox();

if (!app.requestSingleInstanceLock()) {
  // A second launch hands over to the first (which raises its window) instead of opening the vaults twice.
  app.quit();
} else {
  configureHostRuntime({
    guardedKeyMemory: false,
    sqliteNativeBinding: findElectronSqliteBinding(app.getAppPath(), process.versions.electron),
  });
  // The crypto workers start while the window loads, so the first add or restore does not wait for them.
  startWorkers();
  refuseEscapes(app);
  app
    .whenReady()
    .then(launch)
    .catch((error: unknown) => {
      // The back end's errors carry a message written for people; anything else is a bug.
      const message =
        error instanceof CofferError ? error.message : 'An unexpected error stopped Coffer from starting.';
      dialog.showErrorBox('Coffer could not start', message);
      app.exit(1);
    });
}

let window: BrowserWindow | null = null;
const getWindow = (): BrowserWindow | null => (window && !window.isDestroyed() ? window : null);

function createWindow(backend: Backend): BrowserWindow {
  const created = new BrowserWindow(
    windowOptions(join(import.meta.dirname, '../preload/index.cjs'), { devTools: !app.isPackaged }),
  );
  // Before the first paint, so not one frame can be captured unprotected.
  applyContentProtection([created], backend.settings);
  created.on('close', () => {
    void backend.windowClosed();
  });
  created.once('ready-to-show', () => {
    created.show();
  });
  created.on('closed', () => {
    window = null;
  });
  void created.loadURL(APP_URL);
  return created;
}

async function launch(): Promise<void> {
  serveAppProtocol(join(import.meta.dirname, '../renderer'));
  denyPermissions(session.defaultSession);

  const backend = await createBackend({
    dataDir: app.getPath('userData'),
    dialogs: nativeDialogs(getWindow),
    shell: electronShell(),
    contentProtection: canProtectContent(process.platform),
    hostNotifications: true,
    onSettingsChanged: (settings) => {
      applyContentProtection(BrowserWindow.getAllWindows(), settings);
    },
  });
  const lockAll = (reason: LockReason): Promise<void> => backend.lockAll(reason);
  registerIpc(backend, getWindow);
  installMenu(
    { lockAll: () => void lockAll('user') },
    { isMac: process.platform === 'darwin', devTools: !app.isPackaged },
  );
  const stopAutoLock = startAutoLock({
    powerMonitor,
    lockAll,
    autoLockMinutes: async () => {
      const settings = await backend.handle('settings.get', {});
      return settings.ok ? (settings.value as Settings).autoLockMinutes : FALLBACK_AUTO_LOCK_MINUTES;
    },
  });
  window = createWindow(backend);
  const showWindow = (): void => {
    const current = getWindow() ?? (window = createWindow(backend));
    if (current.isMinimized()) current.restore();
    current.show();
    current.focus();
  };
  startJobNotifier(backend, {
    inBackground: () => {
      const current = getWindow();
      return current === null || !current.isVisible() || current.isMinimized() || !current.isFocused();
    },
    show: ({ title, body }) => {
      if (!Notification.isSupported()) return;
      const notification = new Notification({ title, body });
      notification.on('click', showWindow);
      notification.show();
    },
  });

  app.on('second-instance', showWindow);
  // Closing the window quits: an open vault should not outlive the only view of it.
  app.on('window-all-closed', () => {
    app.quit();
  });
  quitAfterLocking(backend, stopAutoLock);
}

/** Holds the quit until every vault is locked (jobs stopped, keys wiped) and the back end is closed. */
function quitAfterLocking(backend: Backend, stopAutoLock: () => void): void {
  let locked = false;
  let locking = false;
  app.on('before-quit', (event) => {
    if (locked) return;
    event.preventDefault();
    if (locking) return;
    locking = true;
    stopAutoLock();
    void backend
      .lockAll('quit')
      .then(() => backend.dispose())
      .finally(() => {
        locked = true;
        app.quit();
      });
  });
}
