import { beforeEach, describe, expect, it, vi } from 'vitest';

import { IPC } from '../../electron/shared/ipc-channels.js';
import type { FrameLike } from '../../electron/main/sender.js';

type Handler = (event: unknown, ...args: unknown[]) => Promise<unknown>;
const handlers = new Map<string, Handler>();

vi.mock('electron', () => ({
  ipcMain: {
    handle: (channel: string, handler: Handler) => {
      handlers.set(channel, handler);
    },
    removeHandler: (channel: string) => {
      handlers.delete(channel);
    },
  },
}));

const { registerIpc } = await import('../../electron/main/ipc.js');

function frame(url: string, overrides: Partial<FrameLike> = {}): FrameLike {
  return { url, parent: null, processId: 4, routingId: 1, ...overrides };
}

const mainFrame = frame('app://coffer/index.html');
const sent: unknown[] = [];
const webContents = {
  mainFrame,
  send: (channel: string, message: unknown) => sent.push({ channel, message }),
};
const window = { webContents, isDestroyed: () => false };

function fakeBackend() {
  let listener: ((event: string, payload: unknown) => void) | undefined;
  return {
    handle: vi.fn((channel: string) => Promise.resolve({ ok: true as const, value: `handled ${channel}` })),
    registerDroppedPaths: vi.fn(() => ({ ok: true as const, value: { handle: 'h-paths', count: 1 } })),
    registerDroppedBytes: vi.fn(() => ({ ok: true as const, value: { handle: 'h-bytes', count: 1 } })),
    onEvent: vi.fn((next: (event: string, payload: unknown) => void) => {
      listener = next;
      return () => {
        listener = undefined;
      };
    }),
    emit: (event: string, payload: unknown) => listener?.(event, payload),
  };
}

let backend: ReturnType<typeof fakeBackend>;
let unregister: () => void;
beforeEach(() => {
  handlers.clear();
  sent.length = 0;
  backend = fakeBackend();
  // The fake backend and window stand in structurally for the real ones.
  unregister = registerIpc(backend, () => window as unknown as ReturnType<Parameters<typeof registerIpc>[1]>);
});

const trusted = { sender: webContents, senderFrame: mainFrame };
const invoke = (channel: string, event: unknown, ...args: unknown[]) => {
  const handler = handlers.get(channel);
  if (!handler) throw new Error(`no handler for ${channel}`);
  return handler(event, ...args);
};
const refused: unknown = expect.objectContaining({ ok: false, code: 'INVALID_ARGUMENT' });

describe('IPC from the window', () => {
  it('passes a request from the main frame of the app page to the back end', async () => {
    expect(await invoke(IPC.invoke, trusted, 'vault.info', { vaultId: 'v1' })).toEqual({
      ok: true,
      value: 'handled vault.info',
    });
    expect(backend.handle).toHaveBeenCalledWith('vault.info', { vaultId: 'v1' });
  });

  it.each([
    [
      'a subframe',
      { sender: webContents, senderFrame: frame('app://coffer/x.html', { parent: mainFrame, routingId: 2 }) },
    ],
    ['a frame already gone', { sender: webContents, senderFrame: null }],
    ['another page (navigated away)', { sender: webContents, senderFrame: frame('https://evil.example/') }],
    ['a look-alike host', { sender: webContents, senderFrame: frame('app://coffer.evil/index.html') }],
    ['a file:// page', { sender: webContents, senderFrame: frame('file:///tmp/index.html') }],
    ['another web contents', { sender: {}, senderFrame: mainFrame }],
    [
      'another frame in the same contents',
      { sender: webContents, senderFrame: frame('app://coffer/', { routingId: 9 }) },
    ],
  ])('refuses a request from %s without reaching the back end', async (_what, event) => {
    for (const channel of [IPC.invoke, IPC.dropPaths, IPC.dropBytes]) {
      expect(await invoke(channel, event, 'vault.info', {})).toEqual(refused);
    }
    expect(backend.handle).not.toHaveBeenCalled();
    expect(backend.registerDroppedPaths).not.toHaveBeenCalled();
    expect(backend.registerDroppedBytes).not.toHaveBeenCalled();
  });

  it('refuses a request without a channel name', async () => {
    expect(await invoke(IPC.invoke, trusted, 42, {})).toEqual(refused);
    expect(backend.handle).not.toHaveBeenCalled();
  });

  it('registers dropped paths and refuses anything but a list of paths', async () => {
    expect(await invoke(IPC.dropPaths, trusted, ['/home/a/photo.jpg'])).toEqual({
      ok: true,
      value: { handle: 'h-paths', count: 1 },
    });
    for (const bad of ['/etc/passwd', [], [''], [42], null]) {
      expect(await invoke(IPC.dropPaths, trusted, bad)).toEqual(refused);
    }
    expect(backend.registerDroppedPaths).toHaveBeenCalledTimes(1);
  });

  it('registers dropped bytes only when each size matches its bytes', async () => {
    const file = { name: 'a.txt', size: 3, mtime: 1, bytes: new Uint8Array([1, 2, 3]) };
    expect(await invoke(IPC.dropBytes, trusted, [file])).toEqual({
      ok: true,
      value: { handle: 'h-bytes', count: 1 },
    });
    for (const bad of [
      [{ ...file, size: 4 }],
      [{ ...file, bytes: 'abc' }],
      [{ ...file, extra: 1 }],
      [],
      'a',
    ]) {
      expect(await invoke(IPC.dropBytes, trusted, bad)).toEqual(refused);
    }
    expect(backend.registerDroppedBytes).toHaveBeenCalledTimes(1);
  });

  it('answers INTERNAL, without the error text, when the back end throws', async () => {
    backend.handle.mockImplementationOnce(() => Promise.reject(new Error('/home/alice/secret.txt')));
    const result = (await invoke(IPC.invoke, trusted, 'vault.info', {})) as { code: string; message: string };
    expect(result.code).toBe('INTERNAL');
    expect(result.message).not.toContain('secret');
  });

  it('forwards back-end events to the window and stops when unregistered', () => {
    backend.emit('locked', { vaultId: 'v1', reason: 'idle', stoppedJobs: [] });
    expect(sent).toEqual([
      {
        channel: IPC.event,
        message: { event: 'locked', payload: { vaultId: 'v1', reason: 'idle', stoppedJobs: [] } },
      },
    ]);
    unregister();
    backend.emit('locked', { vaultId: 'v1', reason: 'idle', stoppedJobs: [] });
    expect(sent).toHaveLength(1);
    expect(handlers.size).toBe(0);
  });
});
