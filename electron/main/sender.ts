import { isAppUrl } from './app-origin.js';

/** The parts of an IPC event and a frame that the sender check reads (structural, so tests can fake them). */
export interface FrameLike {
  readonly url: string;
  readonly parent: FrameLike | null;
  readonly processId: number;
  readonly routingId: number;
}
export interface IpcEventLike {
  readonly senderFrame: FrameLike | null;
  readonly sender: unknown;
}
export interface TrustedWindow {
  readonly webContents: { readonly mainFrame: FrameLike };
}

/**
 * True only for a message from the main frame of Coffer's own window while it shows the app's page. A subframe,
 * another window's contents, a frame that navigated elsewhere, or a frame already gone (`senderFrame` null) is
 * refused: the renderer shows attacker-chosen names, and IPC is the one door into main.
 */
export function isTrustedSender(event: IpcEventLike, window: TrustedWindow | null): boolean {
  const frame = event.senderFrame;
  if (window === null || frame === null) return false;
  if (event.sender !== window.webContents) return false;
  const main = window.webContents.mainFrame;
  if (frame.parent !== null) return false;
  if (frame.processId !== main.processId || frame.routingId !== main.routingId) return false;
  return isAppUrl(frame.url);
}
