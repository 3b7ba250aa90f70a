/**
 * FORMAT.md section 8.6: what a reader accepts in a tree snapshot (entries in any order, the root implied) and what
 * makes it unusable (two entries with one record id, a folder with a size or a content id, an entry that does not
 * reach the root through folders, a name that is not UTF-8), which sends unlock to the rows and makes `verify`
 * report it. Snapshots here are sealed under the vault's own keys, as whoever holds the passphrase could seal them.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { Vault, type VaultEntry } from '../../src/core/index.js';
import type { TreeNode } from '../../src/core/vault/tree.js';
import { nativeSodium } from '../helpers/backends.js';
import { forgeSnapshot } from '../helpers/snapshots.js';
import { newVault, passphrase, track, writeTree } from '../helpers/vault.js';

const MALFORMED = /tree snapshot in the index is not laid out as the vault format requires/u;

async function closedVault(): Promise<{ dir: string; before: VaultEntry[] }> {
  const { vault, dir, root } = await newVault();
  await writeTree(join(root, 'in'), { 'docs/a.txt': 'alpha', 'docs/b.txt': 'bravo', 'c.txt': 'charlie' });
  await vault.add([join(root, 'in', 'docs'), join(root, 'in', 'c.txt')]);
  const before = vault.listRecursive('/');
  vault.close();
  return { dir, before };
}

/** Flips a bit of one file's sealed record: unlock reports it only when it reads the rows, not the snapshot. */
function damageRowOf(dir: string, nodes: readonly TreeNode[], name: string): void {
  const node = nodes.find((candidate) => candidate.name === name);
  if (!node) throw new Error(`no ${name}`);
  const db = new Database(join(dir, 'index.sqlite'));
  try {
    const id = Buffer.from(node.id, 'hex');
    const record = db.prepare('SELECT record FROM nodes WHERE id = ?').pluck().get(id) as Buffer;
    record[30] = (record[30] ?? 0) ^ 1;
    db.prepare('UPDATE nodes SET record = ? WHERE id = ?').run(record, id);
  } finally {
    db.close();
  }
}

async function unlocked(dir: string): Promise<{ vault: Vault; damaged: readonly unknown[] }> {
  const vault = track(await Vault.open(dir, { sodium: nativeSodium }));
  return { vault, damaged: await vault.unlock(passphrase()) };
}

const byName = (name: string) => (node: TreeNode) => node.name === name;

describe('the tree snapshot', () => {
  it('is used with its entries in any order, a folder after what it holds, the root implied', async () => {
    const { dir, before } = await closedVault();
    let nodes: TreeNode[] = [];
    await forgeSnapshot(dir, (rows) => {
      nodes = rows;
      // Files first and the folder last: every parent index points forward.
      return [...rows].sort((a, b) => (a.type === b.type ? 0 : a.type === 'file' ? -1 : 1));
    });
    damageRowOf(dir, nodes, 'c.txt');
    const { vault, damaged } = await unlocked(dir);
    // The damaged row is hidden behind the current snapshot: proof that the snapshot was read.
    expect(damaged).toEqual([]);
    expect(vault.listRecursive('/')).toEqual(before);
  });

  const unusable: [string, (nodes: TreeNode[]) => TreeNode[], ((plaintext: Buffer) => void)?][] = [
    [
      'two entries with one record id',
      (nodes) => {
        const a = nodes.find(byName('a.txt'));
        return nodes.map((node) => (node.name === 'b.txt' && a ? { ...a, name: 'b.txt' } : node));
      },
    ],
    [
      'a folder with a size',
      (nodes) => nodes.map((node) => (node.type === 'folder' ? { ...node, size: 5 } : node)),
    ],
    [
      'a folder with a content file id',
      (nodes) => nodes.map((node) => (node.type === 'folder' ? { ...node, fileId: 'ab'.repeat(16) } : node)),
    ],
    [
      'a folder that is its own parent (a loop: it and what it holds never reach the root)',
      (nodes) => nodes.map((node) => (node.name === 'docs' ? { ...node, parent: node.id } : node)),
    ],
    [
      'a file as the parent of another entry',
      (nodes) => {
        const c = nodes.find(byName('c.txt'));
        return nodes.map((node) => (node.name === 'a.txt' && c ? { ...node, parent: c.id } : node));
      },
    ],
    [
      // Checked at unlock, though the nodes below the root are made only when first needed.
      'a name a writer never stores, below the root',
      (nodes) => nodes.map((node) => (node.name === 'a.txt' ? { ...node, name: 'a\u0001.txt' } : node)),
    ],
    [
      'two entries of one name in a folder below the root',
      (nodes) => nodes.map((node) => (node.name === 'b.txt' ? { ...node, name: 'A.txt' } : node)),
    ],
    [
      'a name that is not valid UTF-8',
      (nodes) => nodes,
      (plaintext) => {
        plaintext[plaintext.indexOf('c.txt')] = 0xff;
      },
    ],
  ];

  it.each(unusable)('%s: unlock reads the rows instead, verify reports it', async (_name, build, edit) => {
    const { dir, before } = await closedVault();
    await forgeSnapshot(dir, build, edit);
    const { vault, damaged } = await unlocked(dir);
    expect(damaged).toEqual([]);
    expect(vault.list('/')).toEqual(before.filter((entry) => !entry.path.startsWith('/docs/')));
    expect(vault.listRecursive('/')).toEqual(before);
    expect(vault.stat('/docs').size).toBe(0);
    const report = await vault.verify();
    expect(report.problems).toEqual([
      expect.objectContaining({ path: '(index)', message: expect.stringMatching(MALFORMED) as string }),
    ]);
  });

  it('one flawed below the root is refused at unlock, so damage to the rows read instead is reported there', async () => {
    const { dir } = await closedVault();
    let nodes: TreeNode[] = [];
    await forgeSnapshot(dir, (rows) => {
      nodes = rows;
      return rows.map((node) => (node.name === 'a.txt' ? { ...node, name: 'a\u0001.txt' } : node));
    });
    damageRowOf(dir, nodes, 'c.txt');
    const { vault, damaged } = await unlocked(dir);
    expect(damaged).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: expect.stringMatching(/^\(index row /u) as string }),
      ]),
    );
    expect(vault.list('/').map((entry) => entry.name)).toEqual(['docs']);
  });

  it('a root entry with the record id of an entry below the root never reaches a listing or a restore', async () => {
    const { dir, before } = await closedVault();
    await forgeSnapshot(dir, (rows) => {
      const a = rows.find(byName('a.txt'));
      if (!a) throw new Error('no a.txt');
      return rows.map((node) => (node.name === 'c.txt' ? { ...a, name: 'c.txt', parent: null } : node));
    });
    const { vault } = await unlocked(dir);
    expect(vault.list('/')).toEqual(before.filter((entry) => !entry.path.startsWith('/docs/')));
    const out = join(dirname(dir), 'restored');
    await vault.restore(['/'], out);
    expect(readFileSync(join(out, 'c.txt'), 'utf8')).toBe('charlie');
  });

  it('an entry whose record id names no row is not noticed at unlock; verify finds it and drops the snapshot', async () => {
    const { dir, before } = await closedVault();
    await forgeSnapshot(dir, (nodes) =>
      nodes.map((node) => (node.name === 'c.txt' ? { ...node, id: randomBytes(16).toString('hex') } : node)),
    );
    const { vault, damaged } = await unlocked(dir);
    expect(damaged).toEqual([]);
    expect(vault.listRecursive('/')).toEqual(before);
    const report = await vault.verify();
    expect(report.problems).toEqual([
      expect.objectContaining({
        path: '(index)',
        message: expect.stringMatching(/did not match its rows/u) as string,
      }),
    ]);
    vault.close();
    const reopened = await unlocked(dir);
    expect(reopened.vault.listRecursive('/')).toEqual(before);
    expect((await reopened.vault.verify()).ok).toBe(true);
  });
});
