import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';

import { InvalidArgumentError, type Vault } from '../core/index.js';
import { previewKind } from '../shared/preview-kind.js';

/**
 * Audio and video previews played by range reads: a media element asks for the bytes it needs as it plays and seeks,
 * and only the chunks holding them are decrypted, in memory, as they are sent. The window gets an opaque URL with
 * an unguessable token (never a path, never key material), bound to one file of one vault; a token works until its
 * preview closes, its vault locks or closes, or the window goes.
 */

/** What one token lets its holder read. */
interface MediaGrant {
  readonly vaultId: string;
  readonly path: string;
  readonly type: string;
}

/** An answer to one media request, for the host to send (the preview server over HTTP, Electron from its protocol). */
export interface MediaResponse {
  readonly status: 200 | 206 | 404 | 416 | 500;
  readonly headers: Readonly<Record<string, string>>;
  /** The plaintext bytes asked for, authenticated chunk by chunk as they are read; absent for an error status. */
  readonly body?: Readable;
}

/** Unguessable: 256 bits. */
const TOKEN_BYTES = 32;

const COMMON_HEADERS = {
  'accept-ranges': 'bytes',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

/**
 * The first range of an HTTP `Range` header (RFC 9110 14.1.2, one `bytes` range: `a-b`, `a-` or `-n`) as inclusive
 * offsets within a file of `size` bytes; `undefined` when there is none; `null` when it cannot be served (416).
 * A media element asks for one range at a time, so a list of several is refused rather than half answered.
 */
export function parseRange(
  header: string | null,
  size: number,
): { start: number; end: number } | null | undefined {
  if (header === null || header.trim() === '') return undefined;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return null;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return null;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return null;
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (!Number.isSafeInteger(start) || start >= size || end < start) return null;
  return { start, end };
}

export class MediaStreams {
  readonly #urlBase: string;
  readonly #grants = new Map<string, MediaGrant>();

  /** @param urlBase - what a token is appended to: the host's media origin and path, ending in `/`. */
  constructor(urlBase: string) {
    this.#urlBase = urlBase;
  }

  /**
   * A URL that plays `path` of `vault` by range reads.
   * @throws {@link InvalidArgumentError} when it is not an audio or video file the window plays;
   * {@link NotFoundError} and {@link VaultLockedError} from the vault.
   */
  grant(vaultId: string, vault: Vault, path: string): string {
    const file = vault.stat(path);
    const kind = file.type === 'file' ? previewKind(file.name) : undefined;
    if (kind === undefined || (kind.kind !== 'audio' && kind.kind !== 'video'))
      throw new InvalidArgumentError(`"${path}" is not an audio or video file.`);
    const token = randomBytes(TOKEN_BYTES).toString('base64url');
    this.#grants.set(token, { vaultId, path: file.path, type: kind.type });
    return this.#urlBase + token;
  }

  /** Ends one URL (its preview closed). An unknown URL is ignored. */
  revoke(url: string): void {
    if (url.startsWith(this.#urlBase)) this.#grants.delete(url.slice(this.#urlBase.length));
  }

  /** Ends every URL of one vault (at its lock or close). */
  revokeVault(vaultId: string): void {
    for (const [token, grant] of this.#grants) if (grant.vaultId === vaultId) this.#grants.delete(token);
  }

  /** Ends every URL (the window went). */
  revokeAll(): void {
    this.#grants.clear();
  }

  /**
   * Answers a request for `url` with the `Range` header `range`: 206 with the range, 200 with the whole file when
   * no range is asked, 416 for a range outside the file, 404 for a URL that is not (or no longer) granted or whose
   * vault is locked. A chunk that fails authentication ends the body with an error, before any of its bytes.
   * @param vaultOf - the open vault with this id, if any.
   */
  respond(url: string, range: string | null, vaultOf: (vaultId: string) => Vault | undefined): MediaResponse {
    const notFound: MediaResponse = { status: 404, headers: { ...COMMON_HEADERS } };
    const grant = url.startsWith(this.#urlBase)
      ? this.#grants.get(url.slice(this.#urlBase.length).split(/[?#]/, 1)[0] ?? '')
      : undefined;
    if (grant === undefined) return notFound;
    const vault = vaultOf(grant.vaultId);
    if (vault === undefined || vault.locked) return notFound;
    let size: number;
    try {
      const file = vault.stat(grant.path);
      if (file.type !== 'file') return notFound;
      size = file.size;
    } catch {
      // Deleted or renamed since the URL was made.
      return notFound;
    }
    const wanted = parseRange(range, size);
    if (wanted === null) {
      return { status: 416, headers: { ...COMMON_HEADERS, 'content-range': `bytes */${size}` } };
    }
    const headers = { ...COMMON_HEADERS, 'content-type': grant.type };
    if (wanted === undefined) {
      return {
        status: 200,
        headers: { ...headers, 'content-length': String(size) },
        body: vault.read(grant.path),
      };
    }
    return {
      status: 206,
      headers: {
        ...headers,
        'content-length': String(wanted.end - wanted.start + 1),
        'content-range': `bytes ${wanted.start}-${wanted.end}/${size}`,
      },
      body: vault.read(grant.path, wanted),
    };
  }
}
