/** The preview bridge's event socket, against a server that sends what the preview server never would. */
import type { AddressInfo } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';

import { createPreviewApi } from '../../src/preview/bridge.js';

const servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    await new Promise((closed) => {
      server.close(closed);
    });
  }
});

describe('the preview bridge', () => {
  it('fails the requests on a socket whose message it cannot read, and closes that socket', async () => {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    servers.push(server);
    await new Promise((listening) => server.once('listening', listening));
    const closed = new Promise<void>((resolve) => {
      server.on('connection', (client) => {
        client.on('message', () => {
          client.send('{"reply": 0, "result":');
        });
        client.on('close', () => {
          resolve();
        });
      });
    });
    const { port } = server.address() as AddressInfo;
    const api = createPreviewApi(new URL(`http://127.0.0.1:${port}/#token=00`), {
      fetch: () => Promise.reject(new Error('no HTTP in this test')),
      WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    });
    const stopListening = api.on('locked', () => undefined);
    expect(await api.invoke('settings.get', {})).toMatchObject({ ok: false, code: 'IO' });
    await closed;
    stopListening();
  });
});
