import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import { CancelledError, CofferError } from '../errors.js';
import type { Problem, VerifyOptions, VerifyReport } from '../types.js';
import type { IndexDb } from './index-db.js';
import { BLOB_DIR } from './layout.js';
import { decryptFile, readRange } from './read.js';
import type { Session } from './session.js';

const HEX_ID = /^[0-9a-f]{32}$/;

/**
 * Removes blob files no index row refers to: what a crash between writing a blob and committing its row leaves.
 * Runs only while this process holds the vault lock, so no add is in flight.
 * @returns how many were removed.
 */
export async function sweepOrphans(vaultDir: string, db: IndexDb): Promise<number> {
  let removed = 0;
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
 * swept; with `readData`, every chunk of every file is authenticated.
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
  let bytesChecked = 0;
  for (const node of files) {
    if (options.signal?.aborted) throw new CancelledError();
    const path = session.tree.pathOf(node);
    options.onProgress?.({
      filesDone: filesChecked,
      filesTotal: files.length,
      bytesDone: bytesChecked,
      bytesTotal,
      current: path,
    });
    try {
      if (options.readData === true || node.size === 0) {
        await decryptFile(session, node, 'discard', options.signal);
        bytesChecked += node.size;
      } else {
        // Authenticating the chunk that holds the last byte proves the blob exists, belongs to this file and
        // has the size its record claims.
        await pipeline(
          readRange(session, node, { start: node.size - 1, end: node.size - 1 }),
          new Writable({
            write: (_chunk, _encoding, done) => {
              done();
            },
          }),
        );
      }
    } catch (error) {
      if (!(error instanceof CofferError) || error instanceof CancelledError) throw error;
      problems.push({ path, code: error.code, message: error.message });
    }
    filesChecked++;
  }
  const orphansRemoved = session.db.readOnly ? 0 : await sweepOrphans(session.dir, session.db);
  options.onProgress?.({
    filesDone: filesChecked,
    filesTotal: files.length,
    bytesDone: bytesChecked,
    bytesTotal,
  });
  return { ok: problems.length === 0, filesChecked, bytesChecked, problems, orphansRemoved };
}
