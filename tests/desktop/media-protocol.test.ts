import { Readable } from 'node:stream';

import { describe, expect, it, vi } from 'vitest';

import type { Backend } from '../../src/app/backend.js';

const handlers = new Map<string, (request: Request) => Response | Promise<Response>>();
const registered: unknown[] = [];
vi.mock('electron', () => ({
  protocol: {
    handle: (scheme: string, handler: (request: Request) => Response) => handlers.set(scheme, handler),
    registerSchemesAsPrivileged: (schemes: unknown[]) => registered.push(...schemes),
  },
}));

const { MEDIA_SCHEME, MEDIA_URL_BASE, serveMediaProtocol } =
  await import('../../electron/main/media-protocol.js');
const { registerAppSchemes } = await import('../../electron/main/app-protocol.js');
const { CONTENT_SECURITY_POLICY } = await import('../../electron/main/window-options.js');

describe('the coffer-media:// protocol', () => {
  it('is registered with the app scheme in the one call Electron allows, as a streaming scheme; the app scheme as standard, secure, fetch and code cache only', () => {
    registerAppSchemes();
    expect(registered).toEqual([
      // Nothing that loosens the page's rules (bypassCSP, corsEnabled, allowServiceWorkers, …).
      { scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true } },
      { scheme: MEDIA_SCHEME, privileges: { standard: true, secure: true, stream: true } },
    ]);
    expect(MEDIA_URL_BASE).toBe('coffer-media://media/');
    // Audio and video may come from this scheme only.
    expect(CONTENT_SECURITY_POLICY).toContain('media-src coffer-media:;');
  });

  it("hands each request's URL and Range to the back end and sends its answer", async () => {
    const serveMedia = vi.fn<Backend['serveMedia']>(() => ({
      status: 206,
      headers: { 'content-range': 'bytes 2-4/10', 'content-type': 'audio/wav' },
      body: Readable.from([Buffer.from('abc')]),
    }));
    serveMediaProtocol({ serveMedia } as unknown as Backend);
    const handler = handlers.get(MEDIA_SCHEME);
    if (!handler) throw new Error('no handler');
    const url = `${MEDIA_URL_BASE}token123`;
    const response = await handler(new Request(url, { headers: { range: 'bytes=2-4' } }));
    expect(serveMedia).toHaveBeenCalledWith(url, 'bytes=2-4');
    expect(response.status).toBe(206);
    expect(response.headers.get('content-range')).toBe('bytes 2-4/10');
    expect(await response.text()).toBe('abc');

    serveMedia.mockReturnValueOnce({ status: 404, headers: {} });
    expect((await handler(new Request(url))).status).toBe(404);
    expect(serveMedia).toHaveBeenLastCalledWith(url, null);
  });
});
