import { IndexCommitter } from '../../src/core/crypto/index-commitment.js';
import { deriveSubkey } from '../../src/core/crypto/keys.js';
import { encodeSnapshot, sealSnapshot } from '../../src/core/vault/snapshot.js';
import { decodeNode, type TreeNode } from '../../src/core/vault/tree.js';
import { nativeSodium } from './backends.js';
import { withRecords } from './records.js';

/**
 * Stores a tree snapshot of a closed vault's choosing, sealed under its own keys at the index's current generation,
 * as whoever holds the passphrase could (FORMAT.md section 8.6). `build` gets the tree as its rows say and returns
 * the nodes to seal (through Coffer's own encoder), or `edit` changes their encoded plaintext, which is then sealed
 * as the format says.
 */
export async function forgeSnapshot(
  dir: string,
  build: (nodes: TreeNode[]) => TreeNode[],
  edit?: (plaintext: Buffer) => void,
): Promise<void> {
  await withRecords(dir, ({ keys, db, rows }) => {
    const nodes = rows.map((row): TreeNode => {
      const id = row.id.toString('hex');
      return decodeNode(row.plaintext, id, row.key_id);
    });
    const stored = db.prepare("SELECT value FROM meta WHERE key = 'generation'").pluck().get() as
      Buffer | undefined;
    const generation = stored?.readBigUInt64LE(0) ?? 0n;
    const built = build(nodes);
    // Format 1.1: the snapshot carries the index commitment's sum at that generation (FORMAT.md 8.6, 8.7).
    const commitment = db.prepare("SELECT value FROM meta WHERE key = 'index_commitment'").pluck().get() as
      Buffer | undefined;
    let sum: Buffer | undefined;
    if (commitment) {
      const committer = new IndexCommitter(
        nativeSodium,
        keys.keyring,
        keys.vaultId,
        commitment.readUInt32LE(0),
      );
      try {
        sum = committer.open(commitment, generation);
      } finally {
        committer.wipe();
      }
    }
    let sealed: Buffer;
    if (edit) {
      const plaintext = encodeSnapshot(built, sum);
      edit(plaintext);
      // u32 key id ‖ u64 generation ‖ nonce ‖ AEAD(subkey, nonce, AAD, plaintext), AAD = label ‖ vault id ‖ both.
      const keyId = keys.keyring.activeKeyId;
      const dek = keys.keyring.find(keyId);
      if (!dek) throw new Error('forgeSnapshot: no active key');
      const prefix = Buffer.alloc(12);
      prefix.writeUInt32LE(keyId, 0);
      prefix.writeBigUInt64LE(generation, 4);
      const subkey = deriveSubkey(nativeSodium, dek, 'coffer/v1 snapshot-key', keys.vaultId);
      const nonce = nativeSodium.randomBytes(24);
      const aad = Buffer.concat([Buffer.from('coffer/v1 snapshot'), keys.vaultId, prefix]);
      sealed = Buffer.concat([prefix, nonce, nativeSodium.aeadEncrypt(plaintext, aad, nonce, subkey.bytes)]);
      subkey.wipe();
    } else {
      sealed = sealSnapshot(
        { sodium: nativeSodium, keyring: keys.keyring, vaultId: keys.vaultId },
        built,
        generation,
        sum,
      );
    }
    db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('tree_snapshot', ?)").run(sealed);
  });
}
