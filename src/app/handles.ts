import { randomBytes } from 'node:crypto';

import { InvalidArgumentError } from '../core/errors.js';
import type { ArrivingBytes } from './arriving-bytes.js';
import type { FilesPurpose, FolderPurpose } from '../shared/contract.js';

/** Something on disk (or dropped bytes) the user chose, which the renderer may name only by its handle. */
export type HandleTarget =
  | { readonly kind: 'folder'; readonly purpose: FolderPurpose; readonly path: string }
  | { readonly kind: 'files'; readonly purpose: FilesPurpose; readonly paths: readonly string[] }
  | { readonly kind: 'dropped-paths'; readonly paths: readonly string[] }
  | { readonly kind: 'dropped-bytes'; readonly files: readonly DroppedBytes[] };

/** The paths on disk that a handle of a picked folder, picked files or a drop with paths names. */
export function pathsOnDisk(target: Exclude<HandleTarget, { kind: 'dropped-bytes' }>): readonly string[] {
  return target.kind === 'folder' ? [target.path] : target.paths;
}

/** A dropped file held in memory (never on disk) until the add job that uses it has read it. */
export interface DroppedBytes {
  readonly name: string;
  readonly size: number;
  readonly mtime: number;
  readonly bytes: ArrivingBytes;
}

/** What a handle is accepted as; the purpose of a dialog's handle, or a drop's kind. */
export type HandleUse = FolderPurpose | FilesPurpose | 'dropped-paths' | 'dropped-bytes';

interface Entry {
  readonly target: HandleTarget;
  /** The vault the handle belongs to; a drop's handle belongs to the first vault that uses it. */
  vaultId: string | undefined;
  readonly expiresAt: number;
}

/** How long a handle stays valid: long enough to type a vault name, short enough not to linger. */
const HANDLE_TTL_MS = 15 * 60 * 1000;

function useOf(target: HandleTarget): HandleUse {
  return target.kind === 'folder' || target.kind === 'files' ? target.purpose : target.kind;
}

/** Overwrites dropped plaintext held in memory. */
function wipe(target: HandleTarget): void {
  if (target.kind !== 'dropped-bytes') return;
  for (const file of target.files) file.bytes.wipe();
}

/**
 * Opaque, random, expiring handles for what the user chose. A handle is accepted only for its purpose and only by
 * the vault it belongs to, so a compromised renderer can neither invent a path nor reuse a handle for another
 * purpose (a restore destination as a folder to add, say) or another vault.
 */
export class HandleRegistry {
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => number;
  readonly #ttlMs: number;

  constructor(options: { now?: () => number; ttlMs?: number } = {}) {
    this.#now = options.now ?? Date.now;
    this.#ttlMs = options.ttlMs ?? HANDLE_TTL_MS;
  }

  issue(target: HandleTarget, vaultId?: string): string {
    this.#sweep();
    const handle = `h-${randomBytes(16).toString('hex')}`;
    this.#entries.set(handle, { target, vaultId, expiresAt: this.#now() + this.#ttlMs });
    return handle;
  }

  /**
   * The target of a handle, if it may be used for one of `uses` by `vaultId`. Dropped files are used up: their
   * handle is gone once taken.
   * @throws {@link InvalidArgumentError} for an unknown or expired handle, another purpose or another vault.
   */
  take(handle: string, uses: readonly HandleUse[], vaultId: string | undefined): HandleTarget {
    const entry = this.#usable(handle, uses, vaultId);
    entry.vaultId = vaultId;
    if (entry.target.kind.startsWith('dropped')) this.#entries.delete(handle);
    return entry.target;
  }

  /**
   * The target of a handle, checked as {@link take} does, without using it up: to look at what a choice holds
   * before acting on it. Like {@link take}, it ties a drop's handle to `vaultId`, so that locking that vault
   * forgets (and wipes) a drop still waiting for the person's answer.
   * @throws {@link InvalidArgumentError} as {@link take} does.
   */
  peek(handle: string, uses: readonly HandleUse[], vaultId: string | undefined): HandleTarget {
    const entry = this.#usable(handle, uses, vaultId);
    entry.vaultId = vaultId;
    return entry.target;
  }

  #usable(handle: string, uses: readonly HandleUse[], vaultId: string | undefined): Entry {
    this.#sweep();
    const entry = this.#entries.get(handle);
    if (!entry) {
      throw new InvalidArgumentError(
        'That choice is no longer valid (it expired, or the vault was locked). Choose the folder or files again.',
      );
    }
    const use = useOf(entry.target);
    if (!uses.includes(use)) {
      throw new InvalidArgumentError(
        `That choice was made for something else (${use}); choose again for this.`,
      );
    }
    if (entry.vaultId !== undefined && entry.vaultId !== vaultId) {
      throw new InvalidArgumentError('That choice was made for another vault; choose again for this one.');
    }
    return entry;
  }

  /** Forgets (and wipes) every handle of a vault: after a lock or close, its choices must be made again. */
  forgetVault(vaultId: string): void {
    for (const [handle, entry] of this.#entries) {
      if (entry.vaultId === vaultId) this.#forget(handle, entry);
    }
  }

  /** Forgets (and wipes) every handle. */
  clear(): void {
    for (const [handle, entry] of this.#entries) this.#forget(handle, entry);
  }

  #forget(handle: string, entry: Entry): void {
    this.#entries.delete(handle);
    wipe(entry.target);
  }

  #sweep(): void {
    const now = this.#now();
    for (const [handle, entry] of this.#entries) if (entry.expiresAt <= now) this.#forget(handle, entry);
  }
}

export { wipe as wipeDropped };
