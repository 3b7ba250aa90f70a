import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

import { CancelledError, CofferError, VaultLockedError } from '../errors.js';
import type { Problem, VerifyOptions, VerifyReport } from '../types.js';
import type { IndexDb } from './index-db.js';
import { BLOB_DIR, PACK_DIR } from './layout.js';
import { reclaimPacks } from './packs.js';
import { ByteSteps } from './progress.js';
import { authenticateLastChunk, decryptFile } from './read.js';
import type { Session } from './session.js';

const HEX_ID = /^[0-9a-f]{32}$/;
const PACK_NAME = /^([0-9a-f]{32})\.pack$/;

/**
 * Removes blob files and packs no index row refers to: what a crash between writing them and committing their rows
 * leaves. Runs only while this process holds the vault lock, so no add is in flight.
 * @returns how many were removed.
 */
export async function sweepOrphans(vaultDir: string, db: IndexDb): Promise<number> {
  let removed = 0;
  const packs = join(vaultDir, PACK_DIR);
  for (const name of await readdir(packs).catch(() => [] as string[])) {
    // Only names Coffer writes are touched; anything else in the folder is left for the user to see.
    const packId = PACK_NAME.exec(name)?.[1];
    if (packId === undefined || db.hasPack(Buffer.from(packId, 'hex'))) continue;
    await rm(join(packs, name), { force: true });
    removed++;
  }
  const root = join(vaultDir, BLOB_DIR);
  for (const shard of await readdir(root).catch(() => [] as string[])) {
    for (const name of await readdir(join(root, shard)).catch(() => [] as string[])) {
      // Only names Coffer writes are touched; anything else in the folder is left for the user to see.
      if (HEX_ID.test(name) ? db.hasExternalBlob(Buffer.from(name, 'hex')) : !name.endsWith('.tmp')) continue;
      await rm(join(root, shard, name), { force: true });
      removed++;
    }
  }
  return removed;
}

/**
 * Checks the vault: SQLite's integrity check, every index row decrypts and has a parent, every file's contents
 * exist and have the size the index records (by authenticating the chunk that holds the last byte), orphans are
 * swept and the space of deleted files' blobs in packs reclaimed; with `readData`, every chunk of every file is
 * authenticated.
 */
export async function verifyVault(session: Session, options: VerifyOptions): Promise<VerifyReport> {
  const snapshotProblems = session.reloadFromRows();
  const problems: Problem[] = [...session.damaged, ...snapshotProblems];
  for (const line of session.db.integrityCheck()) {
    if (line !== 'ok')
      problems.push({ path: '(index)', code: 'INTEGRITY', message: `SQLite integrity check: ${line}` });
  }
  const files = [...session.tree.values()].filter((node) => node.type === 'file');
  const bytesTotal = files.reduce((sum, node) => sum + (options.readData === true ? node.size : 0), 0);
  let filesChecked = 0;
  /** Bytes that authenticated, for the report. */
  let bytesChecked = 0;
  /** Bytes read so far, damaged ones too, for the progress. */
  let bytesDone = 0;
  const report = (bytes: number, current?: string): void => {
    options.onProgress?.({
      filesDone: filesChecked,
      filesTotal: files.length,
      bytesDone: bytes,
      bytesTotal,
      ...(current === undefined ? {} : { current }),
    });
  };
  for (const node of files) {
    if (options.signal?.aborted) throw new CancelledError();
    const path = session.tree.pathOf(node);
    report(bytesDone, path);
    try {
      if (options.readData === true || node.size === 0) {
        const steps = new ByteSteps(() => {
          report(bytesDone + steps.reported, path);
        });
        await decryptFile(session, node, 'discard', {
          ...(options.signal ? { signal: options.signal } : {}),
          onBytes: (bytes) => {
            steps.add(bytes);
          },
        });
        bytesChecked += node.size;
      } else {
        await authenticateLastChunk(session, node);
      }
    } catch (error) {
      // A lock stops verify: the wiped keys say so, and that is no problem with this file.
      if (
        !(error instanceof CofferError) ||
        error instanceof CancelledError ||
        error instanceof VaultLockedError
      )
        throw error;
      problems.push({ path, code: error.code, message: error.message });
    }
    if (options.readData === true) bytesDone += node.size;
    filesChecked++;
  }
  report(bytesDone);
  let orphansRemoved = 0;
  if (!session.db.readOnly) {
    orphansRemoved = await sweepOrphans(session.dir, session.db);
    await reclaimPacks(session, session.db.packIds());
  }
  options.onProgress?.({
    filesDone: filesChecked,
    filesTotal: files.length,
    bytesDone: bytesChecked,
    bytesTotal,
  });
  return { ok: problems.length === 0, filesChecked, bytesChecked, problems, orphansRemoved };
}
