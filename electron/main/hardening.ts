import type { App, Session, WebContents } from 'electron';

/**
 * Refuses everything a page could use to leave the app or gain powers: navigation (the app is one page), new
 * windows, `<webview>`, and every permission request or check (camera, notifications, clipboard-read, …).
 * Applied to every web contents Electron creates, so nothing opened later escapes it.
 */
export function refuseEscapes(app: App): void {
  app.on('web-contents-created', (_event, contents: WebContents) => {
    contents.on('will-navigate', (event) => {
      event.preventDefault();
    });
    contents.on('will-redirect', (event) => {
      event.preventDefault();
    });
    contents.on('will-attach-webview', (event) => {
      event.preventDefault();
    });
    contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  });
}

/** Denies every permission request and check of `session`. */
export function denyPermissions(session: Session): void {
  session.setPermissionRequestHandler((_contents, _permission, callback) => {
    callback(false);
  });
  session.setPermissionCheckHandler(() => false);
}
