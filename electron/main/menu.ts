import { Menu, type MenuItemConstructorOptions } from 'electron';

export interface MenuActions {
  /** Locks every open vault (the same as the window's lock button). */
  readonly lockAll: () => void;
}

/**
 * The application menu with the usual roles and shortcuts (copy and paste in text fields, zoom, full screen,
 * quit) and "Lock All Vaults" on Ctrl/Cmd+L. Developer tools only in development builds.
 */
export function installMenu(
  actions: MenuActions,
  { isMac, devTools }: { isMac: boolean; devTools: boolean },
): void {
  const lockItem: MenuItemConstructorOptions = {
    label: 'Lock All Vaults',
    accelerator: 'CmdOrCtrl+L',
    click: actions.lockAll,
  };
  const template: MenuItemConstructorOptions[] = [
    ...(isMac ? [{ role: 'appMenu' } as const] : []),
    {
      label: 'File',
      submenu: [lockItem, { type: 'separator' }, isMac ? { role: 'close' } : { role: 'quit' }],
    },
    { role: 'editMenu' },
    {
      label: 'View',
      submenu: [
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
        ...(devTools ? [{ type: 'separator' } as const, { role: 'toggleDevTools' } as const] : []),
      ],
    },
    { role: 'windowMenu' },
  ];
  Menu.setApplicationMenu(Menu.buildFromTemplate(template));
}
