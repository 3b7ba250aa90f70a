import { readFile } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';

import { protocol } from 'electron';

import { APP_HOST, APP_SCHEME } from './app-origin.js';
import { MEDIA_SCHEME_PRIVILEGES } from './media-protocol.js';
import { CONTENT_SECURITY_POLICY } from './window-options.js';

const MIME_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

/**
 * Registers `app:` as a standard, secure scheme, and the media previews' scheme. Electron accepts this only before
 * the app is ready, and only once, so main calls it at load time with every scheme. `codeCache` lets V8 keep the
 * window's compiled scripts between starts, as Chromium does for http(s) pages (the app's own code only, in the
 * profile folder); without it every start compiles them again. Not run here (no Electron binary): the first
 * unlock's rows painted 2–4 times as long after the back end's answer as a later unlock's in the preview, whose
 * Chromium starts without a cache, and compiling is part of that.
 */
export function registerAppSchemes(): void {
  protocol.registerSchemesAsPrivileged([
    {
      scheme: APP_SCHEME,
      privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true },
    },
    MEDIA_SCHEME_PRIVILEGES,
  ]);
}

/**
 * The file under `rendererDir` that `requestUrl` names, or `null` when the URL is not the app's or would leave the
 * folder (`..`, encoded separators, another host). `/` is the index page.
 */
export function resolveAppAsset(rendererDir: string, requestUrl: string): string | null {
  let url: URL;
  try {
    url = new URL(requestUrl);
  } catch {
    return null;
  }
  if (url.protocol !== `${APP_SCHEME}:` || url.host !== APP_HOST) return null;
  let pathname: string;
  try {
    pathname = decodeURIComponent(url.pathname);
  } catch {
    return null;
  }
  if (pathname.includes('\0') || pathname.includes('\\')) return null;
  const root = resolve(rendererDir);
  const file = resolve(root, `.${pathname === '/' ? '/index.html' : pathname}`);
  return file.startsWith(root + sep) ? file : null;
}

/** The headers every app response carries. */
export function appResponseHeaders(file: string): Record<string, string> {
  return {
    'content-type': MIME_TYPES[extname(file)] ?? 'application/octet-stream',
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  };
}

/**
 * Serves the built renderer from `rendererDir` on `app://coffer/`, each response with the CSP. Anything outside
 * the folder is a 404, never a file from elsewhere on disk.
 */
export function serveAppProtocol(rendererDir: string): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const file = resolveAppAsset(rendererDir, request.url);
    if (file === null) return new Response('Not found', { status: 404 });
    try {
      return new Response(await readFile(file), { headers: appResponseHeaders(file) });
    } catch {
      return new Response('Not found', { status: 404 });
    }
  });
}
