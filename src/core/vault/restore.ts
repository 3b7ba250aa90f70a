import { link, lstat, mkdir, open, rename, unlink, utimes } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

import { AlreadyExistsError, CancelledError, CofferError, IntegrityError } from '../errors.js';
import { destinationPath, parseVaultPath } from '../names.js';
import type { Problem, Progress, RestoreOptions, RestoreReport } from '../types.js';
import { asIoError, fsyncDirectory, removeQuietly, tempPathBeside } from './durable.js';
import { decryptFile } from './read.js';
import type { Session } from './session.js';
import type { TreeNode } from './tree.js';

interface RestoreItem {
  readonly node: TreeNode;
  /** Names below the destination folder. */
  readonly parts: readonly string[];
}

function plan(session: Session, paths: readonly string[]): RestoreItem[] {
  const items: RestoreItem[] = [];
  const visit = (node: TreeNode, parts: readonly string[]): void => {
    items.push({ node, parts });
    if (node.type === 'folder') {
      for (const child of session.tree.childrenOf(node.id)) visit(child, [...parts, child.name]);
    }
  };
  for (const path of paths) {
    const node = session.tree.resolve(parseVaultPath(path));
    if (node === null) for (const child of session.tree.childrenOf(null)) visit(child, [child.name]);
    else visit(node, [node.name]);
  }
  return items;
}

async function exists(path: string): Promise<'file' | 'folder' | false> {
  try {
    return (await lstat(path)).isDirectory() ? 'folder' : 'file';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/**
 * Puts the finished temp file at `target`. Without `overwrite` a hard link publishes it only if nothing is there
 * (atomic no-clobber); file systems without hard links fall back to check-then-rename.
 */
async function publish(temp: string, target: string, overwrite: boolean): Promise<void> {
  if (overwrite) {
    await rename(temp, target);
    return;
  }
  try {
    await link(temp, target);
    await unlink(temp);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new AlreadyExistsError(`"${target}" already exists; it was left untouched.`);
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV') throw error;
    if (await exists(target))
      throw new AlreadyExistsError(`"${target}" already exists; it was left untouched.`);
    await rename(temp, target);
  }
}

class RestoreJob {
  readonly #session: Session;
  readonly #options: RestoreOptions;
  readonly #problems: Problem[] = [];
  #progress: Progress = { filesDone: 0, filesTotal: 0, bytesDone: 0, bytesTotal: 0 };
  #files = 0;
  #folders = 0;
  #bytes = 0;

  constructor(session: Session, options: RestoreOptions) {
    this.#session = session;
    this.#options = options;
  }

  #report(change: Partial<Progress>): void {
    this.#progress = { ...this.#progress, ...change };
    this.#options.onProgress?.(this.#progress);
  }

  async run(items: readonly RestoreItem[], destinationDir: string): Promise<RestoreReport> {
    const files = items.filter((item) => item.node.type === 'file');
    this.#report({
      filesTotal: files.length,
      bytesTotal: files.reduce((sum, item) => sum + item.node.size, 0),
    });
    const root = resolve(destinationDir);
    await mkdir(root, { recursive: true }).catch((error: unknown) => {
      throw asIoError(error, `Could not create "${root}"`);
    });
    const skippedFolders = new Set<string>();
    for (const item of items) {
      if (this.#options.signal?.aborted) throw new CancelledError();
      const vaultPath = this.#session.tree.pathOf(item.node);
      if ([...skippedFolders].some((prefix) => vaultPath.startsWith(`${prefix}/`))) continue;
      let target: string;
      try {
        target = destinationPath(root, item.parts);
      } catch (error) {
        this.#problem(vaultPath, error);
        if (item.node.type === 'folder') skippedFolders.add(vaultPath);
        continue;
      }
      if (item.node.type === 'folder') {
        if (!(await this.#restoreFolder(vaultPath, target))) skippedFolders.add(vaultPath);
      } else {
        this.#report({ current: vaultPath });
        await this.#restoreFile(item.node, vaultPath, target);
        this.#report({ filesDone: this.#progress.filesDone + 1 });
      }
    }
    return {
      filesRestored: this.#files,
      foldersRestored: this.#folders,
      bytesRestored: this.#bytes,
      problems: this.#problems,
    };
  }

  #problem(path: string, error: unknown): void {
    if (!(error instanceof CofferError)) throw error;
    this.#problems.push({ path, code: error.code, message: error.message });
  }

  async #restoreFolder(vaultPath: string, target: string): Promise<boolean> {
    const found = await exists(target);
    if (found === 'file') {
      this.#problem(
        vaultPath,
        new AlreadyExistsError(`"${target}" is a file, so folder "${vaultPath}" was not restored.`),
      );
      return false;
    }
    if (!found) {
      await mkdir(target, { recursive: true }).catch((error: unknown) => {
        throw asIoError(error, `Could not create "${target}"`);
      });
      this.#folders++;
    }
    return true;
  }

  /**
   * Decrypts into a temp file beside the target and publishes it only after every chunk authenticated, so a
   * damaged file never appears at its final path and an existing file is never half-overwritten.
   */
  async #restoreFile(node: TreeNode, vaultPath: string, target: string): Promise<void> {
    const found = await exists(target);
    if (found === 'folder' || (found === 'file' && this.#options.overwrite !== true)) {
      this.#problem(
        vaultPath,
        new AlreadyExistsError(
          `"${target}" already exists; it was left untouched. Use overwrite to replace it.`,
        ),
      );
      return;
    }
    const temp = tempPathBeside(target, 'restore');
    try {
      // 0o666 less the user's umask, as `cp` would create it.
      const out = await open(temp, 'wx', 0o666);
      try {
        await decryptFile(
          this.#session,
          node,
          async (views, position) => {
            await out.writev(views, position);
          },
          this.#options.signal,
        );
        await out.sync();
      } finally {
        await out.close();
      }
      await utimes(temp, new Date(node.mtime), new Date(node.mtime));
      await publish(temp, target, this.#options.overwrite === true);
      await fsyncDirectory(dirname(target));
    } catch (error) {
      await removeQuietly(temp);
      if (error instanceof IntegrityError || error instanceof AlreadyExistsError) {
        this.#problem(vaultPath, error);
        return;
      }
      if (error instanceof CancelledError) throw error;
      throw asIoError(error, `Could not write "${target}"`);
    }
    this.#files++;
    this.#bytes += node.size;
    this.#report({ bytesDone: this.#progress.bytesDone + node.size });
    this.#options.onRestored?.(this.#session.entry(node), target);
  }
}

/**
 * Restores files and folders (recursively; "/" restores everything) into `destinationDir`, creating it if
 * needed. Each file is written to a temp file beside its target and renamed into place only after every chunk
 * authenticated. Damaged or missing contents, existing files (without `overwrite`) and unsafe names are reported
 * and the rest continues.
 * @throws {@link NotFoundError} before anything is written when a vault path does not exist.
 * @throws {@link CancelledError} when `signal` aborts (the file in progress leaves nothing behind).
 * @throws {@link IoError} when the destination cannot be written (disk full, permissions).
 */
export async function restorePaths(
  session: Session,
  paths: readonly string[],
  destinationDir: string,
  options: RestoreOptions,
): Promise<RestoreReport> {
  return new RestoreJob(session, options).run(plan(session, paths), destinationDir);
}
