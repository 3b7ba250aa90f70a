import type { MenuItemConstructorOptions } from 'electron';

import type { VaultSummary } from '../../src/shared/contract.js';

/** What the tray and dock menus show: the true state of the open vaults, read from the back end. */
export interface VaultsState {
  /** Open vaults that are unlocked. */
  readonly unlocked: number;
  /** Open vaults that are locked. */
  readonly locked: number;
}

export interface TrayActions {
  readonly lockAll: () => void;
  /** Shows the window (it shows the unlock screen of a locked vault). */
  readonly showWindow: () => void;
  readonly quit: () => void;
}

/**
 * The tray menu's items, from the vaults' state. A pure function, so a test checks what a user sees in each state.
 * "Lock All Vaults" is offered only while one is unlocked, "Unlock…" only while one is locked; `withQuit` is off
 * for the macOS dock menu, which has its own Quit.
 */
export function trayMenuTemplate(
  state: VaultsState,
  actions: TrayActions,
  { withQuit }: { withQuit: boolean },
): MenuItemConstructorOptions[] {
  const status =
    state.unlocked > 0
      ? `${state.unlocked} vault${state.unlocked === 1 ? '' : 's'} unlocked`
      : state.locked > 0
        ? 'All vaults locked'
        : 'No vault open';
  return [
    { label: status, enabled: false },
    { type: 'separator' },
    { label: 'Lock All Vaults', enabled: state.unlocked > 0, click: actions.lockAll },
    ...(state.locked > 0 ? [{ label: 'Unlock…', click: actions.showWindow }] : []),
    { label: 'Show Coffer', click: actions.showWindow },
    ...(withQuit ? [{ type: 'separator' } as const, { label: 'Quit Coffer', click: actions.quit }] : []),
  ];
}

/** Counts the open vaults by their true state (the back end's `vault.listOpen`). */
export function countVaults(vaults: readonly Pick<VaultSummary, 'locked'>[]): VaultsState {
  const locked = vaults.filter((vault) => vault.locked).length;
  return { locked, unlocked: vaults.length - locked };
}

/**
 * Whether closing the window leaves Coffer running (with the window hidden, reachable from the tray or the dock)
 * rather than quitting: on macOS, as apps there do, and on Windows, where the tray icon is always shown. On Linux closing quits: many
 * desktops show no tray icons, and a vault open in a process nobody can see is what the lock exists to prevent.
 */
export function closeKeepsRunning(platform: NodeJS.Platform): boolean {
  return platform === 'darwin' || platform === 'win32';
}
