/**
 * The memory an unlock readies for the snapshot's plaintext while the key is derived: the snapshot is decrypted
 * into it when it fits, never holds plaintext when authentication fails, and is wiped with the entries.
 */
import { randomBytes } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { Keyring, SecretKey } from '../../src/core/crypto/keys.js';
import { IntegrityError } from '../../src/core/errors.js';
import { openSnapshotEntries, sealSnapshot, snapshotRoom } from '../../src/core/vault/snapshot.js';
import type { TreeNode } from '../../src/core/vault/tree.js';
import { backends, flipped } from '../helpers/backends.js';

const FOLDER_ID = 'f0'.repeat(16);
const FOLDER: TreeNode = {
  type: 'folder',
  name: 'Fotos',
  parent: null,
  size: 0,
  mtime: 1_700_000_000_000,
  id: FOLDER_ID,
  keyId: 1,
};
const FILE: TreeNode = {
  type: 'file',
  name: 'plage.jpg',
  parent: FOLDER_ID,
  size: 200_000,
  mtime: 1_700_000_000_001,
  id: 'a1'.repeat(16),
  keyId: 1,
  fileId: 'b2'.repeat(16),
};
const NODES = [FOLDER, FILE];

describe.each(backends)('the snapshot room ($name)', (sodium) => {
  const keyring = new Keyring();
  keyring.add(1, SecretKey.generate(sodium));
  const keys = { sodium, keyring, vaultId: randomBytes(16) };
  const stored = sealSnapshot(keys, NODES, 7n, randomBytes(32));

  it('receives the plaintext, which the entries read and their wipe zeroes', () => {
    const room = snapshotRoom(stored);
    expect(room?.every((byte) => byte === 0)).toBe(true);
    const entries = openSnapshotEntries(keys, stored, room);
    expect(entries.nodes()).toEqual(NODES);
    expect(room?.some((byte) => byte !== 0)).toBe(true);
    entries.wipe();
    expect(room?.every((byte) => byte === 0)).toBe(true);
  });

  it('holds no plaintext when the snapshot fails authentication', () => {
    const room = snapshotRoom(stored);
    const tampered = flipped(stored, stored.length - 1);
    expect(() => openSnapshotEntries(keys, tampered, room)).toThrow(IntegrityError);
    expect(room?.every((byte) => byte === 0)).toBe(true);
  });

  it('is zeroed when the snapshot authenticates but is not laid out as the format requires', () => {
    // A folder with a size: sealed as the format says, refused when read (FORMAT.md 8.6).
    const forged = sealSnapshot(keys, [{ ...FOLDER, size: 5 }, FILE], 7n, randomBytes(32));
    const room = snapshotRoom(forged);
    expect(() => openSnapshotEntries(keys, forged, room)).toThrow(
      /not laid out as the vault format requires/,
    );
    expect(room?.every((byte) => byte === 0)).toBe(true);
  });

  it('is left alone when it was made for another snapshot, which opens all the same', () => {
    // Enough entries to take the padded plaintext past its first 4 KiB bucket.
    const many = Array.from({ length: 200 }, (_, i): TreeNode => ({
      ...FILE,
      name: `${i}.jpg`,
      id: i.toString(16).padStart(32, '0'),
    }));
    const room = snapshotRoom(sealSnapshot(keys, [FOLDER, ...many], 7n, randomBytes(32)));
    expect(room?.length).not.toBe(snapshotRoom(stored)?.length);
    expect(openSnapshotEntries(keys, stored, room).nodes()).toEqual(NODES);
    expect(room?.every((byte) => byte === 0)).toBe(true);
  });

  it('is none for no snapshot, or one too short to hold a sealed message', () => {
    expect(snapshotRoom(undefined)).toBeUndefined();
    expect(snapshotRoom(stored.subarray(0, 20))).toBeUndefined();
  });
});
