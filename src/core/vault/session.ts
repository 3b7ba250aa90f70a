import { timingSafeEqual } from 'node:crypto';

import { HASH_BYTES, ID_BYTES } from '../crypto/constants.js';
import { contentsSumDoesNotMatch, IndexCommitter, rowsDoNotMatch } from '../crypto/index-commitment.js';
import { RecordSealer } from '../crypto/record.js';
import type { SodiumBackend } from '../crypto/sodium.js';
import type { UnlockedKeys } from '../crypto/vault-header.js';
import {
  AlreadyExistsError,
  CofferError,
  IntegrityError,
  InvalidArgumentError,
  NotFoundError,
  ReadOnlyVaultError,
} from '../errors.js';
import { isStorableName, parseVaultPath } from '../names.js';
import { childPath } from '../../shared/vault-path.js';
import { INDEX_PROBLEM_PATH, type Problem, type VaultEntry } from '../types.js';
import { isNotRegular } from './layout.js';
import { PackReader } from './pack-reader.js';
import type { BlobLocation, IndexDb, NodeRow } from './index-db.js';
import { HeldReleases } from './release.js';
import {
  openSnapshotEntries,
  sealSnapshot,
  snapshotGeneration,
  snapshotKeyId,
  type SnapshotEntries,
  type SnapshotKeys,
} from './snapshot.js';
import { decodeNode, encodeRecord, Tree, type NodeRecord, type TreeNode } from './tree.js';

/** Damage of the index as a whole, as reported at unlock and by verify. */
function indexProblem(error: IntegrityError): Problem {
  return { path: INDEX_PROBLEM_PATH, code: error.code, message: error.message };
}

/**
 * Nodes that do not hang from the root. A walk down from the root meets each reachable node once (every node has one
 * parent), so when it meets as many as the tree holds there is nothing to find, and the set of reached ids (a quarter
 * of a second for 100,000 entries) is built only when some are missing.
 */
function unreachable(tree: Tree): TreeNode[] {
  const walk = (visit: (node: TreeNode) => void): void => {
    const folders: (string | null)[] = [null];
    for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
      for (const child of tree.children(folder)) {
        visit(child);
        if (child.type === 'folder') folders.push(child.id);
      }
    }
  };
  let count = 0;
  walk(() => count++);
  if (count === tree.size) return [];
  const reached = new Set<string>();
  walk((node) => reached.add(node.id));
  return [...tree.values()].filter((node) => !reached.has(node.id));
}

function sameNodes(before: ReadonlyMap<string, TreeNode>, tree: Tree): boolean {
  if (before.size !== tree.size) return false;
  for (const node of tree.values()) {
    const old = before.get(node.id);
    if (
      old?.type !== node.type ||
      old.name !== node.name ||
      old.parent !== node.parent ||
      old.size !== node.size ||
      old.mtime !== node.mtime ||
      old.fileId !== node.fileId ||
      old.keyId !== node.keyId
    )
      return false;
  }
  return true;
}

/** What changes made at once (create a folder, rename, move) need of an add that runs beside them. */
export interface RunningAdd {
  /** Commits what the add holds; false when it is ending (cancelled, or failed) and its uncommitted rows go. */
  commitPending(): boolean;
}

/**
 * The refusal of a change made under a header older than the vault's `what` (FORMAT.md 4.7), which names `keyIds`,
 * above every key id the header holds. `nothingDone` says what was left undone; `otherWay`, any way on besides the
 * newer header.
 */
export function olderHeaderRefusal(
  what: 'data' | 'index',
  keyIds: readonly number[],
  nothingDone: string,
  otherWay = '',
): IntegrityError {
  return new IntegrityError('unknown-key', {
    subject: `${what === 'data' ? "vault's data" : 'vault index'} (key ${keyIds.join(', ')})`,
    advice:
      `The header in use is older than the ${what}: one from before a key rotation was put back. ${nothingDone} ` +
      'Restore the newer header first (coffer.header.bak, or a header backup made after the last key rotation).' +
      otherWay,
  });
}

/**
 * Everything an unlocked vault holds in memory: keys, the record sealer and the decrypted tree. Shared by the
 * operation modules (add, restore, verify); never leaves the engine. Never log it: it holds key material.
 */
export class Session {
  readonly tree = new Tree();
  /** Index rows that failed to open at unlock: reported by verify and info, never silently dropped. */
  readonly damaged: Problem[] = [];
  readonly #sealer: RecordSealer;
  /** Packs opened for reading small files' blobs. */
  readonly packs: PackReader;
  /** What adds released by replacing files, readable until settled. */
  readonly releases = new HeldReleases();
  /** The generation of the snapshot the tree matches (loaded from, or saved), if any. */
  #snapshotGeneration: bigint | undefined;
  #snapshotProblem: Problem | undefined;
  /** Hashes rows and seals the index commitment (format 1.1); absent for format 1.0 or a commitment key it lacks. */
  #committer: IndexCommitter | undefined;
  /** Whether the commitment is missing, did not open, or the rows or snapshot did not match it (format 1.1). */
  #commitmentDamaged = false;
  /** This unlock found a format 1.0 index and brought it to 1.1 (FORMAT.md 8.2). */
  upgradedIndex = false;
  /** The add that runs, for changes made at once beside it (see {@link RunningAdd}). */
  #runningAdd: RunningAdd | undefined;
  /** How many renames and moves this session has made (see {@link Session.changeCount}). */
  #changes = 0;
  /** The count at each entry's latest rename or move, by id. */
  readonly #changedAt = new Map<string, number>();

  /**
   * @param writesHeld - set when nothing may be written though the vault is writable (a header older than the
   * vault's data, FORMAT.md 4.7): what a write throws instead, and no upgrade, snapshot, sum or compaction is made.
   */
  constructor(
    readonly dir: string,
    readonly db: IndexDb,
    readonly sodium: SodiumBackend,
    readonly keys: UnlockedKeys,
    readonly writesHeld?: IntegrityError,
  ) {
    this.#sealer = new RecordSealer(sodium, keys.keyring, keys.vaultId);
    this.packs = new PackReader(dir);
  }

  /**
   * Fills the tree: from the tree snapshot when it is current (one AEAD message), otherwise by decrypting every
   * index row. Damaged rows are recorded in {@link Session.damaged}. `snapshotRoom`: memory made ready for the
   * snapshot's plaintext (`snapshotRoom` in snapshot.ts).
   */
  load(snapshotRoom?: Buffer): void {
    this.#startCommitment();
    const sum = this.#openCommitment();
    if (!this.#loadSnapshot(sum, snapshotRoom)) this.#loadRows(sum, false);
  }

  /**
   * Brings a format 1.0 index opened writable to 1.1 (FORMAT.md section 8.2), then lets writes advance the index
   * commitment. A commitment under a key the vault lacks is reported as damage; writes are then refused.
   */
  #startCommitment(): void {
    const { keyring, vaultId } = this.keys;
    if (this.writable && !this.db.committed) {
      this.#refuseUpgradeLackingKeys();
      const committer = new IndexCommitter(this.sodium, keyring, vaultId, keyring.activeKeyId);
      try {
        this.upgradedIndex = true;
        this.db.upgradeToCommitted(committer, (row) => {
          let plaintext: Buffer;
          try {
            plaintext = this.#sealer.open({ recordId: row.id, keyId: row.key_id }, row.record);
          } catch (error) {
            if (error instanceof IntegrityError) return undefined; // stays as it is: reported as damaged
            throw error;
          }
          try {
            return this.#sealer.seal({ recordId: row.id, keyId: row.key_id, version: 1n }, plaintext);
          } finally {
            plaintext.fill(0);
          }
        });
      } finally {
        committer.wipe();
      }
    }
    if (!this.db.committed) return;
    try {
      this.#committer = new IndexCommitter(
        this.sodium,
        keyring,
        vaultId,
        this.db.commitmentKeyId() ?? keyring.activeKeyId,
      );
    } catch (error) {
      if (!(error instanceof IntegrityError)) throw error;
      this.#commitmentProblem(error);
      return;
    }
    this.db.attachCommitter(this.#committer);
  }

  /**
   * Refuses to bring a format 1.0 index to 1.1 while it names a key id the header lacks (a header older than the
   * index): the upgrade seals every record again under the 1.1 label, and a record it cannot open would stay sealed
   * under the 1.0 label in a 1.1 index, never to open again, even with the right header (FORMAT.md 8.2).
   * @throws {@link IntegrityError} (`unknown-key`) naming the key ids; nothing is written.
   */
  #refuseUpgradeLackingKeys(): void {
    const lacking = this.keys.keyring.lacking(this.db.keyIdsNamed());
    if (lacking.length === 0) return;
    throw new IntegrityError('unknown-key', {
      subject: `vault index (key ${lacking.join(', ')})`,
      advice:
        'The header is older than the index, so the index is not upgraded to format 1.1 and stays as it was. ' +
        'Put back the newer header ("coffer header import" with a header exported after the last key rotation).',
    });
  }

  /** The sealed commitment's sum at the current generation; a failure is recorded as damage of the index. */
  #openCommitment(): Buffer | undefined {
    if (!this.#committer) return undefined;
    try {
      return this.db.openCommitment(this.#committer);
    } catch (error) {
      if (!(error instanceof IntegrityError)) throw error;
      this.#commitmentProblem(error);
      return undefined;
    }
  }

  #commitmentProblem(error: IntegrityError): void {
    this.#commitmentDamaged = true;
    this.damaged.push(indexProblem(error));
  }

  /** Whether unlock or the last `verify` found the index commitment damaged or not matching (format 1.1). */
  get commitmentDamaged(): boolean {
    return this.#commitmentDamaged;
  }

  /**
   * Recomputes the commitment from the rows (FORMAT.md 8.7) and records damage when it is not `sum`; `nodesSum` is
   * the nodes rows' part, when they were added up as they were read. An unlock takes the contents rows' part from
   * `meta.contents_sum` (it never uses those rows); `verify` adds them up, and checks that sum against them.
   */
  #checkRows(sum: Buffer | undefined, nodesSum: Buffer | undefined, forVerify: boolean): void {
    const committer = this.#committer;
    if (!committer || !sum) return;
    let stored: Buffer | undefined;
    let unopened = false;
    try {
      stored = this.db.openContentsSum(committer);
    } catch (error) {
      if (!(error instanceof IntegrityError)) throw error;
      this.#commitmentProblem(error);
      unopened = true;
    }
    // Absent (an index written before it) or failing to open, the contents rows are added up instead.
    const rows = forVerify || !stored ? this.db.contentsRowsSum(committer) : undefined;
    if (stored && rows && !timingSafeEqual(stored, rows)) this.#commitmentProblem(contentsSumDoesNotMatch());
    if (!timingSafeEqual(this.db.computeSum(committer, { nodes: nodesSum, contents: rows ?? stored }), sum)) {
      this.#commitmentProblem(rowsDoNotMatch());
    } else if (!stored && !unopened && rows && this.writable) {
      // The whole sum is right, so its contents part is too: stored now, the next unlock need not add it up.
      this.db.putContentsSum(committer.sealContentsSum(rows));
    }
  }

  /**
   * Stores the commitment of the rows as they are now (`verify --repair`, after reporting that they differed), so
   * that writes work again.
   * @returns whether there was anything to store.
   * @throws {@link IntegrityError} (`unknown-key`), nothing written, while the index names a key id above every one
   * the header holds (FORMAT.md 8.7): sealed under this older header's key, the commitment would then be read by no
   * header, and the newer one could not be imported.
   */
  recommit(): boolean {
    this.requireWritable();
    if (!this.db.committed) return false;
    const above = this.keys.keyring.above(this.db.keyIdsNamed());
    if (above.length > 0) throw olderHeaderRefusal('index', above, 'Nothing was repaired.');
    const committer = new IndexCommitter(
      this.sodium,
      this.keys.keyring,
      this.keys.vaultId,
      this.keys.keyring.activeKeyId,
    );
    this.#committer?.wipe();
    this.#committer = committer;
    this.db.attachCommitter(committer);
    this.db.recommit(committer);
    this.#commitmentDamaged = false;
    return true;
  }

  /**
   * Moves the index commitment to the active key, when it is under another (re-encryption, FORMAT.md section 11),
   * after checking the rows against it under the old one.
   * @returns whether it was moved.
   * @throws {@link IntegrityError} (nothing changed) when the commitment is damaged or the rows do not match it.
   */
  rekeyCommitment(): boolean {
    const activeKeyId = this.keys.keyring.activeKeyId;
    const from = this.#committer;
    if (!this.db.committed || this.db.commitmentKeyId() === activeKeyId) return false;
    if (!from)
      throw new IntegrityError('unknown-key', { subject: 'vault index as a whole (its commitment)' });
    const to = new IndexCommitter(this.sodium, this.keys.keyring, this.keys.vaultId, activeKeyId);
    try {
      this.db.rekeyCommitment(from, to);
    } catch (error) {
      to.wipe();
      throw error;
    }
    from.wipe();
    this.#committer = to;
    this.db.attachCommitter(to);
    return true;
  }

  /**
   * Rebuilds the tree from the index rows alone, for `verify`, which must check every row rather than trust the
   * snapshot.
   * @returns problems with the snapshot: one that failed to open, or one whose tree differs from the rows.
   */
  reloadFromRows(): Problem[] {
    const before = new Map([...this.tree.values()].map((node) => [node.id, node]));
    const fromSnapshot = this.#snapshotGeneration !== undefined;
    this.tree.clear();
    this.damaged.length = 0;
    this.#snapshotGeneration = undefined;
    this.#commitmentDamaged = false;
    if (this.db.committed && !this.#committer) this.#startCommitment();
    const sum = this.#openCommitment();
    this.#loadRows(sum, true);
    const problems = this.#snapshotProblem ? [this.#snapshotProblem] : [];
    this.#snapshotProblem = undefined;
    if (fromSnapshot && !sameNodes(before, this.tree)) {
      problems.push({
        path: INDEX_PROBLEM_PATH,
        code: 'INTEGRITY',
        message:
          'The cached tree in the index did not match its rows; it has been discarded and will be rebuilt.',
      });
    }
    if (problems.length > 0 && this.writable) this.db.deleteSnapshot();
    return problems;
  }

  /**
   * Stores a snapshot of the tree when the stored one is out of date, so the next unlock is fast. Only a healthy
   * tree that matches the index row for row is stored.
   */
  saveSnapshot(): void {
    if (!this.writable || this.damaged.length > 0) return;
    const generation = this.db.generation();
    if (this.#snapshotGeneration === generation || this.tree.size !== this.db.nodeCount()) return;
    // Format 1.1: the snapshot repeats the commitment's sum, so it is used only beside that commitment.
    const sum = this.db.committed && this.#committer ? this.db.openCommitment(this.#committer) : undefined;
    if (this.db.committed && !sum) return;
    this.db.putSnapshot(sealSnapshot(this.#snapshotKeys(), [...this.tree.values()], generation, sum));
    this.#snapshotGeneration = generation;
  }

  /**
   * Stores the tree snapshot anew under the active key when the stored one is under another (re-encryption); one
   * that cannot be stored (a damaged tree) is deleted instead, so no snapshot names an older key.
   */
  resealSnapshot(): void {
    const stored = this.db.snapshot();
    const keyId = stored && snapshotKeyId(stored);
    if (keyId === undefined || keyId === this.keys.keyring.activeKeyId) return;
    this.db.deleteSnapshot();
    this.#snapshotGeneration = undefined;
    this.saveSnapshot();
  }

  #snapshotKeys(): SnapshotKeys {
    return { sodium: this.sodium, keyring: this.keys.keyring, vaultId: this.keys.vaultId };
  }

  /**
   * Fills the tree from the snapshot when it is current: the root's entries at once, the rest when first needed
   * ({@link Tree.deferAllButRoot}), so the first rows of a large vault do not wait for all of it; every check of
   * the whole snapshot is made here. In format 1.1 only a snapshot that repeats the commitment's `sum` is used
   * (FORMAT.md 8.6).
   * @returns whether the snapshot was used; else the tree is left empty, for the rows to be read.
   */
  #loadSnapshot(sum: Buffer | undefined, room: Buffer | undefined): boolean {
    const stored = this.db.currentSnapshot();
    if (!stored) return false;
    if (this.db.committed && !sum) return false;
    let entries: SnapshotEntries | undefined;
    try {
      entries = openSnapshotEntries(this.#snapshotKeys(), stored, room);
      if ((entries.sum === undefined) === this.db.committed)
        throw new IntegrityError('malformed', { subject: 'tree snapshot in the index' });
      if (sum && entries.sum && !timingSafeEqual(entries.sum, sum)) {
        // Same generation, another state: a snapshot of another copy of the index, or the commitment's.
        this.#commitmentProblem(
          new IntegrityError('tampered', {
            subject: 'tree snapshot in the index (it does not match the index commitment)',
            advice: 'The entries were read from the index rows instead. Run "coffer verify" for details.',
          }),
        );
        entries.wipe();
        return false;
      }
      // Stale, or rows deleted without a write: read the rows, which says what is missing.
      if (entries.count !== this.db.nodeCount()) {
        entries.wipe();
        return false;
      }
      for (let at = 0; at < entries.count; at++) if (entries.isAtRoot(at)) this.tree.insert(entries.node(at));
      const opened = entries;
      this.tree.deferAllButRoot(
        () => {
          try {
            // Cannot fail: the snapshot's names and ids were checked as a whole when it was opened.
            for (let at = 0; at < opened.count; at++)
              if (!opened.isAtRoot(at)) this.tree.insert(opened.node(at));
          } finally {
            opened.wipe();
          }
        },
        () => {
          opened.wipe();
        },
      );
    } catch (error) {
      entries?.wipe();
      this.tree.clear();
      if (!(error instanceof CofferError)) throw error;
      // Not a loss of data (the rows are read instead), but verify reports it: a current snapshot that does not
      // open was damaged or forged.
      this.#snapshotProblem = { path: INDEX_PROBLEM_PATH, code: error.code, message: error.message };
      return false;
    }
    this.#snapshotGeneration = snapshotGeneration(stored);
    return true;
  }

  /**
   * Decrypts every index row into the tree, and checks the rows against the commitment's `sum` (format 1.1), all of
   * them `forVerify`, else the contents rows through `meta.contents_sum`. Damaged rows are recorded in
   * {@link Session.damaged}.
   */
  #loadRows(sum: Buffer | undefined, forVerify: boolean): void {
    const pending: TreeNode[] = [];
    // The nodes rows are added up for the commitment as they are read, not read a second time.
    const counting =
      this.#committer && sum ? { committer: this.#committer, into: Buffer.alloc(HASH_BYTES) } : undefined;
    const rows = this.db.nodes((id, error) => {
      this.damaged.push({ path: `(index row ${id})`, code: error.code, message: error.message });
    }, counting);
    for (const row of rows) {
      const id = row.id.toString('hex');
      try {
        const node = decodeNode(
          this.#sealer.open({ recordId: row.id, keyId: row.key_id, version: row.version }, row.record),
          id,
          row.key_id,
        );
        // A writer only stores checked names; anything else (an unpaired surrogate from a JSON escape too) was
        // forged, and must not reach a listing or a restore.
        if (!isStorableName(node.name)) {
          throw new IntegrityError('malformed', { subject: 'metadata record', fileId: id });
        }
        pending.push(node);
      } catch (error) {
        if (!(error instanceof IntegrityError)) throw error;
        this.damaged.push({ path: `(index row ${id})`, code: error.code, message: error.message });
      }
    }
    for (const node of pending) {
      try {
        this.tree.insert(node);
      } catch (error) {
        if (!(error instanceof AlreadyExistsError)) throw error;
        // Rows come in id order: the entry with the lower id stays (FORMAT.md 8.3, "Unique names").
        this.damaged.push({
          path: `(index row ${node.id})`,
          code: 'INTEGRITY',
          message:
            `"${node.name}" has the same name as another entry in its folder, ignoring case, so it is left out ` +
            '(damaged or tampered index, or one written where Unicode maps letter case differently).',
        });
      }
    }
    for (const node of unreachable(this.tree)) {
      this.damaged.push({
        path: `(index row ${node.id})`,
        code: 'INTEGRITY',
        message: `"${node.name}" has no valid parent folder in the index (damaged or tampered index).`,
      });
    }
    // Last, so that what is wrong with the rows themselves is reported first.
    this.#checkRows(sum, counting?.into, forVerify);
  }

  /**
   * Tells changes made at once about the add that runs (adds run one at a time).
   * @returns what ends that, once the add has stopped.
   */
  attachAdd(add: RunningAdd): () => void {
    this.#runningAdd = add;
    return () => {
      if (this.#runningAdd === add) this.#runningAdd = undefined;
    };
  }

  /**
   * Has the add that runs, if any, commit the rows it has put in the tree and not committed yet, so that a change
   * made at once (create a folder, rename, move) meets only committed rows: its new version of a row the add has
   * yet to commit would clash with that commit, and a row under such a folder would name a parent the index might
   * never hold if the add is then cancelled or the power fails.
   * @returns false when the add is ending (cancelled, or failed): the change is refused until it has.
   * @throws what the add's commit throws (an {@link IoError}; the add then ends failed with it too).
   */
  commitPendingRows(): boolean {
    return this.#runningAdd?.commitPending() ?? true;
  }

  /**
   * Notes entries renamed or moved: an add asked to replace the names it found taken when it was called replaces
   * none of those that came into its way since (see {@link Session.changedSince}).
   */
  noteMoved(ids: readonly string[]): void {
    this.#changes++;
    for (const id of ids) this.#changedAt.set(id, this.#changes);
  }

  /** How many renames and moves this session has made so far: what {@link Session.changedSince} compares with. */
  get changeCount(): number {
    return this.#changes;
  }

  /** Whether the entry `id` was renamed or moved after {@link Session.changeCount} was `count`. */
  changedSince(id: string, count: number): boolean {
    return (this.#changedAt.get(id) ?? 0) > count;
  }

  /** Whether this session may write the vault: opened writable, and no write held back ({@link writesHeld}). */
  get writable(): boolean {
    return !this.db.readOnly && this.writesHeld === undefined;
  }

  /**
   * @throws {@link ReadOnlyVaultError} when the vault cannot be written; {@link Session.writesHeld} when writes are
   * held back.
   */
  requireWritable(): void {
    if (this.writesHeld) throw this.writesHeld;
    if (this.db.readOnly) throw new ReadOnlyVaultError();
  }

  newId(): Buffer {
    return this.sodium.randomBytes(ID_BYTES);
  }

  /**
   * Seals a record for a row at `version` (FORMAT.md section 7), under the vault's active key: 1 for a new row,
   * {@link Session.nextVersion} for a change to an existing one.
   */
  seal(id: Buffer, record: NodeRecord, version = 1n): NodeRow & { node: TreeNode } {
    const keyId = this.keys.keyring.activeKeyId;
    const sealed = this.#sealer.seal({ recordId: id, keyId, version }, encodeRecord(record));
    return { id, key_id: keyId, record: sealed, version, node: { ...record, id: id.toString('hex'), keyId } };
  }

  /** The version a new record of an existing row is sealed at: the stored one plus 1. */
  nextVersion(id: Buffer): bigint {
    return this.db.nodeVersion(id) + 1n;
  }

  /** The node at a vault path (`null` for the root). */
  resolve(path: string): TreeNode | null {
    return this.tree.resolve(parseVaultPath(path));
  }

  /**
   * Finds what `paths` name now, for an operation that may wait for its turn: then it gets what it was given, at
   * the paths those have by that time (renamed or moved meanwhile), not whatever has taken the old paths since.
   * @returns what gives the paths as they are when it is called.
   * @throws {@link NotFoundError} for a path that does not exist; so does what it returns, for what is no longer
   * in the vault (deleted, or replaced by an add, since).
   */
  findAgainLater(paths: readonly string[]): () => string[] {
    const chosen = paths.map((path) => ({ path, node: this.resolve(path) }));
    return () =>
      chosen.map(({ path, node }) => {
        if (node === null) return '/';
        const now = this.tree.get(node.id);
        if (!now)
          throw new NotFoundError(
            `"${path}" was deleted or replaced after it was chosen, so nothing was done. Choose again from what is in the vault now.`,
          );
        return this.tree.pathOf(now);
      });
  }

  /**
   * The folder at a vault path (`null` for the root).
   * @throws {@link NotFoundError} when it does not exist; {@link InvalidArgumentError} when it is a file.
   */
  resolveFolder(path: string): TreeNode | null {
    const folder = this.resolve(path);
    if (folder && folder.type !== 'folder')
      throw new InvalidArgumentError(`"${path}" is a file, not a folder.`);
    return folder;
  }

  /**
   * The node as the contract lists it. `folderPath`, the path of the node's folder when the caller has it, spares
   * walking up the tree for each of a folder's entries (a third of listing 10,000 of them).
   */
  entry(node: TreeNode, folderPath?: string): VaultEntry {
    return {
      path: folderPath === undefined ? this.tree.pathOf(node) : childPath(folderPath, node.name),
      name: node.name,
      type: node.type,
      size: node.size,
      mtime: node.mtime,
    };
  }

  /**
   * Where a file's blob is: as its contents row says, or, for a file an add replaced after a read chose it, where
   * it is kept until settled ({@link HeldReleases}).
   * @throws {@link IntegrityError} when the row is not what a writer stores.
   */
  blobOf(fileId: Buffer): BlobLocation | undefined {
    return this.db.blobOf(fileId) ?? this.releases.locationOf(fileId.toString('hex'));
  }

  /** The error for a file whose stored contents are gone (no index row, or no blob file). */
  missingContents(node: TreeNode): IntegrityError {
    return new IntegrityError('missing', {
      subject: `stored contents of "${this.tree.pathOf(node)}"`,
      fileId: node.fileId ?? '',
    });
  }

  /**
   * Maps "the blob or pack file is not there" to {@link Session.missingContents}, and "it is a symbolic link or not
   * a regular file" (never read, FORMAT.md section 8.1) to an {@link IntegrityError}; other errors pass through.
   */
  missingBlob(node: TreeNode, error: unknown): unknown {
    if (isNotRegular(error)) {
      return new IntegrityError('malformed', {
        subject: `stored contents of "${this.tree.pathOf(node)}" (a symbolic link or not a regular file, which Coffer does not read)`,
        fileId: node.fileId ?? '',
      });
    }
    return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT'
      ? this.missingContents(node)
      : error;
  }

  /**
   * Wipes the KEK, the DEKs and every subkey derived from them (those operations still hold among them): from here
   * on every use of a key throws {@link VaultLockedError}. Safe while operations run, unlike {@link Session.wipe}.
   */
  wipeKeys(): void {
    this.#sealer.wipe();
    this.#committer?.wipe();
    this.keys.wipe();
  }

  /** Wipes keys, forgets every decrypted record and closes the packs; only once no operation runs. */
  wipe(): void {
    this.packs.close();
    this.wipeKeys();
    this.tree.clear();
    this.damaged.length = 0;
    this.#snapshotGeneration = undefined;
  }
}
