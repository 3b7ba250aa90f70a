import { Readable } from 'node:stream';

import { protocol } from 'electron';

import type { Backend } from '../../src/app/backend.js';

/**
 * Media previews (`preview.mediaUrl`) play from `coffer-media://media/<token>`: a privileged scheme with `stream`,
 * so Chromium's media element asks it for byte ranges as it plays and seeks, and the back end decrypts only the
 * chunks they hold. Served from memory; nothing reaches the disk.
 */
export const MEDIA_SCHEME = 'coffer-media';
export const MEDIA_URL_BASE = `${MEDIA_SCHEME}://media/`;

/** The scheme's privileges, registered with the app's own before `ready` (Electron allows one registration). */
export const MEDIA_SCHEME_PRIVILEGES = {
  scheme: MEDIA_SCHEME,
  privileges: { standard: true, secure: true, stream: true },
} as const;

/** Answers the scheme's requests from the back end, with the request's Range header. */
export function serveMediaProtocol(backend: Backend): void {
  protocol.handle(MEDIA_SCHEME, (request) => {
    const answer = backend.serveMedia(request.url, request.headers.get('range'));
    const body =
      answer.body && request.method !== 'HEAD' ? (Readable.toWeb(answer.body) as ReadableStream) : null;
    if (body === null) answer.body?.destroy();
    return new Response(body, { status: answer.status, headers: answer.headers });
  });
}
