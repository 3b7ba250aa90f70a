import { randomBytes } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { addInto, IndexCommitter, ROW_TABLE, type SqlValue } from '../../src/core/crypto/index-commitment.js';
import { Keyring, SecretKey } from '../../src/core/crypto/keys.js';
import { backends } from '../helpers/backends.js';

/**
 * The commitment's running sum (FORMAT.md 8.7) is updated row by row through one reused row buffer and hash output:
 * each row must add exactly its own h(row), whatever rows came before it, on either sodium backend.
 */

function nodeRow(recordBytes: number): SqlValue[] {
  return [randomBytes(16), 1n, randomBytes(recordBytes), 3n];
}

function contentRow(): SqlValue[] {
  return [randomBytes(16), randomBytes(16), null, randomBytes(16), 123_456_789_012n, -1n];
}

function metaRow(): SqlValue[] {
  return ['a key with ünïcode', randomBytes(8)];
}

describe.each(backends)('index commitment sum ($name)', (sodium) => {
  const keyring = new Keyring();
  keyring.add(7, SecretKey.generate(sodium));
  const vaultId = randomBytes(16);
  const committer = new IndexCommitter(sodium, keyring, vaultId, 7);
  /** h(row) from a committer that has hashed nothing before it. */
  const hashAlone = (table: number, values: SqlValue[]): Buffer =>
    new IndexCommitter(sodium, keyring, vaultId, 7).hashRow(table, values);

  // Long rows before short ones (and one longer than the buffer's first size), so stale bytes of a longer row would
  // show in a shorter row's hash.
  const rows: [number, SqlValue[]][] = [
    [ROW_TABLE.nodes, nodeRow(70_000)],
    [ROW_TABLE.nodes, nodeRow(296)],
    [ROW_TABLE.contents, contentRow()],
    [ROW_TABLE.meta, metaRow()],
    [ROW_TABLE.meta, ['k', 1.5]],
    [ROW_TABLE.nodes, nodeRow(40)],
  ];

  it('adds each row as its h(row) alone', () => {
    const expected = Buffer.alloc(32);
    for (const [table, values] of rows) addInto(expected, hashAlone(table, values));
    const sum = Buffer.alloc(32);
    for (const [table, values] of rows) committer.addRow(sum, table, values);
    expect(sum).toEqual(expected);
    expect(sum.equals(Buffer.alloc(32))).toBe(false);
  });

  it('takes away exactly what a row added, in any order', () => {
    const sum = Buffer.alloc(32);
    for (const [table, values] of rows) committer.addRow(sum, table, values);
    for (const [table, values] of [...rows].reverse().slice(0, -1)) committer.subtractRow(sum, table, values);
    const [first] = rows;
    if (!first) throw new Error('no rows');
    expect(sum).toEqual(hashAlone(...first));
  });

  it("seals the contents sum so that it opens only under the commitment's key id and vault", () => {
    const contentsSum = randomBytes(32);
    const sealed = committer.sealContentsSum(contentsSum);
    expect(sealed).toHaveLength(76);
    expect(committer.openContentsSum(sealed)).toEqual(contentsSum);
    keyring.add(8, SecretKey.generate(sodium));
    const underEight = Buffer.from(sealed);
    underEight.writeUInt32LE(8, 0); // a key the vault holds, but not the commitment's
    expect(() => committer.openContentsSum(underEight)).toThrow(
      expect.objectContaining({ reason: 'tampered' }),
    );
    const elsewhere = new IndexCommitter(sodium, keyring, randomBytes(16), 7);
    expect(() => elsewhere.openContentsSum(sealed)).toThrow(expect.objectContaining({ reason: 'tampered' }));
    expect(() => committer.openContentsSum(sealed.subarray(1))).toThrow(
      expect.objectContaining({ reason: 'malformed' }),
    );
  });
});
