import { Menu, nativeImage, Tray } from 'electron';

import { trayMenuTemplate, type TrayActions, type VaultsState } from './tray-menu.js';

/** A padlock, 32×32 (shown at 16×16 points), grey so it reads on light and dark panels; a template image on macOS. */
const ICON_PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAYAAABzenr0AAAAZUlEQVR42u3XSwoAIAgEUI/uze0GpYMfjFnMzvBBWSSqKpMRAggAFtkjpQBzpgRgwaQCPA0gBNI8tX4dANmy3QB4vr1rs0cvPJIdza8IAjIfHQJGzgBSS8BfAN6EpYDx15A/o5YcxHNdDK5+UrEAAAAASUVORK5CYII=';

export interface SystemMenus {
  /** Rebuilds the menus from the vaults' state now. */
  update(state: VaultsState): void;
  destroy(): void;
}

/**
 * Creates the tray icon (Windows, Linux with a StatusNotifier host, macOS menu bar) and, on macOS, the dock menu.
 * A desktop without a tray area still gets the window's own menu; creating the icon there does not fail but shows
 * nothing.
 */
export function createSystemMenus(
  actions: TrayActions,
  { isMac, dock }: { isMac: boolean; dock: Electron.Dock | undefined },
): SystemMenus {
  const icon = nativeImage.createFromBuffer(Buffer.from(ICON_PNG_BASE64, 'base64'), { scaleFactor: 2 });
  if (isMac) icon.setTemplateImage(true);
  const tray = new Tray(icon);
  tray.setToolTip('Coffer');
  // On Windows a click on the icon shows the window (as tray apps do); the menu is on the right click.
  tray.on('click', actions.showWindow);
  return {
    update(state) {
      tray.setContextMenu(Menu.buildFromTemplate(trayMenuTemplate(state, actions, { withQuit: true })));
      dock?.setMenu(Menu.buildFromTemplate(trayMenuTemplate(state, actions, { withQuit: false })));
    },
    destroy() {
      tray.destroy();
    },
  };
}
