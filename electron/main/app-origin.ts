/**
 * The window's own origin. The renderer is served from this privileged custom scheme rather than file://, so it
 * gets no file-system privileges and IPC can tell the app's page from anything else by its URL.
 */
export const APP_SCHEME = 'app';
export const APP_HOST = 'coffer';
export const APP_URL = `${APP_SCHEME}://${APP_HOST}/index.html`;

/**
 * True when `url` is a page of the app itself (`app://coffer/…`). Parsed, not prefix-matched, so
 * `app://coffer.evil/` or `app://coffer@evil/` do not pass.
 */
export function isAppUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  // WHATWG URL gives non-special schemes an opaque origin, so compare scheme and host rather than `origin`.
  return (
    parsed.protocol === `${APP_SCHEME}:` &&
    parsed.host === APP_HOST &&
    parsed.username === '' &&
    parsed.password === ''
  );
}
