/**
 * Coffer's Electron main process: one hardened window showing the renderer from `app://coffer/`, the app back
 * end (src/app) behind one IPC door, and the locks that protect keys (idle, suspend, screen lock, quit).
 * Each concern is its own module; this file only wires them in the order Electron requires.
 */
import { join } from 'node:path';

import { app, BrowserWindow, dialog, Notification, powerMonitor, screen, session } from 'electron';

import { createBackend, type Backend } from '../../src/app/backend.js';
import { CofferError, configureHostRuntime, startWorkers } from '../../src/core/index.js';
import type { LockReason, Settings, VaultSummary } from '../../src/shared/contract.js';
import { APP_URL } from './app-origin.js';
import { registerAppSchemes, serveAppProtocol } from './app-protocol.js';
import { applyContentProtection, canProtectContent } from './content-protection.js';
import { nativeDialogs } from './dialogs.js';
import { denyPermissions, refuseEscapes } from './hardening.js';
import { startAutoLock } from './idle-lock.js';
import { registerIpc } from './ipc.js';
import { createSystemMenus, type SystemMenus } from './tray.js';
import { closeKeepsRunning, countVaults } from './tray-menu.js';
import { electronShell } from './shell.js';
import { startJobNotifier } from './job-notifier.js';
import { installMenu } from './menu.js';
import { MEDIA_URL_BASE, serveMediaProtocol } from './media-protocol.js';
import { findElectronSqliteBinding } from './native-binding.js';
import { windowOptions } from './window-options.js';

/** Used when the settings cannot be read: lock after ten idle minutes rather than never (and on suspend and screen lock). */
const FALLBACK_AUTO_LOCK_MINUTES = 10;

// Both must happen before `ready`.
registerAppSchemes();
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

/** Set once the app is quitting: a window's 'close' then really closes it. */
let quitting = false;

function createWindow(backend: Backend): BrowserWindow {
  const created = new BrowserWindow(
    windowOptions(join(import.meta.dirname, '../preload/index.cjs'), {
      devTools: !app.isPackaged,
      // The screen the window opens on: the one the pointer is on.
      workArea: screen.getDisplayNearestPoint(screen.getCursorScreenPoint()).workAreaSize,
    }),
  );
  // Before the first paint, so not one frame can be captured unprotected.
  applyContentProtection([created], backend.settings);
  created.on('close', (event) => {
    void backend.windowClosed();
    if (!quitting && closeKeepsRunning(process.platform)) {
      // Hidden, not destroyed: the tray or dock shows it again, at the unlock screen if the vault locked.
      event.preventDefault();
      created.hide();
    }
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
    folderDrops: true,
    onSettingsChanged: (settings) => {
      applyContentProtection(BrowserWindow.getAllWindows(), settings);
    },
    mediaUrlBase: MEDIA_URL_BASE,
  });
  serveMediaProtocol(backend);
  const lockAll = (reason: LockReason): Promise<void> => backend.lockAll(reason);
  const showWindow = (): void => {
    const current = getWindow() ?? (window = createWindow(backend));
    if (current.isMinimized()) current.restore();
    current.show();
    current.focus();
  };
  const isMac = process.platform === 'darwin';
  const menus = createSystemMenus(
    {
      lockAll: () => void lockAll('user'),
      showWindow,
      quit: () => {
        app.quit();
      },
    },
    { isMac, dock: app.dock },
  );
  // The menus show the true lock state: read from the back end after anything that may change it.
  const refreshMenus = (): void => {
    void backend.handle('vault.listOpen', {}).then((open) => {
      menus.update(countVaults(open.ok ? (open.value as VaultSummary[]) : []));
    });
  };
  refreshMenus();
  backend.onEvent((event) => {
    if (event === 'locked' || event === 'closed') refreshMenus();
  });
  registerIpc(
    {
      handle: async (channel, payload) => {
        const result = await backend.handle(channel, payload);
        if (typeof channel === 'string' && channel.startsWith('vault.')) refreshMenus();
        return result;
      },
      registerDroppedPaths: (paths) => backend.registerDroppedPaths(paths),
      registerDroppedBytes: (files) => backend.registerDroppedBytes(files),
      onEvent: (listener) => backend.onEvent(listener),
    },
    getWindow,
  );
  installMenu({ lockAll: () => void lockAll('user') }, { isMac, devTools: !app.isPackaged });
  const stopAutoLock = startAutoLock({
    powerMonitor,
    lockAll,
    busy: () => backend.jobsRunning(),
    settings: async () => {
      const settings = await backend.handle('settings.get', {});
      return settings.ok
        ? (settings.value as Settings)
        : { autoLockMinutes: FALLBACK_AUTO_LOCK_MINUTES, lockOnSuspend: true, lockOnScreenLock: true };
    },
  });
  window = createWindow(backend);
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
  // macOS: a click on the dock icon with the window hidden.
  app.on('activate', showWindow);
  // Only reached where closing quits (Linux; see closeKeepsRunning): a vault must not outlive its only view there.
  app.on('window-all-closed', () => {
    app.quit();
  });
  app.on('before-quit', () => {
    quitting = true;
  });
  quitAfterLocking(backend, stopAutoLock, menus);
}

/** Holds the quit until every vault is locked (jobs stopped, keys wiped) and the back end is closed. */
function quitAfterLocking(backend: Backend, stopAutoLock: () => void, menus: SystemMenus): void {
  let locked = false;
  let locking = false;
  app.on('before-quit', (event) => {
    if (locked) return;
    event.preventDefault();
    if (locking) return;
    locking = true;
    stopAutoLock();
    menus.destroy();
    void backend
      .lockAll('quit')
      .then(() => backend.dispose())
      .finally(() => {
        locked = true;
        app.quit();
      });
  });
}
