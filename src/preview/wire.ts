/**
 * JSON with bytes and packed rows, for the preview's HTTP and WebSocket messages: a Uint8Array travels as
 * `{ "$bytes": base64 }`, and a long array of flat records that share their keys as
 * `{ "$rows": keys, "values": all }` (each record's values in turn, its keys said once). The decoder takes any
 * object of exactly either shape for one of these (`$bytes` alone, with a string; `$rows` and `values`, with at
 * least 64 records' values): no contract shape has either key. Records with no keys or a `__proto__` key are never
 * packed. Browser-safe (no Node imports): the bridge decodes what the server encodes.
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

const ROWS_KEY = '$rows';
const ROW_VALUES_KEY = 'values';

/**
 * Arrays of at least this many records go packed. Chromium hands a page a long message slowly on this project's
 * machines (a folder of 10,000 entries, 1 MB of JSON: 55–70 ms from the request to the message), and packing takes
 * that listing to 0.63 MB (33–40 ms, and 5 ms more to unpack); a short array gains nothing and stays readable.
 */
const PACKED_ROWS_MIN = 64;

type Row = Record<string, string | number | boolean | null>;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function isPrimitive(value: unknown): value is string | number | boolean | null {
  return (
    value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
  );
}

/** The keys every item has, in the same order, when each is a plain object of primitive values; else undefined. */
function sharedKeys(items: readonly unknown[]): string[] | undefined {
  const first = items[0];
  if (!isPlainObject(first)) return undefined;
  const keys = Object.keys(first);
  // Assigning "__proto__" to a fresh object would set its prototype rather than a key.
  if (keys.length === 0 || keys.includes('__proto__')) return undefined;
  for (const item of items) {
    if (!isPlainObject(item)) return undefined;
    let count = 0;
    for (const key in item) {
      if (key !== keys[count++] || !isPrimitive(item[key])) return undefined;
    }
    if (count !== keys.length) return undefined;
  }
  return keys;
}

/** A long array of records that share their keys, packed; else the array itself. */
function packed(items: readonly unknown[]): unknown {
  if (items.length < PACKED_ROWS_MIN) return items;
  const keys = sharedKeys(items);
  if (keys === undefined) return items;
  const values: unknown[] = [];
  for (const item of items as readonly Row[]) for (const key of keys) values.push(item[key]);
  return { [ROWS_KEY]: keys, [ROW_VALUES_KEY]: values };
}

/** The records a packed array holds, or undefined when `record` is not one. */
function unpackedRows(record: Record<string, unknown>): Row[] | undefined {
  const keys = record[ROWS_KEY];
  const values = record[ROW_VALUES_KEY];
  if (
    !Array.isArray(keys) ||
    !Array.isArray(values) ||
    Object.keys(record).length !== 2 ||
    keys.length === 0 ||
    !keys.every((key) => typeof key === 'string' && key !== '__proto__') ||
    values.length % keys.length !== 0 ||
    values.length / keys.length < PACKED_ROWS_MIN ||
    !values.every(isPrimitive)
  ) {
    return undefined;
  }
  const names = keys as string[];
  const rows = new Array<Row>(values.length / names.length);
  for (let at = 0, row = 0; at < values.length; row++) {
    const fields: Row = {};
    for (const name of names) fields[name] = values[at++] as Row[string];
    rows[row] = fields;
  }
  return rows;
}

/** `value` with each packed array unpacked (in place: `value` is fresh from the parser). */
function unpacked(value: unknown): unknown {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = unpacked(value[i]);
    return value;
  }
  if (!isPlainObject(value)) return value;
  const rows = unpackedRows(value);
  if (rows !== undefined) return rows;
  for (const key of Object.keys(value)) value[key] = unpacked(value[key]);
  return value;
}

/**
 * `value` as it goes on the wire: bytes as base64, long arrays of records packed, and otherwise what JSON.stringify
 * would write (an object's `toJSON` first, then its own enumerable keys). Parts that change are copied and the rest
 * shared (a JSON.stringify replacer would do the same at three to five times the cost, being called for every
 * value).
 */
function wireForm(value: unknown, key: string): unknown {
  if (value instanceof Uint8Array) return { [BYTES_KEY]: toBase64(value) };
  if (value === null || typeof value !== 'object') return value;
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return wireForm(toJSON.call(value, key), key);
  if (Array.isArray(value)) {
    const rows = packed(value);
    if (rows !== value) return rows;
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const form = wireForm(item, String(i));
      if (form !== item) (copy ??= value.slice())[i] = form;
    }
    return copy ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  for (const [name, item] of Object.entries(value)) {
    const form = wireForm(item, name);
    if (form !== item) (copy ??= { ...value })[name] = form;
  }
  return copy ?? value;
}

export function encodeWire(value: unknown): string {
  return JSON.stringify(wireForm(value, ''));
}

export function decodeWire(text: string): unknown {
  // Most messages hold no bytes, and a reviver costs five to eight times the parse (a folder of 10,000 entries:
  // about 25 ms against 4): without the key in the text it would change nothing, so it is left out.
  const parsed: unknown = !text.includes(`"${BYTES_KEY}"`)
    ? JSON.parse(text)
    : JSON.parse(text, (_key, item: unknown) => {
        if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
          const bytes = (item as Record<string, unknown>)[BYTES_KEY];
          if (typeof bytes === 'string' && Object.keys(item).length === 1) return fromBase64(bytes);
        }
        return item;
      });
  return text.includes(`"${ROWS_KEY}"`) ? unpacked(parsed) : parsed;
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
  /** The folder to show first, below a root; the first root when absent. */
  readonly startIn?: string;
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
