import { cpSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';

import { Vault, type VaultEntry } from '../../src/core/index.js';
import { IndexDb } from '../../src/core/vault/index-db.js';
import { nativeSodium } from '../helpers/backends.js';
import { editIndex, editIndexAsWriter } from '../helpers/index-format.js';
import { collect, newVault, passphrase, track, writeTree } from '../helpers/vault.js';

function meta(db: Database.Database, key: string): Buffer | undefined {
  return (db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: Buffer } | undefined)
    ?.value;
}

function setMeta(db: Database.Database, key: string, value: Buffer): void {
  db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(key, value);
}

/**
 * Breaks one file's record (a file, so no other entry loses its parent): visible only when unlock opens the rows
 * instead of the snapshot.
 */
function damageOneRow(db: Database.Database): string {
  const row = db
    .prepare('SELECT id, record FROM nodes WHERE id IN (SELECT node_id FROM contents) LIMIT 1')
    .get() as { id: Buffer; record: Buffer };
  const record = Buffer.from(row.record);
  record.writeUInt8(record.readUInt8(30) ^ 1, 30);
  db.prepare('UPDATE nodes SET record = ? WHERE id = ?').run(record, row.id);
  return `(index row ${row.id.toString('hex')})`;
}

/** Unlock's and verify's report of rows that do not add up to the index commitment. */
const indexMismatch = expect.objectContaining({
  path: '(index)',
  code: 'INTEGRITY',
  message: expect.stringMatching(/rows do not match its sealed commitment/) as unknown,
}) as unknown;

/** Their report of a commitment sealed at another generation than the index's. */
const staleCommitment = expect.objectContaining({
  path: '(index)',
  code: 'INTEGRITY',
  message: expect.stringMatching(/sealed at generation \d+ while the index says \d+/) as unknown,
}) as unknown;

async function reopen(dir: string, options: { readOnly?: boolean } = {}): Promise<Vault> {
  return track(await Vault.open(dir, { sodium: nativeSodium, ...options }));
}

/** A vault with nested folders, non-ASCII names and both small and multi-chunk files, closed. */
async function populatedVault(): Promise<{ dir: string; before: VaultEntry[] }> {
  const { vault, dir, root } = await newVault();
  await writeTree(join(root, 'in'), {
    'Fotos/Été 2024/plage.jpg': Buffer.alloc(200_000, 7),
    'Fotos/Été 2024/ΟΔΟΣ.txt': 'greek',
    'notes/a.txt': 'alpha',
    'empty.bin': '',
  });
  await vault.add([join(root, 'in', 'Fotos'), join(root, 'in', 'notes'), join(root, 'in', 'empty.bin')]);
  vault.mkdir('/Empty folder/inside');
  vault.rename('/notes/a.txt', 'renamed.txt');
  const before = vault.listRecursive('/');
  vault.close();
  return { dir, before };
}

/** The index of a {@link populatedVault}, opened on its own, as an unlock's reads see it. */
async function populatedIndex(): Promise<IndexDb> {
  const { dir } = await populatedVault();
  let vaultId: Buffer = Buffer.alloc(0);
  editIndex(dir, (db) => {
    vaultId = meta(db, 'vault_id') ?? vaultId;
  });
  return IndexDb.open(join(dir, 'index.sqlite'), { readOnly: false, create: false, vaultId });
}

describe('tree snapshot', () => {
  it('unlocking from the snapshot shows the same tree, and files still restore and verify', async () => {
    const { dir, before } = await populatedVault();
    editIndex(dir, (db) => {
      expect(meta(db, 'tree_snapshot')).toBeDefined();
    });
    const vault = await reopen(dir);
    expect(await vault.unlock(passphrase())).toEqual([]);
    expect(vault.listRecursive('/')).toEqual(before);
    expect(vault.search('plage').map((entry) => entry.path)).toEqual(['/Fotos/Été 2024/plage.jpg']);
    expect(vault.stat('/fotos/été 2024/οδοσ.TXT').name).toBe('ΟΔΟΣ.txt');
    expect((await collect(vault.read('/Fotos/Été 2024/plage.jpg'))).equals(Buffer.alloc(200_000, 7))).toBe(
      true,
    );
    expect(await vault.verify({ readData: true })).toMatchObject({ ok: true, problems: [] });
  });

  it('an empty vault round-trips through its snapshot', async () => {
    const { vault, dir } = await newVault();
    vault.close();
    const reopened = await reopen(dir);
    expect(await reopened.unlock(passphrase())).toEqual([]);
    expect(reopened.listRecursive('/')).toEqual([]);
    expect((await reopened.verify()).ok).toBe(true);
  });

  it('is not used once the index has changed since it was written', async () => {
    const { dir } = await populatedVault();
    let damagedRow = '';
    // What a writer that committed a change and then crashed, before locking, leaves behind: a newer generation
    // (and commitment) than the snapshot's. The damaged row is then read, and reported.
    await editIndexAsWriter(dir, (db) => {
      damagedRow = damageOneRow(db);
    });
    const vault = await reopen(dir);
    expect(await vault.unlock(passphrase())).toEqual([
      expect.objectContaining({ code: 'INTEGRITY', path: damagedRow }),
    ]);
  });

  it('is not used when the index has a different number of rows, whose removal unlock reports', async () => {
    const { dir, before } = await populatedVault();
    editIndex(dir, (db) => {
      db.pragma('foreign_keys = ON');
      const row = db.prepare('SELECT node_id FROM contents LIMIT 1').get() as { node_id: Buffer };
      db.prepare('DELETE FROM nodes WHERE id = ?').run(row.node_id);
    });
    const vault = await reopen(dir);
    expect(await vault.unlock(passphrase())).toEqual([indexMismatch]);
    expect(vault.listRecursive('/')).toHaveLength(before.length - 1);
  });

  it('a damaged snapshot falls back to the rows, is reported by verify, and is rewritten at lock', async () => {
    const { dir, before } = await populatedVault();
    editIndex(dir, (db) => {
      const sealed = Buffer.from(meta(db, 'tree_snapshot') ?? Buffer.alloc(0));
      sealed.writeUInt8(sealed.readUInt8(sealed.length - 1) ^ 1, sealed.length - 1);
      setMeta(db, 'tree_snapshot', sealed);
    });
    const vault = await reopen(dir);
    expect(await vault.unlock(passphrase())).toEqual([]);
    expect(vault.listRecursive('/')).toEqual(before);
    const report = await vault.verify();
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([
      expect.objectContaining({
        path: '(index)',
        code: 'INTEGRITY',
        message: expect.stringMatching(/snapshot/) as unknown,
      }),
    ]);
    vault.close();

    const again = await reopen(dir);
    await again.unlock(passphrase());
    expect(again.listRecursive('/')).toEqual(before);
    expect(await again.verify()).toMatchObject({ ok: true, problems: [] });
  });

  it('an older snapshot put back with its generation is refused at unlock (format 1.1)', async () => {
    const { dir } = await populatedVault();
    let oldPair: [Buffer, Buffer] | undefined;
    editIndex(dir, (db) => {
      const snapshot = meta(db, 'tree_snapshot');
      const generation = meta(db, 'generation');
      if (snapshot && generation) oldPair = [snapshot, generation];
    });
    const vault = await reopen(dir);
    await vault.unlock(passphrase());
    vault.rename('/notes/renamed.txt', 'newer.txt');
    vault.close();
    editIndex(dir, (db) => {
      if (!oldPair) throw new Error('no snapshot stored');
      setMeta(db, 'tree_snapshot', oldPair[0]);
      setMeta(db, 'generation', oldPair[1]);
    });

    const rolledBack = await reopen(dir);
    // The commitment was sealed at the newer generation: the pair no longer matches it, and the rows are read.
    expect(await rolledBack.unlock(passphrase())).toEqual([staleCommitment]);
    expect(rolledBack.list('/notes').map((entry) => entry.name)).toEqual(['newer.txt']);
    expect((await rolledBack.verify()).problems).toEqual([staleCommitment]);
    expect(await rolledBack.verify({ repair: true })).toMatchObject({ problems: [staleCommitment] });
    rolledBack.close();

    const healed = await reopen(dir);
    expect(await healed.unlock(passphrase())).toEqual([]);
    expect(healed.list('/notes').map((entry) => entry.name)).toEqual(['newer.txt']);
    expect((await healed.verify()).ok).toBe(true);
  });

  it("another copy's snapshot of the same generation and size is refused at unlock (format 1.1)", async () => {
    // Two copies of one vault, each changed once: their indexes have the same generation and the same number of
    // rows, so only the commitment's sum tells one copy's snapshot from the other's.
    const { dir } = await populatedVault();
    const otherDir = `${dir}-copy`;
    cpSync(dir, otherDir, { recursive: true });
    const other = await reopen(otherDir);
    await other.unlock(passphrase());
    other.rename('/notes/renamed.txt', 'in the copy.txt');
    other.close();
    const vault = await reopen(dir);
    await vault.unlock(passphrase());
    vault.rename('/notes/renamed.txt', 'here.txt');
    vault.close();
    let otherSnapshot: Buffer | undefined;
    editIndex(otherDir, (db) => {
      otherSnapshot = meta(db, 'tree_snapshot');
    });
    editIndex(dir, (db) => {
      if (!otherSnapshot) throw new Error('the copy stored no snapshot');
      expect(meta(db, 'tree_snapshot')?.length).toBe(otherSnapshot.length);
      setMeta(db, 'tree_snapshot', otherSnapshot);
    });

    const swapped = await reopen(dir);
    expect(await swapped.unlock(passphrase())).toEqual([
      expect.objectContaining({
        path: '(index)',
        code: 'INTEGRITY',
        message: expect.stringMatching(/tree snapshot .* does not match the index commitment/) as unknown,
      }),
    ]);
    // The rows were read instead: this copy's own names, not the other copy's.
    expect(swapped.list('/notes').map((entry) => entry.name)).toEqual(['here.txt']);
  });

  it('a read-only vault unlocks from the snapshot and leaves the index untouched', async () => {
    const { dir, before } = await populatedVault();
    let damagedRow = '';
    editIndex(dir, (db) => {
      damagedRow = damageOneRow(db);
    });
    const readOnly = await reopen(dir, { readOnly: true });
    expect(await readOnly.unlock(passphrase())).toEqual([]);
    expect(readOnly.listRecursive('/')).toEqual(before);
    const report = await readOnly.verify();
    expect(report.problems.map((problem) => problem.path)).toContain(damagedRow);
    readOnly.close();
    editIndex(dir, (db) => {
      expect(meta(db, 'tree_snapshot')).toBeDefined();
    });
  });
});

describe('the snapshot read ahead of the unlock', () => {
  it('is the one the unlock uses, and a change made while unlocked is what the next unlock reads', async () => {
    const { dir, before } = await populatedVault();
    const vault = await reopen(dir);
    vault.readAhead();
    const rowsRead = vi.spyOn(IndexDb.prototype, 'nodes');
    const metaRead = vi.spyOn(IndexDb.prototype, 'getMeta');
    const snapshotReads = (): number => metaRead.mock.calls.filter(([key]) => key === 'tree_snapshot').length;
    try {
      expect(await vault.unlock(passphrase())).toEqual([]);
      expect(vault.listRecursive('/')).toEqual(before);
      expect(snapshotReads()).toBe(0); // read ahead
      vault.mkdir('/made while unlocked');
      vault.lock(); // stores a new snapshot
      expect(await vault.unlock(passphrase())).toEqual([]);
      expect(vault.listRecursive('/').map((entry) => entry.path)).toContain('/made while unlocked');
      expect(snapshotReads()).toBe(1); // the new one
      vault.lock(); // no change: nothing stored
      expect(await vault.unlock(passphrase())).toEqual([]);
      expect(snapshotReads()).toBe(1);
      // Every unlock came from a snapshot that matched the index: a stale one would have sent it to the rows.
      expect(rowsRead).not.toHaveBeenCalled();
    } finally {
      rowsRead.mockRestore();
      metaRead.mockRestore();
    }
  });

  it('counts the rows again after a change: an unlock after a delete comes from the snapshot stored at lock', async () => {
    const { dir } = await populatedVault();
    const vault = await reopen(dir);
    vault.readAhead(); // counts the rows before the delete
    const rowsRead = vi.spyOn(IndexDb.prototype, 'nodes');
    try {
      expect(await vault.unlock(passphrase())).toEqual([]);
      expect(await vault.remove(['/notes'])).toBeGreaterThan(0);
      vault.lock(); // stores a snapshot without the deleted entries
      expect(await vault.unlock(passphrase())).toEqual([]);
      expect(vault.list('/').map((entry) => entry.path)).not.toContain('/notes');
      // With a count kept from before the delete, lock would not have stored a snapshot (the tree would not match
      // the rows), and this unlock would have read the rows.
      expect(rowsRead).not.toHaveBeenCalled();
    } finally {
      rowsRead.mockRestore();
    }
  });

  it('an unlock whose read-ahead fails still unlocks (the read is made again, and reported if it fails again)', async () => {
    const { dir, before } = await populatedVault();
    const vault = await reopen(dir);
    const snapshotRead = vi.spyOn(IndexDb.prototype, 'snapshot').mockImplementationOnce(() => {
      throw new Error('the disk went away for a moment');
    });
    try {
      expect(await vault.unlock(passphrase())).toEqual([]);
      expect(vault.listRecursive('/')).toEqual(before);
      expect(snapshotRead).toHaveBeenCalledTimes(2);
    } finally {
      snapshotRead.mockRestore();
    }
  });

  it('leaves a snapshot value that cannot be read for the unlock to report, asked to read ahead or not', async () => {
    const outcomes: string[] = [];
    for (const readAhead of [false, true]) {
      const { dir } = await populatedVault();
      editIndex(dir, (db) => {
        db.prepare("UPDATE meta SET value = 'not a blob' WHERE key = 'tree_snapshot'").run();
      });
      const vault = await reopen(dir);
      if (readAhead) vault.readAhead();
      outcomes.push(
        await vault.unlock(passphrase()).then(
          (problems) => `unlocked with ${JSON.stringify(problems)}`,
          (error: unknown) => `refused: ${(error as Error).message}`,
        ),
      );
    }
    // Refused as a malformed index, whether the vault was asked to read ahead before the unlock or not.
    expect(outcomes[0]).toMatch(/^refused: .*"tree_snapshot" is not a BLOB/);
    expect(outcomes[1]).toBe(outcomes[0]);
  });

  it('is handed to the unlock only when it claims the index generation, for which memory is readied', async () => {
    const db = await populatedIndex();
    try {
      const sealed = db.snapshot();
      expect(sealed?.length).toBeGreaterThan(0);
      expect(db.readAheadForUnlock()).toBe(sealed);
      const older = Buffer.from(sealed ?? Buffer.alloc(0));
      older.writeBigUInt64LE(db.generation() - 1n, 4);
      db.putSnapshot(older);
      expect(db.readAheadForUnlock()).toBeUndefined();
      db.deleteSnapshot();
      expect(db.readAheadForUnlock()).toBeUndefined();
    } finally {
      db.close();
    }
  });

  it('is read again once the snapshot is deleted or stored', async () => {
    const db = await populatedIndex();
    try {
      const sealed = db.snapshot();
      expect(sealed?.length).toBeGreaterThan(0);
      db.deleteSnapshot();
      expect(db.snapshot()).toBeUndefined();
      db.putSnapshot(Buffer.from('another'));
      expect(db.snapshot()).toEqual(Buffer.from('another'));
    } finally {
      db.close();
    }
  });
});
