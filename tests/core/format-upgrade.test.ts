import { createHash } from 'node:crypto';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import type { SodiumBackend } from '../../src/core/crypto/sodium.js';
import { Vault } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { toFormat10 } from '../helpers/index-format.js';
import { VECTOR_ROOT } from '../helpers/vector-schema.js';
import { collect, newVault, passphrase, tempDir, track, writeTree } from '../helpers/vault.js';
import written10 from '../vectors/vault-1.0/contents.json' with { type: 'json' };

/** What the index says about its format: schema, whether it has a commitment, and the records' versions. */
function indexFormat(dir: string): { schema: number; commitment: boolean; versions: unknown[] } {
  const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
  try {
    const meta = (key: string): Buffer | undefined =>
      db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(key) as Buffer | undefined;
    const columns = db.prepare("SELECT name FROM pragma_table_info('nodes')").pluck().all();
    return {
      schema: meta('index_schema')?.readUInt32LE(0) ?? 1,
      commitment: meta('index_commitment') !== undefined,
      versions: columns.includes('version') ? db.prepare('SELECT version FROM nodes').pluck().all() : [],
    };
  } finally {
    db.close();
  }
}

/** A closed format 1.0 vault (index schema 3) with a folder and two files. */
async function format10Vault(): Promise<{ dir: string; paths: string[] }> {
  const { vault, dir, root } = await newVault();
  await writeTree(join(root, 'in'), { 'docs/a.txt': 'alpha', 'docs/b.txt': 'beta' });
  await vault.add([join(root, 'in', 'docs')]);
  const paths = vault.listRecursive('/').map((entry) => entry.path);
  vault.close();
  await toFormat10(dir);
  return { dir, paths };
}

/** The native backend, failing its `after`-th seal with an error that is not damage. */
function failingAfter(after: number): SodiumBackend {
  let calls = 0;
  const count = (): void => {
    if (++calls === after) throw new Error('injected failure');
  };
  // Records are sealed in place (detached), the commitment whole: either way a seal counts.
  return {
    ...nativeSodium,
    aeadEncrypt(...args) {
      count();
      return nativeSodium.aeadEncrypt(...args);
    },
    aeadEncryptDetached(...args) {
      count();
      nativeSodium.aeadEncryptDetached(...args);
    },
  };
}

/** A copy of the vault Coffer 1.0 wrote (tests/vectors/vault-1.0), to be opened and upgraded. */
function copyOfVault10(): string {
  const dir = join(tempDir(), 'vault');
  cpSync(join(VECTOR_ROOT, 'vault-1.0', 'vault'), dir, { recursive: true });
  return dir;
}

/** Every file of a vault folder, by its path there, with its bytes' SHA-256: what a read-only open may not change. */
function folderDigests(dir: string): Record<string, string> {
  const digests: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    digests[path.slice(dir.length)] = createHash('sha256').update(readFileSync(path)).digest('hex');
  }
  return digests;
}

/** Checks that `vault` holds exactly the files and folders of contents.json, every file's bytes read back. */
async function expectWritten10(vault: Vault): Promise<void> {
  const listed = vault.listRecursive('/');
  expect(
    listed
      .filter((entry) => entry.type === 'folder')
      .map((entry) => entry.path)
      .sort(),
  ).toEqual([...written10.folders].sort());
  const files = listed.filter((entry) => entry.type === 'file');
  expect(files.map((entry) => entry.path).sort()).toEqual(written10.files.map((file) => file.path).sort());
  for (const file of written10.files) {
    const bytes = await collect(vault.read(file.path));
    expect({
      path: file.path,
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    }).toEqual(file);
  }
}

describe('format 1.0 vaults', () => {
  it('are read as 1.0 when opened read-only, and upgraded to 1.1 at the first writable unlock', async () => {
    const { dir, paths } = await format10Vault();
    expect(indexFormat(dir)).toEqual({ schema: 3, commitment: false, versions: [] });

    const readOnly = track(await Vault.open(dir, { sodium: nativeSodium, readOnly: true }));
    expect(await readOnly.unlock(passphrase())).toEqual([]);
    expect(readOnly.listRecursive('/').map((entry) => entry.path)).toEqual(paths);
    expect(await readOnly.info()).toMatchObject({ format: '1.0', formatVersion: 1 });
    expect(await readOnly.verify()).toMatchObject({ ok: true });
    readOnly.close();
    expect(indexFormat(dir)).toEqual({ schema: 3, commitment: false, versions: [] });

    const writable = track(await Vault.open(dir, { sodium: nativeSodium }));
    expect(await writable.info()).toMatchObject({ format: '1.0' });
    expect(await writable.unlock(passphrase())).toEqual([]);
    expect(await writable.info()).toMatchObject({ format: '1.1', formatVersion: 1 });
    expect(writable.listRecursive('/').map((entry) => entry.path)).toEqual(paths);
    writable.close();
    expect(indexFormat(dir)).toEqual({ schema: 4, commitment: true, versions: [1, 1, 1] });

    const again = track(await Vault.open(dir, { sodium: nativeSodium }));
    expect(await again.unlock(passphrase())).toEqual([]);
    again.rename('/docs/a.txt', 'renamed.txt');
    expect(await again.verify({ readData: true })).toMatchObject({ ok: true, problems: [] });
    again.close();
    expect(indexFormat(dir).versions.sort()).toEqual([1, 1, 2]);
  });

  it('written by Coffer 1.0 itself: read read-only as 1.0 with nothing written, then upgraded whole', async () => {
    const dir = copyOfVault10();
    const unlock = (vault: Vault) => vault.unlock(passphrase(written10.passphrase));
    const before = folderDigests(dir);
    expect(indexFormat(dir)).toEqual({ schema: 3, commitment: false, versions: [] });

    const readOnly = track(await Vault.open(dir, { sodium: nativeSodium, readOnly: true }));
    expect(await unlock(readOnly)).toEqual([]);
    expect(await readOnly.info()).toMatchObject({ format: '1.0', formatVersion: 1 });
    await expectWritten10(readOnly);
    expect(await readOnly.verify({ readData: true })).toMatchObject({ ok: true, problems: [] });
    readOnly.close();
    expect(folderDigests(dir)).toEqual(before);

    const writable = track(await Vault.open(dir, { sodium: nativeSodium }));
    expect(await unlock(writable)).toEqual([]);
    expect(await writable.info()).toMatchObject({ format: '1.1' });
    await expectWritten10(writable);
    writable.close();
    expect(indexFormat(dir)).toMatchObject({ schema: 4, commitment: true });
    expect(indexFormat(dir).versions).toEqual(Array<number>(10).fill(1));

    const again = track(await Vault.open(dir, { sodium: nativeSodium }));
    expect(await unlock(again)).toEqual([]);
    await expectWritten10(again);
    expect(await again.verify({ readData: true })).toMatchObject({
      ok: true,
      problems: [],
      unreferenced: [],
    });
    again.close();
  });

  it('are upgraded in one transaction: a failure midway leaves the 1.0 index as it was', async () => {
    const { dir, paths } = await format10Vault();
    // The second record's seal fails: the first one was already resealed inside the transaction.
    const failing = await Vault.open(dir, { sodium: failingAfter(2) });
    await expect(failing.unlock(passphrase())).rejects.toThrow('injected failure');
    failing.close();
    expect(indexFormat(dir)).toEqual({ schema: 3, commitment: false, versions: [] });

    const readOnly = track(await Vault.open(dir, { sodium: nativeSodium, readOnly: true }));
    expect(await readOnly.unlock(passphrase())).toEqual([]);
    expect(readOnly.listRecursive('/').map((entry) => entry.path)).toEqual(paths);
    readOnly.close();
    const writable = track(await Vault.open(dir, { sodium: nativeSodium }));
    expect(await writable.unlock(passphrase())).toEqual([]);
    expect(await writable.verify()).toMatchObject({ ok: true });
  });

  it('are not upgraded under a header older than the index: the rows it cannot open stay readable', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'in'), { 'first.txt': 'under key 1', 'second.txt': 'under key 2' });
    await vault.add([join(root, 'in', 'first.txt')]);
    const olderHeader = vault.exportHeader();
    await vault.rotateKey();
    await vault.add([join(root, 'in', 'second.txt')]);
    vault.close();
    await toFormat10(dir);
    const newerHeader = readFileSync(join(dir, 'coffer.header'));
    for (const name of ['coffer.header', 'coffer.header.bak']) writeFileSync(join(dir, name), olderHeader);

    const stale = track(await Vault.open(dir, { sodium: nativeSodium }));
    await expect(stale.unlock(passphrase())).rejects.toThrow(
      /vault index \(key 2\) names an encryption key the header in use does not hold/u,
    );
    stale.close();
    expect(indexFormat(dir)).toMatchObject({ schema: 3, commitment: false });

    // With the newer header in the backup, the unlock goes on as under any older header, writing nothing.
    writeFileSync(join(dir, 'coffer.header.bak'), newerHeader);
    const held = track(await Vault.open(dir, { sodium: nativeSodium }));
    const problems = await held.unlock(passphrase());
    expect(problems.map(({ message }) => message).join('\n')).toMatch(
      /key 2, held only by coffer\.header\.bak/u,
    );
    expect((await collect(held.read('/first.txt'))).toString()).toBe('under key 1');
    held.close();
    expect(indexFormat(dir)).toMatchObject({ schema: 3, commitment: false });
    expect(readFileSync(join(dir, 'coffer.header.bak')).equals(newerHeader)).toBe(true);

    writeFileSync(join(dir, 'coffer.header'), newerHeader);
    const upgraded = track(await Vault.open(dir, { sodium: nativeSodium }));
    expect(await upgraded.unlock(passphrase())).toEqual([]);
    expect(await upgraded.info()).toMatchObject({ format: '1.1' });
    expect((await collect(upgraded.read('/second.txt'))).toString()).toBe('under key 2');
    expect(await upgraded.verify()).toMatchObject({ ok: true });
  });

  it('keep a damaged record damaged through the upgrade, never dropped', async () => {
    const { dir } = await format10Vault();
    const db = new Database(join(dir, 'index.sqlite'));
    const row = db.prepare('SELECT id, record FROM nodes LIMIT 1').get() as { id: Buffer; record: Buffer };
    row.record[30] = (row.record[30] ?? 0) ^ 1;
    db.prepare('UPDATE nodes SET record = ? WHERE id = ?').run(row.record, row.id);
    db.close();

    const vault = track(await Vault.open(dir, { sodium: nativeSodium }));
    // The row is any of the vault's: when it is a folder's, what it holds is left out with it (no valid parent).
    const damagedPath = `(index row ${row.id.toString('hex')})`;
    const damaged = await vault.unlock(passphrase());
    expect(damaged).toContainEqual(expect.objectContaining({ code: 'INTEGRITY', path: damagedPath }));
    expect(damaged.every((problem) => problem.code === 'INTEGRITY')).toBe(true);
    expect(await vault.info()).toMatchObject({ format: '1.1' });
    const report = await vault.verify();
    expect(report.problems.map((problem) => problem.path)).toContain(damagedPath);
  });
});
