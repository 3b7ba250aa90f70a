import { IntegrityError } from '../errors.js';

import { writeFileAtomicSync } from '../publish.js';
import type { Intent, PackedBlob } from './index-db.js';
import { asIoError } from './durable.js';
import { packPaths, readStoredPack } from './layout.js';
import { settleIntents } from './leftovers.js';
import { holdsBlob } from './pack-walk.js';
import type { Session } from './session.js';

/**
 * Reclaims the space of deleted files' blobs in these packs (FORMAT.md section 8.4): a pack whose rows name less
 * than half of its bytes is compacted into a new pack. A pack no row names is never removed here: only through an
 * intent, which the delete that stopped naming it recorded (section 8.5).
 * @throws {@link IoError} (or the index's error) when a compaction fails; the vault is unchanged then (the new
 * pack, if written, is removed now or, through its intent, at the next open).
 */
export async function reclaimPacks(session: Session, packIds: Iterable<Buffer>): Promise<void> {
  for (const packId of packIds) {
    // One pack at a time, synchronously (a read, a write and an fsync of a few MiB), then the event loop runs:
    // deleting a large folder must not freeze a UI.
    await new Promise((resolve) => setImmediate(resolve));
    let live;
    try {
      live = session.db.packContents(packId);
    } catch (error) {
      // A damaged row may still name bytes in this pack: keep all of it; verify reports the row.
      if (error instanceof IntegrityError) continue;
      throw error;
    }
    if (live.length === 0) continue;
    // Never through a link or from anything but a regular file: such a pack, like a missing one, is damage for
    // verify to report, not space to reclaim.
    const liveBytes = live.reduce((sum, blob) => sum + blob.length, 0);
    const pack = readStoredPack(session.packs.path(packId), (size) => 2 * liveBytes < size);
    if (!pack) continue;
    // Rows edited outside Coffer (behind a current tree snapshot, unlock does not read them) may point at another
    // file's bytes, or at part of a blob: copying by them and removing the pack would lose what a trusted copy of
    // the index names. Such a pack is kept whole, for verify to report.
    if (!live.every((blob) => holdsBlob(session, pack, blob))) continue;
    await compact(session, packId, pack, live);
  }
}

/**
 * Copies a pack's live blobs (unchanged) into a new pack, points their rows at it in one transaction, then removes
 * the old pack. Intents make each step recoverable: the new pack's before it is written, the old pack's in the
 * transaction that stops naming it.
 */
async function compact(
  session: Session,
  oldId: Buffer,
  pack: Buffer,
  live: readonly (PackedBlob & { fileId: Buffer })[],
): Promise<void> {
  const newId = session.newId();
  const written: Intent = { kind: 'pack', id: newId };
  const released: Intent = { kind: 'pack', id: oldId };
  const paths = packPaths(session.dir, newId);
  const moved: (PackedBlob & { fileId: Buffer })[] = [];
  let offset = 0;
  for (const blob of live) {
    moved.push({ fileId: blob.fileId, packId: newId, offset, length: blob.length });
    offset += blob.length;
  }
  session.db.recordIntents([written]);
  try {
    writeFileAtomicSync(
      paths,
      Buffer.concat(live.map((blob) => pack.subarray(blob.offset, blob.offset + blob.length))),
    );
    session.db.transaction(() => {
      for (const blob of moved) session.db.moveBlob(blob.fileId, blob);
      session.db.clearIntents([written]);
      session.db.recordIntents([released]);
    });
  } catch (error) {
    await settleIntents(session.dir, session.db, [written]).catch(() => undefined);
    throw asIoError(error, `Could not write a compacted pack in "${session.dir}"`);
  }
  session.packs.forget(oldId);
  await settleIntents(session.dir, session.db, [released]);
}
