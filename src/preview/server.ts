import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { homedir } from 'node:os';
import type { AddressInfo } from 'node:net';
import { extname, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';

import { WebSocketServer, type RawData, type WebSocket } from 'ws';

import { createBackend, type Backend, type DialogProvider } from '../app/backend.js';
import { IdleLock } from '../app/idle-lock.js';
import { errorResult, fail, ok } from '../app/result.js';
import type { SodiumBackend } from '../core/crypto/sodium.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { Result } from '../shared/contract.js';
import { ChooserDialogs, defaultChooserRoots } from './chooser.js';
import { DropUpload, parseDropManifest } from './drop-body.js';
import { RecordingShell, xdgOpenShell } from './shell.js';
import { encodeWire, parseSocketRequest, REQUEST_MAX_BYTES, type SocketReply } from './wire.js';

/** The only address the preview server binds to: it serves decrypted data, so never beyond this machine. */
const PREVIEW_HOST = '127.0.0.1';

/** How often the idle auto-lock is checked. */
const IDLE_CHECK_MS = 15_000;

/** Where media previews are served (`preview.mediaUrl`), a token after it. */
const MEDIA_PATH = '/media/';

/** Where the bytes of a drop follow its manifest (`/api/drop`), the upload's id after it. */
const DROP_BYTES_PATH = '/api/drop/';

/** How long the bytes of a drop may take to start coming after its manifest (a page closed in between, say). */
const DROP_BYTES_WAIT_MS = 60_000;

export interface PreviewServerOptions {
  /** The app's data folder (settings.json). */
  readonly dataDir: string;
  /** The built renderer (electron-vite's `out/renderer`). */
  readonly staticDir: string;
  /** Dialogs answered from a queue a test fills through POST /api/test/dialog-answers. */
  readonly testMode?: boolean;
  /** Default: a random free port. */
  readonly port?: number;
  /** Only 127.0.0.1 is accepted; anything else is refused. */
  readonly host?: string;
  /** Folders the in-page chooser may show (without testMode); default: the home folder and `dataDir`. */
  readonly chooserRoots?: readonly string[];
  readonly sodium?: SodiumBackend;
}

export interface PreviewServer {
  /** `http://127.0.0.1:<port>/#token=<hex>`: the page reads the token from the fragment. */
  readonly url: string;
  readonly origin: string;
  /** 256 bits, hex. */
  readonly token: string;
  readonly backend: Backend;
  /** Locks and closes every vault, then stops serving. */
  close(): Promise<void>;
}

/**
 * The Content-Security-Policy of every file served: the app's own scripts, workers and styles, its own API, nothing
 * else. Sent with scripts too, because a worker (the PDF preview's) takes its policy from its own script's response.
 */
export function previewCsp(origin: string): string {
  const socket = origin.replace(/^http/, 'ws');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "worker-src 'self'",
    "style-src 'self'",
    "img-src 'self' blob: data:",
    "media-src 'self'",
    "font-src 'self'",
    `connect-src 'self' ${socket}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

/** Compares secrets in constant time (hashing first makes the lengths equal). */
function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** Dialog answers queued by a test (paths on the server machine); an empty queue answers "cancelled". */
class QueuedDialogs implements DialogProvider {
  readonly folders: (string | null)[] = [];
  readonly files: (string[] | null)[] = [];

  pickFolder(): Promise<string | null> {
    return Promise.resolve(this.folders.shift() ?? null);
  }

  pickFiles(): Promise<string[] | null> {
    return Promise.resolve(this.files.shift() ?? null);
  }
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = encodeWire(body);
  response.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  response.end(text);
}

/** Whether a message can be sent on the socket (a function, as the state changes across awaits). */
function isOpen(client: WebSocket): boolean {
  return client.readyState === client.OPEN;
}

/** Logs what went wrong in the server itself (never a payload) and says so to the page. */
function internalFailure(error: unknown): Result<never> {
  console.error('coffer preview: request failed:', error);
  return fail('INTERNAL', 'The preview server failed to answer this request.');
}

function sendFailure(response: ServerResponse, status: number, result: Result<never>): void {
  sendJson(response, status, result);
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of request) {
    length += (chunk as Buffer).length;
    if (length > REQUEST_MAX_BYTES) throw new HttpError(413, 'The request body is too large.');
    chunks.push(chunk as Buffer);
  }
  if (length === 0) return {};
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new HttpError(400, 'The request body is not JSON.');
  }
}

/**
 * Serves the built renderer and the app's back end to a browser on this machine, for development and tests.
 * Every API request and the event socket need the token; a browser request from another origin is refused; a
 * Host header other than this server's is refused (DNS rebinding).
 * @throws {@link InvalidArgumentError} for a host other than 127.0.0.1.
 */
export async function startPreviewServer(options: PreviewServerOptions): Promise<PreviewServer> {
  if (options.host !== undefined && options.host !== PREVIEW_HOST) {
    throw new InvalidArgumentError(
      `The preview server listens on ${PREVIEW_HOST} only (it serves decrypted data); "${options.host}" was refused.`,
    );
  }
  const token = randomBytes(32).toString('hex');
  const socketServer = new WebSocketServer({ noServer: true, maxPayload: REQUEST_MAX_BYTES });
  const broadcast = (event: string, payload: unknown): void => {
    const message = encodeWire({ event, payload });
    for (const client of socketServer.clients) if (isOpen(client)) client.send(message);
  };
  const dialogs = options.testMode === true ? new QueuedDialogs() : undefined;
  // Without the test queue, a dialog becomes a chooser in the page, limited to these folders.
  const chooser = dialogs
    ? undefined
    : new ChooserDialogs(
        options.chooserRoots ?? (await defaultChooserRoots(homedir(), options.dataDir)),
        (request) => {
          broadcast('chooser', request);
        },
      );
  // A test reads back what would have been opened; a person's preview uses the desktop's opener if it has one.
  const recordingShell = options.testMode === true ? new RecordingShell() : undefined;
  const shell = recordingShell ?? xdgOpenShell();
  const backend = await createBackend({
    dataDir: options.dataDir,
    // Relative: the page resolves it against its own origin.
    mediaUrlBase: MEDIA_PATH,
    dialogs: dialogs ?? (chooser as DialogProvider),
    // A browser tab cannot keep itself out of a screen capture.
    contentProtection: false,
    ...(shell ? { shell } : {}),
    ...(options.sodium ? { sodium: options.sodium } : {}),
  });
  const staticRoot = resolve(options.staticDir);
  /** Drops whose manifest came and whose bytes are awaited, by upload id. */
  const uploads = new Map<string, DropUpload>();
  const idle = new IdleLock({
    minutes: async () => {
      const settings = await backend.handle('settings.get', {});
      return settings.ok ? (settings.value as { autoLockMinutes: number }).autoLockMinutes : 0;
    },
    lock: () => backend.lockAll('idle'),
    busy: () => backend.jobsRunning(),
  });
  const idleTimer = setInterval(() => {
    void idle.check();
  }, IDLE_CHECK_MS);
  idleTimer.unref();
  let origin = '';
  let host = '';

  /** The refusal for a request that may not reach the API, or undefined. */
  const refusal = (request: IncomingMessage, presented: string | undefined): HttpError | undefined => {
    if (request.headers.host !== host) return new HttpError(421, 'Wrong Host header.');
    const from = request.headers.origin;
    if (from !== undefined && from !== origin)
      return new HttpError(403, 'Requests from another origin are refused.');
    if (presented === undefined || !sameSecret(presented, token))
      return new HttpError(401, 'Missing or wrong token.');
    return undefined;
  };

  const bearer = (request: IncomingMessage): string | undefined => {
    const header = request.headers.authorization;
    return header?.startsWith('Bearer ') === true ? header.slice('Bearer '.length) : undefined;
  };

  const serveApi = async (
    request: IncomingMessage,
    response: ServerResponse,
    path: string,
  ): Promise<void> => {
    if (request.method !== 'POST') throw new HttpError(405, 'Use POST.');
    const denied = refusal(request, bearer(request));
    if (denied) throw denied;
    idle.touch();
    if (path.startsWith('/api/invoke/')) {
      const channel = decodeURIComponent(path.slice('/api/invoke/'.length));
      // Payloads are never logged: vault.create and vault.unlock carry a passphrase.
      sendJson(response, 200, await backend.handle(channel, await readJson(request)));
      return;
    }
    if (path === '/api/page-closed') {
      await backend.windowClosed();
      sendJson(response, 200, ok(null));
      return;
    }
    if (path === '/api/drop') {
      let registered;
      try {
        const upload = new DropUpload(parseDropManifest(await readJson(request)), DROP_BYTES_WAIT_MS);
        registered = backend.registerDroppedBytes(upload.files);
        if (registered.ok) {
          const id = randomBytes(16).toString('hex');
          uploads.set(id, upload);
          setTimeout(() => uploads.delete(id), DROP_BYTES_WAIT_MS).unref();
          registered = ok({ ...registered.value, upload: id });
        }
      } catch (error) {
        registered = errorResult(error);
      }
      sendJson(response, 200, registered);
      return;
    }
    if (path.startsWith(DROP_BYTES_PATH)) {
      const id = path.slice(DROP_BYTES_PATH.length);
      const upload = uploads.get(id);
      if (upload === undefined)
        throw new HttpError(404, 'No such drop (it expired, or its bytes came already).');
      uploads.delete(id);
      sendJson(response, 200, await upload.receive(request));
      return;
    }
    if (path === '/api/chooser/pending' && !chooser) {
      // The page asks at start whether a chooser waits; with the test's dialog answers none ever does.
      sendJson(response, 200, ok(null));
      return;
    }
    if (path.startsWith('/api/chooser/') && chooser) {
      const body = (await readJson(request)) as { path?: unknown; chooserId?: unknown; paths?: unknown };
      try {
        if (path === '/api/chooser/list') sendJson(response, 200, ok(await chooser.list(body.path)));
        else if (path === '/api/chooser/answer') {
          await chooser.answer(body.chooserId, body.paths);
          sendJson(response, 200, ok(null));
        } else if (path === '/api/chooser/pending') sendJson(response, 200, ok(chooser.pending ?? null));
        else throw new HttpError(404, 'No such API.');
      } catch (error) {
        if (error instanceof HttpError) throw error;
        sendJson(response, 200, errorResult(error));
      }
      return;
    }
    if (path === '/api/test/dialog-answers' && dialogs) {
      const body = (await readJson(request)) as { folders?: unknown; files?: unknown };
      const folders = Array.isArray(body.folders) ? body.folders : [];
      const files = Array.isArray(body.files) ? body.files : [];
      const isPath = (value: unknown): value is string => typeof value === 'string' && value.length > 0;
      if (
        !folders.every((answer) => answer === null || isPath(answer)) ||
        !files.every((answer) => answer === null || (Array.isArray(answer) && answer.every(isPath)))
      ) {
        throw new HttpError(400, 'Answers are paths (strings), lists of paths, or null for "cancelled".');
      }
      dialogs.folders.push(...(folders as (string | null)[]));
      dialogs.files.push(...(files as (string[] | null)[]));
      sendJson(response, 200, { ok: true, value: null });
      return;
    }
    if (path === '/api/test/shell-requests' && recordingShell) {
      sendJson(response, 200, ok(recordingShell.requests));
      return;
    }
    throw new HttpError(404, 'No such API.');
  };

  /**
   * Answers a contract request the page sent on its socket, as `/api/invoke/` answers one sent over HTTP (the
   * socket's token, Host and Origin were checked when it opened). A message of any other shape closes the socket.
   */
  const answerOnSocket = async (client: WebSocket, data: RawData, isBinary: boolean): Promise<void> => {
    const message =
      !isBinary && Buffer.isBuffer(data) ? parseSocketRequest(data.toString('utf8')) : undefined;
    if (message === undefined) {
      client.close(1008, 'A request on this socket is JSON: { id, channel, request }.');
      return;
    }
    // Not for a socket that is closing (after a message of another shape, say): its reply could not be sent.
    if (!isOpen(client)) return;
    idle.touch();
    // Payloads are never logged: vault.create and vault.unlock carry a passphrase.
    const result = await backend.handle(message.channel, message.request).catch(internalFailure);
    const reply: SocketReply = { reply: message.id, result };
    if (isOpen(client)) client.send(encodeWire(reply));
  };

  /** Static files and media are only read, and only through this server's own host name (DNS rebinding). */
  const refuseUnlessGet = (request: IncomingMessage): void => {
    if (request.method !== 'GET' && request.method !== 'HEAD') throw new HttpError(405, 'Use GET.');
    if (request.headers.host !== host) throw new HttpError(421, 'Wrong Host header.');
  };

  const serveStatic = async (
    request: IncomingMessage,
    response: ServerResponse,
    path: string,
  ): Promise<void> => {
    refuseUnlessGet(request);
    const headers = {
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Resource-Policy': 'same-origin',
      'Content-Security-Policy': previewCsp(origin),
    };
    const relative = path === '/' ? '/index.html' : path;
    if (relative.includes('\0') || relative.split('/').some((part) => part === '..' || part.includes('\\'))) {
      throw new HttpError(404, 'Not found.');
    }
    const file = resolve(staticRoot, `.${relative}`);
    if (!file.startsWith(staticRoot + sep)) throw new HttpError(404, 'Not found.');
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) {
      if (relative === '/index.html') {
        response.writeHead(200, {
          ...headers,
          'Content-Type': 'text/html; charset=utf-8',
        });
        response.end(
          '<!doctype html><title>Coffer preview</title><p>The app is not built yet: run <code>npm run preview</code> (it builds the renderer into out/renderer first).</p>\n',
        );
        return;
      }
      throw new HttpError(404, 'Not found.');
    }
    const type = CONTENT_TYPES[extname(file)] ?? 'application/octet-stream';
    response.writeHead(200, {
      ...headers,
      'Content-Type': type,
      'Content-Length': info.size,
    });
    if (request.method === 'HEAD') {
      response.end();
      return;
    }
    createReadStream(file)
      .on('error', () => response.destroy())
      .pipe(response);
  };

  /**
   * A media preview's bytes (`preview.mediaUrl`): the unguessable token in the path is the permission, since a media
   * element sends no Authorization header; the Host header is still checked (DNS rebinding).
   */
  const serveMedia = async (
    request: IncomingMessage,
    response: ServerResponse,
    path: string,
  ): Promise<void> => {
    refuseUnlessGet(request);
    idle.touch();
    const answer = backend.serveMedia(path, request.headers.range ?? null);
    response.writeHead(answer.status, { ...answer.headers });
    if (!answer.body || request.method === 'HEAD') {
      answer.body?.destroy();
      response.end();
      return;
    }
    // Damage found mid-file ends the response short: the element sees a network error, never unauthenticated bytes.
    await pipeline(answer.body, response).catch(() => undefined);
  };

  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    const serve = path.startsWith('/api/')
      ? serveApi
      : path.startsWith(MEDIA_PATH)
        ? serveMedia
        : serveStatic;
    serve(request, response, path).catch((error: unknown) => {
      if (response.headersSent) {
        response.destroy();
        return;
      }
      if (error instanceof HttpError) {
        sendFailure(response, error.status, fail('INVALID_ARGUMENT', error.message));
        return;
      }
      sendFailure(response, 500, internalFailure(error));
    });
    request.on('error', () => response.destroy());
  });

  server.on('upgrade', (request, socket, head) => {
    const url = new URL(request.url ?? '/', 'http://x');
    const denied =
      url.pathname === '/api/events'
        ? refusal(request, url.searchParams.get('token') ?? undefined)
        : new HttpError(404, 'Not found.');
    if (denied) {
      socket.end(
        `HTTP/1.1 ${denied.status} ${denied.status === 404 ? 'Not Found' : 'Refused'}\r\nConnection: close\r\n\r\n`,
      );
      return;
    }
    socketServer.handleUpgrade(request, socket, head, (client: WebSocket) => {
      client.on('message', (data, isBinary) => {
        // Each request in a turn of its own: the socket hands over every message of a network read in one go, and
        // a request's long synchronous work (the first use of a large tree, say) would otherwise run before the
        // replies to the requests before it were sent. (A reply that waits for I/O still waits behind it.)
        setImmediate(() => void answerOnSocket(client, data, isBinary));
      });
      client.on('error', () => {
        client.terminate();
      });
    });
  });
  const stopEvents = backend.onEvent(broadcast);

  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(options.port ?? 0, PREVIEW_HOST, () => {
      server.off('error', failed);
      listening();
    });
  });
  const { port } = server.address() as AddressInfo;
  host = `${PREVIEW_HOST}:${port}`;
  origin = `http://${host}`;

  return {
    url: `${origin}/#token=${token}`,
    origin,
    token,
    backend,
    async close() {
      clearInterval(idleTimer);
      stopEvents();
      chooser?.cancel();
      for (const client of socketServer.clients) client.terminate();
      socketServer.close();
      await backend.dispose();
      await new Promise<void>((closed) => {
        server.close(() => {
          closed();
        });
        server.closeAllConnections();
      });
    },
  };
}
