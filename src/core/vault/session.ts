import { ID_BYTES } from '../crypto/constants.js';
import { RecordSealer } from '../crypto/record.js';
import type { SodiumBackend } from '../crypto/sodium.js';
import type { UnlockedKeys } from '../crypto/vault-header.js';
import { IntegrityError, InvalidArgumentError, InvalidNameError, ReadOnlyVaultError } from '../errors.js';
import { checkName, parseVaultPath } from '../names.js';
import type { Problem, VaultEntry } from '../types.js';
import type { IndexDb, NodeRow } from './index-db.js';
import { decodeRecord, encodeRecord, Tree, type NodeRecord, type TreeNode } from './tree.js';

/**
 * Everything an unlocked vault holds in memory: keys, the record sealer and the decrypted tree. Shared by the
 * operation modules (add, restore, verify); never leaves the engine. Never log it: it holds key material.
 */
export class Session {
  readonly tree = new Tree();
  /** Index rows that failed to open at unlock: reported by verify and info, never silently dropped. */
  readonly damaged: Problem[] = [];
  readonly #sealer: RecordSealer;

  constructor(
    readonly dir: string,
    readonly db: IndexDb,
    readonly sodium: SodiumBackend,
    readonly keys: UnlockedKeys,
  ) {
    this.#sealer = new RecordSealer(sodium, keys.keyring, keys.vaultId);
  }

  /** Decrypts every index row into the tree. Damaged rows are recorded in {@link Session.damaged}. */
  load(): void {
    const pending: TreeNode[] = [];
    for (const row of this.db.nodes()) {
      const id = row.id.toString('hex');
      try {
        const record = decodeRecord(
          this.#sealer.open({ recordId: row.id, keyId: row.key_id }, row.record),
          id,
        );
        // A writer only stores checked names; anything else was forged, and must not reach a listing or a restore.
        if (checkName(record.name) !== record.name) {
          throw new IntegrityError('malformed', { subject: 'metadata record', fileId: id });
        }
        pending.push({ ...record, id, keyId: row.key_id });
      } catch (error) {
        if (!(error instanceof IntegrityError) && !(error instanceof InvalidNameError)) throw error;
        this.damaged.push({ path: `(index row ${id})`, code: error.code, message: error.message });
      }
    }
    for (const node of pending) {
      try {
        this.tree.insert(node);
      } catch (error) {
        this.damaged.push({ path: node.name, code: 'INTEGRITY', message: (error as Error).message });
      }
    }
    // Every entry must hang from the root; a walk down from it reaches each healthy one once (linear time).
    const reached = new Set<string>();
    const folders: (string | null)[] = [null];
    for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
      for (const child of this.tree.childrenOf(folder)) {
        reached.add(child.id);
        if (child.type === 'folder') folders.push(child.id);
      }
    }
    for (const node of this.tree.values()) {
      if (!reached.has(node.id)) {
        this.damaged.push({
          path: `(index row ${node.id})`,
          code: 'INTEGRITY',
          message: `"${node.name}" has no valid parent folder in the index (damaged or tampered index).`,
        });
      }
    }
  }

  /** @throws {@link ReadOnlyVaultError} when the vault cannot be written. */
  requireWritable(): void {
    if (this.db.readOnly) throw new ReadOnlyVaultError();
  }

  newId(): Buffer {
    return this.sodium.randomBytes(ID_BYTES);
  }

  /** Seals a record for a row, under the vault's active key. */
  seal(id: Buffer, record: NodeRecord): NodeRow & { node: TreeNode } {
    const keyId = this.keys.keyring.activeKeyId;
    const sealed = this.#sealer.seal({ recordId: id, keyId }, encodeRecord(record));
    return { id, key_id: keyId, record: sealed, node: { ...record, id: id.toString('hex'), keyId } };
  }

  /** The node at a vault path (`null` for the root). */
  resolve(path: string): TreeNode | null {
    return this.tree.resolve(parseVaultPath(path));
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

  entry(node: TreeNode): VaultEntry {
    return {
      path: this.tree.pathOf(node),
      name: node.name,
      type: node.type,
      size: node.size,
      mtime: node.mtime,
    };
  }

  /** The error for a file whose stored contents are gone (no index row, or no blob file). */
  missingContents(node: TreeNode): IntegrityError {
    return new IntegrityError('missing', {
      subject: `stored contents of "${this.tree.pathOf(node)}"`,
      fileId: node.fileId ?? '',
    });
  }

  /** Maps "the blob file is not there" to {@link Session.missingContents}; other errors pass through. */
  missingBlob(node: TreeNode, error: unknown): unknown {
    return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT'
      ? this.missingContents(node)
      : error;
  }

  /** Wipes keys and forgets every decrypted record. */
  wipe(): void {
    this.#sealer.wipe();
    this.keys.wipe();
    this.tree.clear();
    this.damaged.length = 0;
  }
}
