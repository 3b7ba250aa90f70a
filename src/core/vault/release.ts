import { IntegrityError } from '../errors.js';
import type { BlobLocation, IndexDb, Intent } from './index-db.js';
import { settleIntents } from './leftovers.js';
import { reclaimPacks } from './packs.js';
import type { Session } from './session.js';
import type { TreeNode } from './tree.js';

/** The blob files and packs that rows about to be deleted name (FORMAT.md 8.5, "Delete"). */
export interface ReleasedContents {
  /** To record in the transaction that deletes the rows, so the next open finishes removing them if we do not. */
  readonly intents: readonly Intent[];
  readonly packs: readonly Buffer[];
  /** Where each released file id's blob is (by hex id), for reads that chose the file before its row went. */
  readonly locations: ReadonlyMap<string, BlobLocation>;
}

/**
 * What deleting these nodes' rows stops naming. A damaged contents row goes with its entry; what it pointed at is
 * left alone.
 * @throws the index's error when a contents row cannot be read.
 */
export function releasedBy(db: IndexDb, nodes: Iterable<TreeNode>): ReleasedContents {
  const intents: Intent[] = [];
  const packs = new Map<string, Buffer>();
  const locations = new Map<string, BlobLocation>();
  for (const { fileId: hex } of nodes) {
    if (hex === undefined) continue;
    const id = Buffer.from(hex, 'hex');
    let location;
    try {
      location = db.blobOf(id);
    } catch (error) {
      if (error instanceof IntegrityError) continue;
      throw error;
    }
    if (location) locations.set(hex, location);
    if (location?.kind === 'pack') packs.set(location.packId.toString('hex'), location.packId);
    if (location?.kind === 'file') intents.push({ kind: 'blob', id });
  }
  for (const id of packs.values()) intents.push({ kind: 'pack', id });
  return { intents, packs: [...packs.values()], locations };
}

/**
 * The contents an add released by replacing files, from the commit that deleted their rows until no read that may
 * have chosen them runs. A restore or read running beside the add may have chosen a replaced file before that
 * commit: it still reads it, whole and as it was, where its blob stays until then (see `Vault.#settleAfterReads`).
 */
export class HeldReleases {
  readonly #unsettled: ReleasedContents[] = [];
  readonly #locations = new Map<string, BlobLocation>();
  /** How many held locations are in each pack, by hex id. */
  readonly #inPacks = new Map<string, number>();

  /** Keeps what a commit released readable, and to be settled. */
  hold(released: ReleasedContents): void {
    this.#unsettled.push(released);
    for (const [fileId, location] of released.locations) {
      this.#locations.set(fileId, location);
      if (location.kind === 'pack') {
        const pack = location.packId.toString('hex');
        this.#inPacks.set(pack, (this.#inPacks.get(pack) ?? 0) + 1);
      }
    }
  }

  /** What is to be removed, handed over once; its blobs stay readable until {@link HeldReleases.letGo}. */
  take(): ReleasedContents[] {
    return this.#unsettled.splice(0);
  }

  /** Once no read that may have chosen them runs: no read finds them any more. */
  letGo(released: readonly ReleasedContents[]): void {
    for (const each of released) {
      for (const [fileId, location] of each.locations) {
        if (!this.#locations.delete(fileId) || location.kind !== 'pack') continue;
        const pack = location.packId.toString('hex');
        const left = (this.#inPacks.get(pack) ?? 1) - 1;
        if (left > 0) this.#inPacks.set(pack, left);
        else this.#inPacks.delete(pack);
      }
    }
  }

  /** Whether a read may still be given a blob in this pack (another add's replaced file, chosen before it). */
  holdsPack(packId: Buffer): boolean {
    return this.#inPacks.has(packId.toString('hex'));
  }

  /** Where a released file id's blob is, while held. */
  locationOf(fileId: string): BlobLocation | undefined {
    return this.#locations.get(fileId);
  }
}

/**
 * After the transaction that deleted the rows committed: removes the blob files and packs no row names any more
 * and reclaims the packs' space. Alone in the vault (a delete). Never throws: the deletion itself is done and
 * durable; the next open removes what is left (through the intents), and `verify` reclaims space a failed
 * compaction left.
 */
export async function settleReleased(session: Session, released: ReleasedContents): Promise<void> {
  await removeReleased(session, [released]);
  await reclaimReleased(session, [released]);
}

/**
 * Removes the blob files and packs that these released contents leave no row naming. Safe beside reads and an add
 * once no read that could have chosen them runs: nothing can find them then. Never throws (see
 * {@link settleReleased}).
 */
export async function removeReleased(session: Session, released: readonly ReleasedContents[]): Promise<void> {
  await settleIntents(
    session.dir,
    session.db,
    released.flatMap((each) => each.intents),
    (intent) => {
      if (intent.kind !== 'pack') return 'settle';
      // A pack another add holds a replaced file in, for a read that chose it, stays (with its intent) for that
      // add's own removal. Asked as each is reached: such an add may commit while earlier files are removed.
      if (session.releases.holdsPack(intent.id)) return 'keep';
      // Only a pack about to go is closed: one still holding live blobs may be in a running read's hands.
      if (!session.db.names(intent)) session.packs.forget(intent.id);
      return 'settle';
    },
  ).catch(() => undefined);
}

/**
 * Compacts the packs these released contents left less than half used. It moves live blobs, so only with the
 * vault to itself. Never throws (see {@link settleReleased}).
 */
export async function reclaimReleased(
  session: Session,
  released: readonly ReleasedContents[],
): Promise<void> {
  await reclaimPacks(
    session,
    released.flatMap((each) => each.packs),
  ).catch(() => undefined);
}
