/** Audio and video previews by range reads: the URLs the back end grants, and what it answers for them. */
import { openSync, readdirSync, readSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';

import { parseRange } from '../../src/app/media-streams.js';
import { addFiles, codeOf, newApp, newVaultIn, type TestApp } from './helpers.js';

const BASE = 'coffer-media://media/';
const CHUNK = 64 * 1024;
/** Three and a half chunks of a pattern that differs from chunk to chunk. */
const SOUND = Buffer.from(Array.from({ length: 3 * CHUNK + CHUNK / 2 }, (_, i) => (i * 7 + (i >> 11)) % 256));

async function bodyOf(body: Readable | undefined): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of body ?? []) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

async function withSound(): Promise<{ app: TestApp; vaultId: string; url: string; parent: string }> {
  const app = await newApp({ mediaUrlBase: BASE });
  const { vaultId, parent } = await newVaultIn(app);
  await addFiles(app, vaultId, { 'song.wav': SOUND, 'notes.txt': 'not media' });
  const { url } = await app.call('preview.mediaUrl', { vaultId, path: '/song.wav' });
  return { app, vaultId, url, parent };
}

describe('media previews', () => {
  it('grants an opaque URL with no path in it, one per preview', async () => {
    const { app, vaultId, url } = await withSound();
    expect(url.startsWith(BASE)).toBe(true);
    expect(url).not.toContain('song');
    expect(url.slice(BASE.length)).toMatch(/^[\w-]{43}$/);
    const again = await app.call('preview.mediaUrl', { vaultId, path: '/song.wav' });
    expect(again.url).not.toBe(url);
    expect(codeOf(await app.raw('preview.mediaUrl', { vaultId, path: '/notes.txt' }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(codeOf(await app.raw('preview.mediaUrl', { vaultId, path: '/gone.wav' }))).toBe('NOT_FOUND');
  });

  it('answers byte ranges with exactly those plaintext bytes, across chunk boundaries', async () => {
    const { app, url } = await withSound();
    const whole = app.backend.serveMedia(url, null);
    expect(whole.status).toBe(200);
    expect(whole.headers['content-type']).toBe('audio/wav');
    expect(whole.headers['accept-ranges']).toBe('bytes');
    expect(whole.headers['content-length']).toBe(String(SOUND.length));
    expect((await bodyOf(whole.body)).equals(SOUND)).toBe(true);

    for (const [header, start, end] of [
      ['bytes=0-', 0, SOUND.length - 1],
      [`bytes=${CHUNK - 10}-${CHUNK + 9}`, CHUNK - 10, CHUNK + 9],
      [`bytes=${2 * CHUNK}-`, 2 * CHUNK, SOUND.length - 1],
      ['bytes=-100', SOUND.length - 100, SOUND.length - 1],
      [`bytes=5-${SOUND.length + 1000}`, 5, SOUND.length - 1],
    ] as const) {
      const part = app.backend.serveMedia(url, header);
      expect(part.status, header).toBe(206);
      expect(part.headers['content-range'], header).toBe(`bytes ${start}-${end}/${SOUND.length}`);
      expect((await bodyOf(part.body)).equals(SOUND.subarray(start, end + 1)), header).toBe(true);
    }
    for (const header of [`bytes=${SOUND.length}-`, 'bytes=9-3', 'bytes=abc', 'items=0-1', 'bytes=0-1,5-9']) {
      const refused = app.backend.serveMedia(url, header);
      expect(refused.status, header).toBe(416);
      expect(refused.headers['content-range']).toBe(`bytes */${SOUND.length}`);
      expect(refused.body).toBeUndefined();
    }
  });

  it('refuses a URL it did not grant, one released, and every one of a vault after it locks', async () => {
    const { app, vaultId, url } = await withSound();
    expect(app.backend.serveMedia(`${BASE}${'A'.repeat(43)}`, null).status).toBe(404);
    expect(app.backend.serveMedia('/media/anything', null).status).toBe(404);

    const other = (await app.call('preview.mediaUrl', { vaultId, path: '/song.wav' })).url;
    await app.call('preview.releaseMedia', { url: other });
    expect(app.backend.serveMedia(other, 'bytes=0-9').status).toBe(404);
    expect(app.backend.serveMedia(url, 'bytes=0-9').status).toBe(206);

    await app.call('vault.lock', { vaultId });
    expect(app.backend.serveMedia(url, 'bytes=0-9').status).toBe(404);
  });

  it('ends the body with an error at a damaged chunk, having sent only the authenticated bytes before it', async () => {
    const { app, url, parent } = await withSound();
    const stored = readdirSync(parent, { recursive: true, withFileTypes: true }).filter(
      (entry) => entry.isFile() && /(^|\/)(packs|blobs)(\/|$)/.test(entry.parentPath),
    );
    expect(stored.length).toBeGreaterThan(0);
    // The one stored file holding the song: flip a byte in its third chunk's sealed bytes.
    for (const entry of stored) {
      const path = join(entry.parentPath, entry.name);
      const fd = openSync(path, 'r+');
      const byte = Buffer.alloc(1);
      const at = Math.floor(2.5 * CHUNK);
      readSync(fd, byte, 0, 1, at);
      byte[0] = (byte[0] ?? 0) ^ 0xff;
      writeSync(fd, byte, 0, 1, at);
      closeSync(fd);
    }
    const answer = app.backend.serveMedia(url, 'bytes=0-');
    expect(answer.status).toBe(206);
    const received: Buffer[] = [];
    await expect(
      (async () => {
        for await (const part of answer.body ?? []) received.push(part as Buffer);
      })(),
    ).rejects.toMatchObject({ code: 'INTEGRITY' });
    const sent = Buffer.concat(received);
    expect(sent.length).toBeLessThan(SOUND.length);
    expect(sent.equals(SOUND.subarray(0, sent.length))).toBe(true);
  });

  it('answers NOT_SUPPORTED where the host serves no media', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    expect(codeOf(await app.raw('preview.mediaUrl', { vaultId, path: '/x.wav' }))).toBe('NOT_SUPPORTED');
  });
});

describe('parseRange', () => {
  it('reads one bytes range, and refuses what it cannot serve', () => {
    expect(parseRange(null, 100)).toBeUndefined();
    expect(parseRange('bytes=10-19', 100)).toEqual({ start: 10, end: 19 });
    expect(parseRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=-10', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=-1000', 100)).toEqual({ start: 0, end: 99 });
    expect(parseRange('bytes=100-', 100)).toBeNull();
    expect(parseRange('bytes=-0', 100)).toBeNull();
    expect(parseRange('bytes=0-', 0)).toBeNull();
    expect(parseRange('bytes=1-2, 4-5', 100)).toBeNull();
  });
});
