/**
 * The only module that registers ipcMain handlers (an ESLint rule keeps it so). Every message is checked against
 * the sender before anything else: only the main frame of Coffer's window, showing the app's own page, is heard.
 * Payloads are then validated by the back end (contract requests) or here (dropped files).
 */
import { ipcMain, type BrowserWindow, type IpcMainInvokeEvent } from 'electron';
import * as z from 'zod/mini';

import type { Backend } from '../../src/app/backend.js';
import type { Result } from '../../src/shared/contract.js';
import { IPC } from '../shared/ipc-channels.js';
import { isTrustedSender } from './sender.js';

const REFUSED: Result<never> = {
  ok: false,
  code: 'INVALID_ARGUMENT',
  message: "The request did not come from Coffer's window and was refused.",
};

// Only the shape IPC can carry is checked here; the back end checks counts, names and sizes.
const dropPathsSchema = z.array(z.string().check(z.minLength(1))).check(z.minLength(1));
const dropBytesSchema = z
  .array(
    z.strictObject({
      name: z.string(),
      size: z.int().check(z.minimum(0)),
      mtime: z.number(),
      bytes: z.instanceof(Uint8Array),
    }),
  )
  .check(z.minLength(1));

function invalid(what: string): Result<never> {
  return { ok: false, code: 'INVALID_ARGUMENT', message: `The dropped items could not be read: ${what}.` };
}

/** What the IPC layer needs of the back end. */
export type IpcBackend = Pick<
  Backend,
  'handle' | 'registerDroppedPaths' | 'registerDroppedBytes' | 'onEvent'
>;

/**
 * Registers the handlers and forwards back-end events to the window. Returns a function that removes both.
 * `getWindow` is read per message, so a message from a window that has since closed is refused.
 */
export function registerIpc(backend: IpcBackend, getWindow: () => BrowserWindow | null): () => void {
  const guarded =
    (handler: (...args: unknown[]) => Promise<Result<unknown>> | Result<unknown>) =>
    async (event: IpcMainInvokeEvent, ...args: unknown[]): Promise<Result<unknown>> => {
      if (!isTrustedSender(event, getWindow())) return REFUSED;
      try {
        return await handler(...args);
      } catch {
        // The back end answers with Results; a throw here is a bug, and its message may hold a path or a name.
        return {
          ok: false,
          code: 'INTERNAL',
          message: 'Something went wrong inside Coffer; please try again.',
        };
      }
    };

  ipcMain.handle(
    IPC.invoke,
    guarded((channel, request) =>
      typeof channel === 'string'
        ? backend.handle(channel, request)
        : { ok: false, code: 'INVALID_ARGUMENT', message: 'The request named no channel.' },
    ),
  );
  ipcMain.handle(
    IPC.dropPaths,
    guarded((paths) => {
      const parsed = z.safeParse(dropPathsSchema, paths);
      return parsed.success ? backend.registerDroppedPaths(parsed.data) : invalid('not a list of files');
    }),
  );
  ipcMain.handle(
    IPC.dropBytes,
    guarded((files) => {
      const parsed = z.safeParse(dropBytesSchema, files);
      if (!parsed.success) return invalid('not a list of files');
      if (parsed.data.some((file) => file.bytes.byteLength !== file.size))
        return invalid('sizes do not match');
      return backend.registerDroppedBytes(parsed.data);
    }),
  );
  const stopEvents = backend.onEvent((event, payload) => {
    const window = getWindow();
    if (window !== null && !window.isDestroyed()) window.webContents.send(IPC.event, { event, payload });
  });

  return () => {
    for (const channel of [IPC.invoke, IPC.dropPaths, IPC.dropBytes]) ipcMain.removeHandler(channel);
    stopEvents();
  };
}
