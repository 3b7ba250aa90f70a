/**
 * JSON with bytes, for the preview's HTTP and WebSocket messages: a Uint8Array travels as `{ "$bytes": base64 }`.
 * Browser-safe (no Node imports): the bridge decodes what the server encodes.
 */

import type { FilesPurpose, FolderPurpose } from '../shared/contract.js';

const BYTES_KEY = '$bytes';

/** The largest request, as an HTTP body or a socket message (a request naming many vault paths stays well below). */
export const REQUEST_MAX_BYTES = 16 * 1024 * 1024;

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let at = 0; at < bytes.length; at += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  }
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function encodeWire(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item instanceof Uint8Array ? { [BYTES_KEY]: toBase64(item) } : item,
  );
}

export function decodeWire(text: string): unknown {
  // Most messages hold no bytes, and a reviver costs five to eight times the parse (a folder of 10,000 entries:
  // about 25 ms against 4): without the key in the text it would change nothing, so it is left out.
  if (!text.includes(`"${BYTES_KEY}"`)) return JSON.parse(text);
  return JSON.parse(text, (_key, item: unknown) => {
    if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
      const bytes = (item as Record<string, unknown>)[BYTES_KEY];
      if (typeof bytes === 'string' && Object.keys(item).length === 1) return fromBase64(bytes);
    }
    return item;
  });
}

/** One file of a drop's manifest (`/api/drop`); the files' bytes follow in this order (`/api/drop/<upload>`). */
export interface DropManifestEntry {
  readonly name: string;
  readonly size: number;
  readonly mtime: number;
}

/** The preview's stand-in for a native dialog, sent to the page as the socket event 'chooser'. */
export interface ChooserRequest {
  readonly chooserId: string;
  readonly kind: 'folder' | 'files';
  readonly purpose: FolderPurpose | FilesPurpose;
  /** Absolute folders the page may list and choose below. */
  readonly roots: readonly string[];
}

export interface ChooserEntry {
  readonly name: string;
  readonly type: 'folder' | 'file';
}

export interface ChooserListing {
  readonly path: string;
  /** The folder above, or null at a root. */
  readonly parent: string | null;
  readonly entries: readonly ChooserEntry[];
  /** Entries past the listing limit, not listed. */
  readonly omitted: number;
}

/**
 * A contract request the page sends on its event socket (a round trip there takes a third of an HTTP request's
 * in Chromium); the server answers it with a {@link SocketReply} of the same `id`, after any event it caused.
 */
export interface SocketRequest {
  readonly id: number;
  readonly channel: string;
  readonly request: unknown;
}

/** The back end's answer to the {@link SocketRequest} whose `id` is `reply`. */
export interface SocketReply {
  readonly reply: number;
  readonly result: unknown;
}

/**
 * The request a socket message holds, or undefined when it holds none (not JSON, or not that shape). A missing
 * `request` is `{}`, as an empty HTTP body is.
 */
export function parseSocketRequest(text: string): SocketRequest | undefined {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return undefined;
  const { id, channel, request } = message as Record<string, unknown>;
  if (!Number.isSafeInteger(id) || (id as number) < 0 || typeof channel !== 'string') return undefined;
  return { id: id as number, channel, request: 'request' in message ? request : {} };
}
