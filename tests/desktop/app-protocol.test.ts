import { join, resolve } from 'node:path';

import { describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => ({ protocol: {} }));

const { appResponseHeaders, resolveAppAsset } = await import('../../electron/main/app-protocol.js');
const { isAppUrl } = await import('../../electron/main/app-origin.js');

const root = resolve('/srv/coffer/out/renderer');

describe('the app:// protocol', () => {
  it('serves files of the renderer folder, the index page at /', () => {
    expect(resolveAppAsset(root, 'app://coffer/')).toBe(join(root, 'index.html'));
    expect(resolveAppAsset(root, 'app://coffer/assets/index-abc.js')).toBe(
      join(root, 'assets', 'index-abc.js'),
    );
  });

  it('resolves dot segments inside the folder, as the URL parser does', () => {
    expect(resolveAppAsset(root, 'app://coffer/../../etc/passwd')).toBe(join(root, 'etc', 'passwd'));
    expect(resolveAppAsset(root, 'app://coffer/%2e%2e/%2e%2e/etc/passwd')).toBe(join(root, 'etc', 'passwd'));
  });

  it.each([
    'app://coffer/assets/..%2f..%2f..%2fetc%2fpasswd',
    'app://coffer/..%5c..%5cwindows',
    'app://coffer/a%00.js',
    'app://other/index.html',
    'file:///etc/passwd',
    'app://coffer/%E0%A4%A',
  ])('serves nothing outside the folder or another host: %s', (url) => {
    expect(resolveAppAsset(root, url)).toBeNull();
  });

  it('sends the CSP and no-sniff with every response', () => {
    const headers = appResponseHeaders(join(root, 'index.html'));
    expect(headers['content-security-policy']).toContain("script-src 'self'");
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['content-type']).toMatch(/^text\/html/);
  });

  it('knows its own origin by parsing, not by prefix', () => {
    expect(isAppUrl('app://coffer/index.html')).toBe(true);
    expect(isAppUrl('app://coffer.evil/index.html')).toBe(false);
    expect(isAppUrl('app://coffer@evil/index.html')).toBe(false);
    expect(isAppUrl('app://user@coffer/index.html')).toBe(false);
    expect(isAppUrl('not a url')).toBe(false);
  });
});
