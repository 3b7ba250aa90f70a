/**
 * The browser implementation of `window.coffer` for the preview server: events over a WebSocket, requests on the
 * same socket while it is open (over HTTP otherwise), dropped files as bytes over HTTP. Browser code: no Node
 * imports (a test keeps it so).
 */
import type {
  Channel,
  CofferApi,
  EventName,
  EventPayloads,
  RequestOf,
  ResponseOf,
  Result,
} from '../shared/contract.js';
import {
  decodeWire,
  REQUEST_MAX_BYTES,
  type ChooserListing,
  type ChooserRequest,
  type DropManifestEntry,
  type SocketReply,
  type SocketRequest,
} from './wire.js';

export type { ChooserEntry, ChooserListing, ChooserRequest } from './wire.js';

/**
 * The preview's stand-in for native dialogs, for the page's in-page chooser: when a `dialog.*` request needs an
 * answer, `onRequest` listeners get a {@link ChooserRequest}; the page lists folders below its roots and answers
 * with absolute paths (or null to cancel), and the pending `dialog.*` request then completes. Not in Electron.
 */
export interface PreviewChooser {
  onRequest(listener: (request: ChooserRequest) => void): () => void;
  /** The chooser waiting for an answer (after a reload, say), or null. */
  pending(): Promise<Result<ChooserRequest | null>>;
  list(path: string): Promise<Result<ChooserListing>>;
  answer(chooserId: string, paths: readonly string[] | null): Promise<Result<null>>;
}

export interface PreviewApi extends CofferApi {
  readonly chooser: PreviewChooser;
  /**
   * Tells the server the page is going away (call it on `pagehide`), so the back end locks the vaults when the
   * lock-on-close setting says so: the preview's counterpart of Electron's window 'close'. Sent with `keepalive`,
   * which lets the request outlive the page.
   */
  pageClosed(): void;
}

/** What the bridge needs of the page's location: `origin` and the `#token=` fragment the server printed. */
export interface PreviewLocation {
  readonly origin: string;
  readonly hash: string;
}

/** For tests outside a browser: the fetch and WebSocket to use. */
export interface PreviewTransport {
  readonly fetch: typeof fetch;
  readonly WebSocket: typeof WebSocket;
}

/** An event socket, and the requests sent on it that are not answered yet (by id). */
interface SocketLink {
  readonly socket: WebSocket;
  readonly awaiting: Map<number, (result: Result<unknown>) => void>;
  /** No longer listened to: closed once the requests sent on it are answered; its events are not passed on. */
  retired: boolean;
}

/** Waits this long before reconnecting the event socket after it closed. */
const RECONNECT_MS = 1000;

function unreachable(error: unknown): Result<never> {
  const reason = error instanceof Error ? error.message : String(error);
  return {
    ok: false,
    code: 'IO',
    message: `The preview server did not answer (${reason}). Is it still running? Restart it with npm run preview.`,
  };
}

/** The token from `#token=<hex>`, or an empty string. */
function tokenFrom(hash: string): string {
  return new URLSearchParams(hash.replace(/^#/, '')).get('token') ?? '';
}

export function createPreviewApi(
  location: PreviewLocation,
  transport: PreviewTransport = { fetch: globalThis.fetch.bind(globalThis), WebSocket: globalThis.WebSocket },
): PreviewApi {
  const token = tokenFrom(location.hash);
  const authorization = { Authorization: `Bearer ${token}` };
  const listeners = new Map<EventName | 'chooser', Set<(payload: never) => void>>();
  /** The event socket now in use, if any. */
  let link: SocketLink | undefined;
  /** Settles when the event socket opened (or failed): requests wait for it so no event of theirs is missed. */
  let socketReady: Promise<void> = Promise.resolve();
  let nextRequestId = 0;

  const post = async <T>(
    path: string,
    body: string | Blob,
    type = 'application/json',
  ): Promise<Result<T>> => {
    await socketReady;
    try {
      const response = await transport.fetch(`${location.origin}${path}`, {
        method: 'POST',
        headers: { ...authorization, 'Content-Type': type },
        body,
      });
      return decodeWire(await response.text()) as Result<T>;
    } catch (error) {
      return unreachable(error);
    }
  };

  const connect = (): void => {
    if (link) return;
    const url = `${location.origin.replace(/^http/, 'ws')}/api/events?token=${encodeURIComponent(token)}`;
    const opened = new transport.WebSocket(url);
    const current: SocketLink = { socket: opened, awaiting: new Map(), retired: false };
    link = current;
    socketReady = new Promise((settled) => {
      opened.onopen = () => {
        settled();
      };
      opened.onerror = () => {
        settled();
      };
    });
    opened.onmessage = (message: MessageEvent) => {
      if (typeof message.data !== 'string') return;
      let decoded: SocketReply | { event: EventName | 'chooser'; payload: never };
      try {
        decoded = decodeWire(message.data) as typeof decoded;
      } catch {
        // Not what the server sends: which request it answered cannot be known, so the socket goes, and with it
        // every request awaiting an answer on it (as when the connection breaks).
        opened.close();
        return;
      }
      if ('reply' in decoded) {
        current.awaiting.get(decoded.reply)?.(decoded.result as Result<unknown>);
        current.awaiting.delete(decoded.reply);
        if (current.retired && current.awaiting.size === 0) opened.close();
        return;
      }
      if (current.retired) return;
      for (const listener of listeners.get(decoded.event) ?? []) listener(decoded.payload);
    };
    opened.onclose = () => {
      // Whether the server carried them out is unknown, as for an HTTP request whose connection broke.
      for (const answer of current.awaiting.values()) answer(unreachable(new Error('the connection closed')));
      current.awaiting.clear();
      if (link !== current) return; // a socket given up before it closed
      link = undefined;
      socketReady = Promise.resolve();
      if ([...listeners.values()].some((set) => set.size > 0)) setTimeout(connect, RECONNECT_MS);
    };
  };

  const listen = (event: EventName | 'chooser', listener: (payload: never) => void): (() => void) => {
    const set = listeners.get(event) ?? new Set();
    listeners.set(event, set);
    set.add(listener);
    connect();
    return () => {
      set.delete(listener);
      if (link && [...listeners.values()].every((each) => each.size === 0)) {
        // Nothing listens any more: the socket goes once the requests sent on it are answered.
        link.retired = true;
        if (link.awaiting.size === 0) link.socket.close();
        link = undefined;
      }
    };
  };

  return {
    async invoke<C extends Channel>(channel: C, request: RequestOf<C>): Promise<Result<ResponseOf<C>>> {
      await socketReady;
      const current = link;
      const id = nextRequestId++;
      const message = JSON.stringify({ id, channel, request } satisfies SocketRequest);
      // A message the socket would refuse as too large goes by HTTP, which answers it with its own error.
      if (current?.socket.readyState !== transport.WebSocket.OPEN || message.length * 3 > REQUEST_MAX_BYTES) {
        return post(`/api/invoke/${encodeURIComponent(channel)}`, JSON.stringify(request));
      }
      return new Promise((answered) => {
        current.awaiting.set(id, answered as (result: Result<unknown>) => void);
        current.socket.send(message);
      });
    },

    on<E extends EventName>(event: E, listener: (payload: EventPayloads[E]) => void): () => void {
      return listen(event, listener);
    },

    async registerDroppedFiles(files) {
      const manifest: DropManifestEntry[] = files.map((file) => ({
        name: file.name,
        size: file.size,
        mtime: file.lastModified,
      }));
      const registering = post<{ handle: string; count: number; upload: string }>(
        '/api/drop',
        JSON.stringify(manifest),
      );
      // The files are joined into one body while the back end registers the drop: for 1,000 small files that
      // takes Chromium 90–130 ms, more than the registration's round trip. `post` sends once the socket is
      // ready (its wait was queued before this one), and the joining waits a task more, so the request goes first.
      await socketReady;
      const body = await new Promise<Blob>((joined, failed) => {
        setTimeout(() => {
          try {
            joined(new Blob([...files]));
          } catch (error) {
            failed(error instanceof Error ? error : new Error(String(error)));
          }
        });
      });
      const registered = await registering;
      if (!registered.ok) return registered;
      const { upload, ...value } = registered.value;
      // The bytes follow in their own request, not awaited: the add job starts, and encrypts, while they arrive.
      // The browser streams the files from disk (or memory) as the body is sent; should it fail, the job says
      // which files did not arrive.
      void post(`/api/drop/${upload}`, body, 'application/octet-stream');
      return { ok: true, value };
    },

    pageClosed() {
      void transport
        .fetch(`${location.origin}/api/page-closed`, {
          method: 'POST',
          headers: { ...authorization, 'Content-Type': 'application/json' },
          body: '{}',
          keepalive: true,
        })
        .catch(() => undefined);
    },

    chooser: {
      onRequest: (listener) => listen('chooser', listener),
      pending: () => post('/api/chooser/pending', '{}'),
      list: (path) => post('/api/chooser/list', JSON.stringify({ path })),
      answer: (chooserId, paths) => post('/api/chooser/answer', JSON.stringify({ chooserId, paths })),
    },
  };
}
