/** The parts of a file's status that change when it is written to. */
export interface FileStamp {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
}

/** Whether a file was changed between two looks at it (a write moves ctime even when it restores mtime). */
export function fileChanged(before: FileStamp, after: FileStamp): boolean {
  return before.size !== after.size || before.mtimeMs !== after.mtimeMs || before.ctimeMs !== after.ctimeMs;
}
