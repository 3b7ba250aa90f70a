import type { BrowserWindowConstructorOptions } from 'electron';

/**
 * The Content-Security-Policy sent with every response of the app protocol: only the app's own scripts, workers,
 * styles and images; no inline or evaluated code, no network, no plugins, no framing, no forms. `blob:` images are
 * for in-memory previews of vault files; audio and video play only from the media previews' scheme. The one worker,
 * pdf.js's for PDF previews, is a bundled file of the app's own: `worker-src` says so rather than leaving it to
 * the fallback to `script-src`.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "font-src 'self'",
  "connect-src 'none'",
  'media-src coffer-media:',
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const MIN_WIDTH = 720;
const MIN_HEIGHT = 480;

/**
 * The options of Coffer's one window. A pure function, so a test can check the hardening without Electron: the
 * renderer is treated as hostile (it shows names an attacker may have chosen), so it gets no Node, runs sandboxed
 * in an isolated context, and keeps the same-origin policy.
 */
export function windowOptions(
  preloadPath: string,
  { devTools, workArea }: { devTools: boolean; workArea: { width: number; height: number } },
): BrowserWindowConstructorOptions {
  return {
    // Wide enough for the toolbar's words beside its icons (they give way below 1,240 px); never larger than the
    // screen's work area, nor smaller than the least the window allows.
    width: Math.max(MIN_WIDTH, Math.min(1280, workArea.width)),
    height: Math.max(MIN_HEIGHT, Math.min(800, workArea.height)),
    minWidth: MIN_WIDTH,
    minHeight: MIN_HEIGHT,
    title: 'Coffer',
    // Shown once the first paint is ready, so the user never sees an empty white frame.
    show: false,
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      // Off in the packaged app; on for development builds.
      devTools,
    },
  };
}
