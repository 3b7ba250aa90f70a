/**
 * The preload: the only code that touches ipcRenderer (an ESLint rule keeps it so). It exposes exactly the
 * contract's CofferApi as `window.coffer`, as plain functions; the renderer never sees ipcRenderer, Node or a path
 * it did not get from a drop.
 */
import { contextBridge, ipcRenderer, webUtils } from 'electron';

import type {
  Channel,
  CofferApi,
  EventName,
  EventPayloads,
  RequestOf,
  ResponseOf,
  Result,
} from '../../src/shared/contract.js';
import { IPC, type DroppedBytes } from '../shared/ipc-channels.js';

type Listener = (payload: unknown) => void;
const listeners = new Map<string, Set<Listener>>();

ipcRenderer.on(IPC.event, (_event, message: { event: string; payload: unknown }) => {
  for (const listener of listeners.get(message.event) ?? []) listener(message.payload);
});

/**
 * Splits a drop into files with a path on disk (read by main from where they are) and files without one, which
 * cross as bytes: dragged from a browser, or built in a page. `getPathForFile` returns "" for those.
 */
async function registerDroppedFiles(
  files: readonly File[],
): Promise<Result<{ handle: string; count: number }>> {
  const paths = files.map((file) => webUtils.getPathForFile(file));
  if (paths.every((path) => path !== '')) {
    return (await ipcRenderer.invoke(IPC.dropPaths, paths)) as Result<{ handle: string; count: number }>;
  }
  if (paths.some((path) => path !== '')) {
    return {
      ok: false,
      code: 'INVALID_ARGUMENT',
      message: 'Drop files from disk and files from a browser separately.',
    };
  }
  const dropped: DroppedBytes[] = await Promise.all(
    files.map(async (file) => ({
      name: file.name,
      size: file.size,
      mtime: file.lastModified,
      bytes: new Uint8Array(await file.arrayBuffer()),
    })),
  );
  return (await ipcRenderer.invoke(IPC.dropBytes, dropped)) as Result<{ handle: string; count: number }>;
}

const api: CofferApi = {
  invoke<C extends Channel>(channel: C, request: RequestOf<C>) {
    return ipcRenderer.invoke(IPC.invoke, channel, request) as Promise<Result<ResponseOf<C>>>;
  },
  on<E extends EventName>(event: E, listener: (payload: EventPayloads[E]) => void) {
    const set = listeners.get(event) ?? new Set<Listener>();
    listeners.set(event, set);
    const wrapped: Listener = (payload) => {
      listener(payload as EventPayloads[E]);
    };
    set.add(wrapped);
    return () => {
      set.delete(wrapped);
    };
  },
  registerDroppedFiles,
};

contextBridge.exposeInMainWorld('coffer', api);
