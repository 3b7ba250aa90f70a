import { mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';

import {
  createPreviewApi,
  type ChooserRequest,
  type PreviewApi,
  type PreviewTransport,
} from '../../src/preview/bridge.js';
import { ChooserDialogs } from '../../src/preview/chooser.js';
import { startPreviewServer, type PreviewServer } from '../../src/preview/server.js';
import { decodeWire } from '../../src/preview/wire.js';
import type { AddReport, EventPayloads, JobEvent } from '../../src/shared/contract.js';
import { nativeSodium } from '../helpers/backends.js';
import { PASSPHRASE, tempDir } from '../helpers/vault.js';
import { startedJobId } from '../helpers/job-add.js';

/** Node's fetch and the ws package stand in for the browser's. */
const transport: PreviewTransport = {
  fetch: globalThis.fetch.bind(globalThis),
  WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
};

const servers: PreviewServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function start(options: { testMode?: boolean; staticDir?: string } = {}): Promise<PreviewServer> {
  const server = await startPreviewServer({
    dataDir: tempDir(),
    staticDir: options.staticDir ?? tempDir(),
    testMode: options.testMode ?? true,
    sodium: nativeSodium,
  });
  servers.push(server);
  return server;
}

interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** A request with full control of the path and headers (fetch cannot set Host or send `..`). */
function isReset(error: NodeJS.ErrnoException): boolean {
  return error.code === 'ECONNRESET' || error.code === 'EPIPE';
}

function raw(
  server: PreviewServer,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<RawResponse> {
  const { port } = new URL(server.origin);
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: options.headers,
        // A socket of its own: the error listeners below are per request.
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        const answered = (): void => {
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString(),
          });
        };
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', answered);
        // The reset of an early answer can also reach the response once it has arrived: it has been answered.
        response.on('error', (error: NodeJS.ErrnoException) => {
          if (isReset(error)) answered();
          else reject(error);
        });
      },
    );
    // A server that answers early (413, 404) may reset the connection while the body is still being written.
    sent.on('error', (error: NodeJS.ErrnoException) => {
      if (!isReset(error)) reject(error);
    });
    // ... or reach the socket itself once the answer has been read and the request let go of it.
    sent.on('socket', (socket) => {
      socket.on('error', (error: NodeJS.ErrnoException) => {
        if (!isReset(error)) reject(error);
      });
    });
    sent.end(options.body);
  });
}

const invoke = (
  server: PreviewServer,
  channel: string,
  body: unknown,
  headers: Record<string, string> = {},
) =>
  raw(server, {
    method: 'POST',
    path: `/api/invoke/${channel}`,
    headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

/** Opens the event socket; resolves with the HTTP status that refused it, or 101 when it opened. */
function socketStatus(url: string, origin?: string): Promise<number> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, origin === undefined ? {} : { origin });
    socket.on('open', () => {
      socket.close();
      resolve(101);
    });
    socket.on('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
    });
    socket.on('error', () => {
      resolve(-1);
    });
  });
}

describe('preview server: who may talk to it', () => {
  it('refuses to bind anywhere but 127.0.0.1', async () => {
    for (const host of ['0.0.0.0', '::', 'localhost', '192.168.1.2']) {
      await expect(
        startPreviewServer({ dataDir: tempDir(), staticDir: tempDir(), host, sodium: nativeSodium }),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
  });

  it('prints a 127.0.0.1 URL with a 256-bit token in the fragment', async () => {
    const server = await start();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]{64}$/);
  });

  it('refuses an API request with a missing or wrong token, a foreign Origin, or a foreign Host', async () => {
    const server = await start();
    expect((await invoke(server, 'settings.get', {})).status).toBe(200);
    expect((await invoke(server, 'settings.get', {}, { Origin: server.origin })).status).toBe(200);
    const refused = [
      await raw(server, { method: 'POST', path: '/api/invoke/settings.get', body: '{}' }),
      await invoke(server, 'settings.get', {}, { Authorization: `Bearer ${'0'.repeat(64)}` }),
      await invoke(server, 'settings.get', {}, { Authorization: `Bearer ${server.token.slice(0, 63)}` }),
      await invoke(server, 'settings.get', {}, { Authorization: server.token }),
      await invoke(server, 'settings.get', {}, { Origin: 'http://evil.example' }),
      await invoke(server, 'settings.get', {}, { Origin: 'http://localhost:1' }),
      await invoke(server, 'settings.get', {}, { Host: 'evil.example' }),
    ];
    expect(refused.map((response) => response.status)).toEqual([401, 401, 401, 401, 403, 403, 421]);
    for (const response of refused) {
      expect(JSON.parse(response.body)).toMatchObject({ ok: false, code: 'INVALID_ARGUMENT' });
    }
  });

  it('refuses an event socket with a missing or wrong token or a foreign Origin', async () => {
    const server = await start();
    const socketUrl = `${server.origin.replace('http', 'ws')}/api/events`;
    expect(await socketStatus(`${socketUrl}?token=${server.token}`, server.origin)).toBe(101);
    expect(await socketStatus(socketUrl, server.origin)).toBe(401);
    expect(await socketStatus(`${socketUrl}?token=${'f'.repeat(64)}`, server.origin)).toBe(401);
    expect(await socketStatus(`${socketUrl}?token=${server.token}`, 'http://evil.example')).toBe(403);
    expect(await socketStatus(`${server.origin.replace('http', 'ws')}/other?token=${server.token}`)).toBe(
      404,
    );
  });

  it('bounds the size of a request body', async () => {
    const server = await start();
    const huge = await raw(server, {
      method: 'POST',
      path: '/api/invoke/settings.get',
      headers: { Authorization: `Bearer ${server.token}` },
      body: Buffer.alloc(17 * 1024 * 1024, 0x20),
    });
    expect(huge.status).toBe(413);
  });

  it('offers the test dialog queue only in test mode', async () => {
    const server = await start({ testMode: false });
    const answers = await raw(server, {
      method: 'POST',
      path: '/api/test/dialog-answers',
      headers: { Authorization: `Bearer ${server.token}` },
      body: JSON.stringify({ folders: ['/'] }),
    });
    expect(answers.status).toBe(404);
  });
});

describe('preview server: the in-page chooser that stands in for dialogs', () => {
  it('asks the page, lists only below its roots, and answers the dialog with the chosen folder', async () => {
    const root = realpathSync(tempDir());
    mkdirSync(join(root, 'Vaults', 'inner'), { recursive: true });
    writeFileSync(join(root, 'Vaults', 'file.txt'), 'x');
    symlinkSync('/etc', join(root, 'Vaults', 'escape'));
    const server = await startPreviewServer({
      dataDir: tempDir(),
      staticDir: tempDir(),
      chooserRoots: [root],
      sodium: nativeSodium,
    });
    servers.push(server);
    const api = createPreviewApi(new URL(server.url), transport);
    const asked = new Promise<ChooserRequest>((resolve) => {
      api.chooser.onRequest(resolve);
    });
    const picking = api.invoke('dialog.pickFolder', { purpose: 'open-vault' });
    const request = await asked;
    expect(request).toMatchObject({ kind: 'folder', purpose: 'open-vault', roots: [root] });
    expect(await api.chooser.pending()).toEqual({ ok: true, value: request });

    const listing = await api.chooser.list(join(root, 'Vaults'));
    if (!listing.ok) throw new Error(listing.message);
    expect(listing.value).toMatchObject({ path: join(root, 'Vaults'), parent: root });
    expect(listing.value.entries.map((entry) => `${entry.type} ${entry.name}`)).toEqual([
      'folder inner',
      'file file.txt',
    ]);
    expect(await api.chooser.list(root)).toMatchObject({ ok: true, value: { parent: null } });
    for (const outside of ['/etc', join(root, 'Vaults', 'escape'), join(root, '..'), 'relative']) {
      expect(await api.chooser.list(outside)).toMatchObject({ ok: false, code: 'INVALID_ARGUMENT' });
      expect(await api.chooser.answer(request.chooserId, [outside])).toMatchObject({ ok: false });
    }
    expect(await api.chooser.answer(request.chooserId, [join(root, 'Vaults', 'file.txt')])).toMatchObject({
      ok: false,
      code: 'INVALID_ARGUMENT',
    });
    expect(await api.chooser.answer('c-other', [join(root, 'Vaults')])).toMatchObject({ ok: false });
    expect(await api.chooser.answer(request.chooserId, [join(root, 'Vaults', 'inner')])).toEqual({
      ok: true,
      value: null,
    });
    expect(await picking).toMatchObject({
      ok: true,
      value: { label: join(root, 'Vaults', 'inner'), count: 1 },
    });

    const cancelled = new Promise<ChooserRequest>((resolve) => {
      api.chooser.onRequest(resolve);
    });
    const second = api.invoke('dialog.pickFolder', { purpose: 'create-vault' });
    await api.chooser.answer((await cancelled).chooserId, null);
    expect(await second).toEqual({ ok: true, value: null });
  });

  it('opens a file chooser in the folder the back end names, only when the page may list it', () => {
    const root = realpathSync(tempDir());
    const asked: ChooserRequest[] = [];
    const dialogs = new ChooserDialogs([root], (request) => asked.push(request));
    void dialogs.pickFiles('header-restore', join(root, 'vault'));
    void dialogs.pickFiles('header-restore', '/etc');
    dialogs.cancel();
    expect(asked.map((request) => request.startIn)).toEqual([join(root, 'vault'), undefined]);
  });

  it('says no chooser waits where the test answers the dialogs, and has no other chooser call there', async () => {
    const server = await start();
    const api = createPreviewApi(new URL(server.url), transport);
    expect(await api.chooser.pending()).toEqual({ ok: true, value: null });
    expect(await api.chooser.list('/')).toMatchObject({ ok: false });
  });
});

describe('preview server: static files', () => {
  it('serves the built renderer with the CSP, and nothing outside it: no listing, no traversal', async () => {
    const staticDir = join(tempDir(), 'renderer');
    mkdirSync(join(staticDir, 'assets'), { recursive: true });
    writeFileSync(
      join(staticDir, 'index.html'),
      '<!doctype html><script type="module" src="/assets/app.js"></script>',
    );
    writeFileSync(join(staticDir, 'assets', 'app.js'), 'console.log(1)');
    writeFileSync(join(staticDir, '..', 'secret.txt'), 'outside');
    const server = await start({ staticDir });
    const page = await raw(server, { path: '/' });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    const script = await raw(server, { path: '/assets/app.js' });
    expect(script).toMatchObject({ status: 200, body: 'console.log(1)' });
    expect(script.headers['content-type']).toContain('text/javascript');
    // A worker started from a script runs under that script's own policy, so scripts carry the page's.
    expect(script.headers['content-security-policy']).toBe(page.headers['content-security-policy']);
    expect(script.headers['content-security-policy']).toContain("worker-src 'self'");
    for (const path of [
      '/assets/',
      '/assets',
      '/../secret.txt',
      '/assets/../../secret.txt',
      '/%2e%2e/secret.txt',
      '/assets/%2e%2e%2f%2e%2e%2fsecret.txt',
      '/..%5csecret.txt',
      '/nope.js',
    ]) {
      const response = await raw(server, { path });
      expect(response.status, path).toBe(404);
      expect(response.body, path).not.toContain('outside');
    }
  });

  it('says to build the app when the renderer is not built', async () => {
    const server = await start({ staticDir: join(tempDir(), 'missing') });
    const page = await raw(server, { path: '/' });
    expect(page.status).toBe(200);
    expect(page.body).toContain('npm run preview');
    expect(page.headers['content-security-policy']).toBeDefined();
  });
});

/** Creates a vault named `name` in `parent` (the test's answer to the folder dialog) through the bridge. */
async function createVaultThrough(
  server: PreviewServer,
  api: PreviewApi,
  parent: string,
  name: string,
): Promise<string> {
  await raw(server, {
    method: 'POST',
    path: '/api/test/dialog-answers',
    headers: { Authorization: `Bearer ${server.token}` },
    body: JSON.stringify({ folders: [parent] }),
  });
  const picked = await api.invoke('dialog.pickFolder', { purpose: 'create-vault' });
  if (!picked.ok || !picked.value) throw new Error('no folder');
  const created = await api.invoke('vault.create', {
    folder: picked.value.handle,
    name,
    passphrase: PASSPHRASE,
    kdf: 'interactive',
  });
  if (!created.ok) throw new Error(created.message);
  return created.value.vaultId;
}

/**
 * Opens the event socket as the page does; `messages` collects what the server sends (decoded as the page does),
 * `texts` the messages as sent, `closed` the close code.
 */
async function openSocket(server: PreviewServer): Promise<{
  socket: WebSocket;
  messages: unknown[];
  texts: string[];
  closed: Promise<number>;
  next: () => Promise<unknown>;
}> {
  const socket = new WebSocket(`${server.origin.replace('http', 'ws')}/api/events?token=${server.token}`, {
    origin: server.origin,
  });
  const messages: unknown[] = [];
  const texts: string[] = [];
  let arrived: (() => void) | undefined;
  socket.on('message', (data: Buffer) => {
    messages.push(decodeWire(data.toString('utf8')));
    texts.push(data.toString('utf8'));
    arrived?.();
  });
  const closed = new Promise<number>((resolve) => socket.on('close', resolve));
  await new Promise((resolve) => socket.once('open', resolve));
  let read = 0;
  const next = async (): Promise<unknown> => {
    while (messages.length <= read) await new Promise<void>((resolve) => (arrived = resolve));
    return messages[read++];
  };
  return { socket, messages, texts, closed, next };
}

describe('preview server: requests on the event socket', () => {
  it("answers a request on the socket after the events it caused, with the engine's codes", async () => {
    const server = await start();
    const vaultId = await createVaultThrough(
      server,
      createPreviewApi(new URL(server.url), transport),
      tempDir(),
      'V',
    );
    const { socket, next } = await openSocket(server);
    socket.send(JSON.stringify({ id: 7, channel: 'vault.lock', request: { vaultId } }));
    expect(await next()).toEqual({ event: 'locked', payload: { vaultId, reason: 'user', stoppedJobs: [] } });
    expect(await next()).toEqual({ reply: 7, result: { ok: true, value: null } });
    socket.send(JSON.stringify({ id: 8, channel: 'entries.list', request: { vaultId, path: '/' } }));
    expect(await next()).toMatchObject({ reply: 8, result: { ok: false, code: 'VAULT_LOCKED' } });
    socket.send(JSON.stringify({ id: 9, channel: 'vault.explode', request: {} }));
    expect(await next()).toMatchObject({ reply: 9, result: { ok: false, code: 'INVALID_ARGUMENT' } });
    socket.send(JSON.stringify({ id: 10, channel: 'settings.set', request: { theme: 'neon' } }));
    expect(await next()).toMatchObject({ reply: 10, result: { ok: false, code: 'INVALID_ARGUMENT' } });
    // No request: as an empty HTTP body, {}. A large one (1 MiB) is taken like a small one.
    socket.send(JSON.stringify({ id: 11, channel: 'settings.get' }));
    expect(await next()).toMatchObject({ reply: 11, result: { ok: true } });
    socket.send(
      JSON.stringify({ id: 12, channel: 'vault.info', request: { vaultId, pad: 'x'.repeat(1 << 20) } }),
    );
    expect(await next()).toMatchObject({ reply: 12, result: { ok: false, code: 'INVALID_ARGUMENT' } });
  });

  it('closes the socket on a message that is not a request, or larger than a request may be', async () => {
    const server = await start();
    for (const message of [
      'not json',
      '[1, 2]',
      JSON.stringify({ id: -1, channel: 'settings.get' }),
      JSON.stringify({ id: 1.5, channel: 'settings.get' }),
      JSON.stringify({ id: 1, channel: 42 }),
      Buffer.from(JSON.stringify({ id: 1, channel: 'settings.get', request: {} })),
    ]) {
      const { socket, closed, messages } = await openSocket(server);
      socket.send(message);
      expect(await closed, String(message)).toBe(1008);
      expect(messages).toEqual([]);
    }
    const { socket, closed } = await openSocket(server);
    socket.send(
      JSON.stringify({ id: 1, channel: 'settings.get', request: { pad: ' '.repeat(17 * 1024 * 1024) } }),
    );
    expect(await closed).toBe(1009);

    // A request right behind a message of another shape is not carried out.
    const vaultId = await createVaultThrough(
      server,
      createPreviewApi(new URL(server.url), transport),
      tempDir(),
      'V',
    );
    const after = await openSocket(server);
    after.socket.send('not json');
    after.socket.send(JSON.stringify({ id: 2, channel: 'vault.lock', request: { vaultId } }));
    expect(await after.closed).toBe(1008);
    expect(after.messages).toEqual([]);
    expect(JSON.parse((await invoke(server, 'entries.list', { vaultId, path: '/' })).body)).toEqual({
      ok: true,
      value: [],
    });
  });

  /** The bridge over a transport that counts its HTTP requests. */
  const countingApi = (server: PreviewServer): { api: PreviewApi; fetched: () => number } => {
    let fetched = 0;
    const counting: PreviewTransport = {
      ...transport,
      fetch: (...args) => {
        fetched++;
        return transport.fetch(...args);
      },
    };
    return { api: createPreviewApi(new URL(server.url), counting), fetched: () => fetched };
  };

  it('sends a long listing packed, which the bridge reads as the listing', async () => {
    const server = await start();
    const { api, fetched } = countingApi(server);
    const vaultId = await createVaultThrough(server, api, tempDir(), 'V');
    const names = Array.from({ length: 70 }, (_, i) => `Folder ${i} — Grüße`);
    for (const name of names) {
      const made = await invoke(server, 'entries.mkdir', { vaultId, path: `/${name}` });
      expect(JSON.parse(made.body)).toMatchObject({ ok: true });
    }
    const { socket, next, messages, texts } = await openSocket(server);
    socket.send(JSON.stringify({ id: 1, channel: 'entries.list', request: { vaultId, path: '/' } }));
    const listing = (await next()) as { reply: 1; result: { ok: true; value: { name: string }[] } };
    expect(texts[messages.indexOf(listing)]).toContain('"$rows"');
    expect(listing.result.value.map((entry) => entry.name).sort()).toEqual([...names].sort());
    expect(listing.result.value[0]).toEqual({
      path: `/${listing.result.value[0]?.name ?? ''}`,
      name: listing.result.value[0]?.name,
      type: 'folder',
      size: 0,
      mtime: expect.any(Number) as number,
    });

    api.on('locked', () => undefined);
    const before = fetched();
    expect(await api.invoke('entries.list', { vaultId, path: '/' })).toEqual(listing.result);
    expect(fetched()).toBe(before);
  });

  it('lets the bridge send requests on its socket while it is open and over HTTP otherwise', async () => {
    const server = await start({ testMode: false });
    const { api, fetched } = countingApi(server);
    expect(await api.invoke('settings.get', {})).toMatchObject({ ok: true });
    expect(fetched()).toBe(1); // no socket yet: nothing listens for events
    api.on('locked', () => undefined);
    expect(await api.invoke('settings.get', {})).toMatchObject({ ok: true });
    expect(await api.invoke('vault.info', { vaultId: 'v-none' })).toMatchObject({ ok: false });
    expect(fetched()).toBe(1);
    // A request the socket would refuse as too large goes by HTTP, and the socket stays.
    const paths = Array.from({ length: 1500 }, (_, i) => `/${String(i).padStart(4000, 'p')}`);
    expect(await api.invoke('entries.remove', { vaultId: 'v-none', paths })).toMatchObject({
      ok: false,
      code: 'INVALID_ARGUMENT',
    });
    expect(fetched()).toBe(2);
    expect(await api.invoke('settings.get', {})).toMatchObject({ ok: true });
    expect(fetched()).toBe(2);

    // A dialog waits for the page's chooser; the server stops before it is answered.
    const picking = api.invoke('dialog.pickFolder', { purpose: 'create-vault' });
    await new Promise<void>((resolve) => {
      api.chooser.onRequest(() => {
        resolve();
      });
    });
    servers.splice(servers.indexOf(server), 1);
    await server.close();
    expect(await picking).toMatchObject({ ok: false, code: 'IO' });
    expect(fetched()).toBe(2);
  });

  it('answers a request sent before the last listener went, and passes each event once after listening anew', async () => {
    const server = await start({ testMode: false });
    const { api, fetched } = countingApi(server);
    const chooserIds: string[] = [];
    const stopChooser = api.chooser.onRequest((request) => chooserIds.push(request.chooserId));
    const picking = api.invoke('dialog.pickFolder', { purpose: 'create-vault' });
    while (chooserIds.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    stopChooser();
    expect(await api.chooser.answer(chooserIds[0] ?? '', null)).toMatchObject({ ok: true });
    expect(await picking).toEqual({ ok: true, value: null });

    // Listening again at once, as React's StrictMode does: the socket given up must not disturb the new one.
    const first: string[] = [];
    const second: string[] = [];
    api.chooser.onRequest((request) => first.push(request.chooserId))();
    api.chooser.onRequest((request) => second.push(request.chooserId));
    const before = fetched();
    const again = api.invoke('dialog.pickFolder', { purpose: 'create-vault' });
    while (second.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await api.chooser.answer(second[0] ?? '', null);
    expect(await again).toEqual({ ok: true, value: null });
    expect(fetched() - before).toBe(1); // the answer; the dialog request went on the socket
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(first).toEqual([]);
    expect(second).toHaveLength(1);
  });
});

describe('preview server: the app end to end through the browser bridge', () => {
  it('creates a vault, sends events on the socket, adds dropped bytes and restores them byte-identical', async () => {
    const server = await start();
    const api = createPreviewApi(new URL(server.url), transport);
    const answer = (body: unknown) =>
      raw(server, {
        method: 'POST',
        path: '/api/test/dialog-answers',
        headers: { Authorization: `Bearer ${server.token}` },
        body: JSON.stringify(body),
      });
    const events: { event: string; payload: unknown }[] = [];
    // A job's events may arrive on the socket before the HTTP answer that carries its id.
    const ended = new Map<string, () => void>();
    const endedJobs = new Set<string>();
    api.on('job', (job: JobEvent) => {
      events.push({ event: 'job', payload: job });
      if (job.type !== 'ended') return;
      endedJobs.add(job.jobId);
      ended.get(job.jobId)?.();
    });
    const locked = new Promise<EventPayloads['locked']>((resolve) => {
      api.on('locked', resolve);
    });
    const waitForEnd = (jobId: string) =>
      new Promise<void>((resolve) => {
        if (endedJobs.has(jobId)) resolve();
        else ended.set(jobId, resolve);
      });

    const parent = tempDir();
    const vaultId = await createVaultThrough(server, api, parent, 'Preview vault');
    expect(readdirSync(join(parent, 'Preview vault'))).toContain('coffer.header');

    const bytes = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7) % 256));
    const dropped = await api.registerDroppedFiles([
      new File([bytes], 'photo.raw', { lastModified: 1_650_000_000_000 }),
      new File(['note'], 'note.txt'),
    ]);
    if (!dropped.ok) throw new Error(dropped.message);
    expect(dropped.value.count).toBe(2);
    const add = await api.invoke('job.add', { vaultId, source: dropped.value.handle });
    if (!add.ok) throw new Error(add.message);
    await waitForEnd(startedJobId(add.value));
    const listed = await api.invoke('entries.list', { vaultId, path: '/' });
    expect(listed.ok && listed.value.map((entry) => `${entry.name} ${entry.size}`)).toEqual([
      'note.txt 4',
      'photo.raw 200000',
    ]);

    const range = await api.invoke('preview.read', { vaultId, path: '/photo.raw', offset: 1000, length: 64 });
    expect(range.ok && Buffer.from(range.value.bytes).equals(bytes.subarray(1000, 1064))).toBe(true);

    const out = tempDir();
    await answer({ folders: [out] });
    const destination = await api.invoke('dialog.pickFolder', { purpose: 'restore-destination', vaultId });
    if (!destination.ok || !destination.value) throw new Error('no destination');
    const restore = await api.invoke('job.restore', {
      vaultId,
      paths: ['/photo.raw'],
      destination: destination.value.handle,
    });
    if (!restore.ok) throw new Error(restore.message);
    await waitForEnd(restore.value.jobId);
    expect(readFileSync(join(out, 'photo.raw')).equals(bytes)).toBe(true);
    const jobTypes = events.map(({ payload }) => (payload as JobEvent).type);
    expect(jobTypes.filter((type) => type === 'ended')).toHaveLength(2);
    expect(jobTypes).toContain('progress');

    await api.invoke('vault.lock', { vaultId });
    expect(await locked).toEqual({ vaultId, reason: 'user', stoppedJobs: [] });
    const wrong = await api.invoke('vault.unlock', { vaultId, passphrase: 'wrong' });
    expect(wrong).toMatchObject({ ok: false, code: 'WRONG_PASSPHRASE' });
  });

  it("starts the add before a drop's bytes arrive, reads them as they come, and says which files came short", async () => {
    const server = await start();
    const api = createPreviewApi(new URL(server.url), transport);
    const reports = new Map<string, AddReport>();
    const ended = new Map<string, () => void>();
    api.on('job', (job: JobEvent) => {
      if (job.type !== 'ended' || job.status !== 'done' || job.result.kind !== 'add') return;
      reports.set(job.jobId, job.result.report);
      ended.get(job.jobId)?.();
    });
    const reportOf = (jobId: string) =>
      new Promise<AddReport>((resolve) => {
        const report = reports.get(jobId);
        if (report) resolve(report);
        else {
          ended.set(jobId, () => {
            resolve(reports.get(jobId) as AddReport);
          });
        }
      });
    const post = (path: string, body: string | Buffer) =>
      raw(server, { method: 'POST', path, headers: { Authorization: `Bearer ${server.token}` }, body });
    const vaultId = await createVaultThrough(server, api, tempDir(), 'Drops');
    const names = async () => {
      const listed = await api.invoke('entries.list', { vaultId, path: '/' });
      return listed.ok ? listed.value.map((entry) => `${entry.name} ${entry.size}`) : [];
    };
    const drop = async (manifest: { name: string; size: number }[]) => {
      const answer = await post('/api/drop', JSON.stringify(manifest.map((file) => ({ ...file, mtime: 0 }))));
      const registered = JSON.parse(answer.body) as {
        ok: true;
        value: { handle: string; count: number; upload: string };
      };
      expect(registered).toMatchObject({ ok: true, value: { count: manifest.length } });
      const add = await api.invoke('job.add', { vaultId, source: registered.value.handle });
      if (!add.ok) throw new Error(add.message);
      return { upload: registered.value.upload, jobId: startedJobId(add.value) };
    };

    // The job is running before any byte has come, and waits for them.
    const whole = await drop([
      { name: 'a.txt', size: 3 },
      { name: 'b.txt', size: 4 },
    ]);
    const running = await api.invoke('job.list', {});
    expect(running.ok && running.value.map((job) => job.jobId)).toContain(whole.jobId);
    expect(await names()).toEqual([]);
    expect(JSON.parse((await post(`/api/drop/${whole.upload}`, 'abcdefg')).body)).toEqual({
      ok: true,
      value: null,
    });
    expect((await reportOf(whole.jobId)).problems).toEqual([]);
    expect(await names()).toEqual(['a.txt 3', 'b.txt 4']);
    // The bytes of a drop are taken once.
    expect((await post(`/api/drop/${whole.upload}`, 'abcdefg')).status).toBe(404);

    // Cut short in the second file: the first is added, the second and third are reported, not half-added.
    const cut = await drop([
      { name: 'c.txt', size: 2 },
      { name: 'd.txt', size: 5 },
      { name: 'e.txt', size: 1 },
    ]);
    await post(`/api/drop/${cut.upload}`, 'cdde');
    const cutReport = await reportOf(cut.jobId);
    expect(cutReport.problems.map(({ path, message }) => `${path}: ${message}`)).toEqual([
      'd.txt: Skipped "d.txt": it arrived incomplete (2 of 5 bytes). Drop it again.',
      'e.txt: Skipped "e.txt": it did not arrive: the drop was cut off before it. Drop it again.',
    ]);
    expect(await names()).toEqual(['a.txt 3', 'b.txt 4', 'c.txt 2']);

    // More bytes than announced: the files are whole and added; the extra bytes are refused.
    const long = await drop([{ name: 'f.txt', size: 1 }]);
    expect(JSON.parse((await post(`/api/drop/${long.upload}`, 'fff')).body)).toMatchObject({
      ok: false,
      code: 'INVALID_ARGUMENT',
    });
    expect((await reportOf(long.jobId)).problems).toEqual([]);
    expect(await names()).toContain('f.txt 1');

    for (const manifest of ['{}', JSON.stringify([{ name: 'g', size: 'big', mtime: 0 }]), '[]']) {
      expect(JSON.parse((await post('/api/drop', manifest)).body)).toMatchObject({
        ok: false,
        code: 'INVALID_ARGUMENT',
      });
    }
  });
});
