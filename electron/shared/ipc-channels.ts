/**
 * The IPC channel names between the preload and main. Few on purpose: every contract request goes through one
 * invoke channel and is validated by the back end against its schema, so there is no per-channel surface to keep
 * in step.
 */
export const IPC = {
  /** `(channel: string, request: unknown)` → `Result`. */
  invoke: 'coffer:invoke',
  /** Paths of dropped files, read in the preload with `webUtils.getPathForFile` → `Result<{ handle, count }>`. */
  dropPaths: 'coffer:drop-paths',
  /** Dropped files without a path on disk, as bytes → `Result<{ handle, count }>`. */
  dropBytes: 'coffer:drop-bytes',
  /** main → window: `{ event, payload }`. */
  event: 'coffer:event',
} as const;

/** One dropped file without a path, as the preload sends it. */
export interface DroppedBytes {
  readonly name: string;
  readonly size: number;
  /** Milliseconds since the epoch. */
  readonly mtime: number;
  readonly bytes: Uint8Array;
}
