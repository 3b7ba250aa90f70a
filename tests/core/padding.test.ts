import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import {
  blobSize,
  claimedFileId,
  ContentDecryptor,
  ContentEncryptor,
  encodeBlobHeader,
  parseBlobHeader,
} from '../../src/core/crypto/content.js';
import {
  badPaddingAt,
  blobPlaintextSize,
  fillPadding,
  padme,
  PADDING_TRAILER_BYTES,
} from '../../src/core/crypto/padding.js';
import { unlockVaultKeys } from '../../src/core/crypto/vault-header.js';
import { Vault } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { collect, newVault, passphrase, tempDir, track, writeTree } from '../helpers/vault.js';

const KiB = 1024;
const MiB = 1024 * KiB;
/** Around the chunk size, the pack limit and Padmé's buckets. */
const SIZES = [
  0,
  1,
  63 * KiB,
  64 * KiB - 1,
  64 * KiB,
  64 * KiB + 1,
  65 * KiB,
  MiB - 1,
  MiB,
  MiB + 1,
  3 * MiB + 5,
];

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

function filesOfSizes(sizes: readonly number[]): Record<string, Buffer> {
  // A pattern that does not repeat at chunk boundaries, and never ends in zeros that padding could hide.
  return Object.fromEntries(
    sizes.map((size, i) => [
      `f${String(i).padStart(2, '0')}-${size}.bin`,
      Buffer.from(Array.from({ length: size }, (_, j) => ((j * 31 + i) % 251) + 1)),
    ]),
  );
}

/** Every stored blob's length, from the index (packs) and the blob files, sorted. */
function storedLengths(dir: string): number[] {
  const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
  const rows = db.prepare('SELECT file_id, pack_length FROM contents').all() as {
    file_id: Buffer;
    pack_length: number | null;
  }[];
  db.close();
  return rows
    .map(({ file_id, pack_length }) => {
      if (pack_length !== null) return pack_length;
      const hex = file_id.toString('hex');
      return statSync(join(dir, 'blobs', hex.slice(0, 2), hex)).size;
    })
    .sort((a, b) => a - b);
}

async function reopen(dir: string): Promise<Vault> {
  const vault = track(await Vault.open(dir, { sodium: nativeSodium }));
  await vault.unlock(passphrase());
  return vault;
}

/** Restores `/src` and checks every file's bytes by SHA-256. */
async function expectRestored(vault: Vault, files: Record<string, Buffer>): Promise<void> {
  const out = tempDir();
  const report = await vault.restore(['/src'], out);
  expect(report.problems).toEqual([]);
  for (const [name, bytes] of Object.entries(files)) {
    expect(sha256(readFileSync(join(out, 'src', name))), name).toBe(sha256(bytes));
  }
}

describe('Padmé', () => {
  it('keeps only the top bits of a length, and costs at most 11.7 %', () => {
    expect([8, 9, 63, 64, 65, 100, 1000, 1025].map(padme)).toEqual([8, 10, 64, 64, 72, 104, 1024, 1088]);
    for (let length = 2; length < 1 << 20; length += length < 4096 ? 1 : 997) {
      const padded = padme(length);
      expect(padded).toBeGreaterThanOrEqual(length);
      expect(padded / length).toBeLessThanOrEqual(1.117);
      expect(padme(padded)).toBe(padded);
    }
    expect(padme(2 ** 40 + 1)).toBe(2 ** 40 + 2 ** 34);
  });
});

describe('content padding', () => {
  it('a new vault pads every blob to its Padmé bucket, and restores, reads and verifies exact bytes', async () => {
    const { vault, dir, root } = await newVault();
    const files = filesOfSizes(SIZES);
    await writeTree(join(root, 'src'), files);
    expect(await vault.add([join(root, 'src')])).toMatchObject({ problems: [] });
    vault.close();

    expect(storedLengths(dir)).toEqual(
      SIZES.map((size) => blobSize(blobPlaintextSize(size, true))).sort((a, b) => a - b),
    );
    const reopened = await reopen(dir);
    await expectRestored(reopened, files);
    for (const [name, bytes] of Object.entries(files)) {
      if (bytes.length === 0) continue;
      const last = await collect(
        reopened.read(`/src/${name}`, { start: bytes.length - 1, end: bytes.length - 1 }),
      );
      expect(last, name).toEqual(bytes.subarray(-1));
      expect(sha256(await collect(reopened.read(`/src/${name}`))), name).toBe(sha256(bytes));
    }
    expect(await reopened.verify()).toMatchObject({ ok: true, problems: [] });
    expect(await reopened.verify({ readData: true })).toMatchObject({ ok: true, problems: [] });
  });

  it("a vault created with padding 'none' stores blobs of exactly the file's size, as before", async () => {
    const { vault, dir, root } = await newVault({ contentPadding: 'none' });
    const files = filesOfSizes(SIZES);
    await writeTree(join(root, 'src'), files);
    await vault.add([join(root, 'src')]);
    vault.close();
    expect(storedLengths(dir)).toEqual(SIZES.map((size) => blobSize(size)).sort((a, b) => a - b));
    await expectRestored(await reopen(dir), files);
  });

  it('a vault without the setting (made before padding) reads its padded and unpadded blobs, and adds unpadded', async () => {
    const { vault, dir, root } = await newVault();
    const first = filesOfSizes([100, 2 * MiB]);
    await writeTree(join(root, 'src'), first);
    await vault.add([join(root, 'src')]);
    vault.close();
    const db = new Database(join(dir, 'index.sqlite'));
    db.prepare("DELETE FROM meta WHERE key = 'content_padding'").run();
    db.close();

    const reopened = await reopen(dir);
    const second = { 'g-300.bin': Buffer.alloc(300, 9), 'g-big.bin': Buffer.alloc(2 * MiB + 3, 7) };
    await writeTree(join(root, 'src'), second);
    await reopened.add([join(root, 'src', 'g-300.bin'), join(root, 'src', 'g-big.bin')]);
    reopened.close();
    expect(storedLengths(dir)).toEqual(
      [
        blobSize(blobPlaintextSize(100, true)),
        blobSize(blobPlaintextSize(2 * MiB, true)),
        blobSize(300),
        blobSize(2 * MiB + 3),
      ].sort((a, b) => a - b),
    );
    const again = await reopen(dir);
    await expectRestored(again, first);
    expect(sha256(await collect(again.read('/g-big.bin')))).toBe(sha256(second['g-big.bin']));
  });

  describe('padding sealed wrongly by a key holder is refused as damage', () => {
    /** Re-seals the blob at `offset` of `path` with the same layout and `edit`ed padded plaintext, in place. */
    async function reseal(
      dir: string,
      path: string,
      offset: number,
      length: number,
      edit: (plaintext: Buffer) => void,
    ): Promise<void> {
      const keys = await unlockVaultKeys(
        nativeSodium,
        readFileSync(join(dir, 'coffer.header')),
        passphrase(),
      );
      const file = readFileSync(path);
      const blob = file.subarray(offset, offset + length);
      const binding = { vaultId: keys.vaultId, fileId: claimedFileId(blob) };
      const header = parseBlobHeader(blob, binding);
      const dek = keys.keyring.find(header.keyId);
      if (!dek) throw new Error('no such key');
      const plaintext: Buffer[] = [];
      const decryptor = new ContentDecryptor(nativeSodium, () => dek, binding);
      decryptor.push(blob, (bytes) => plaintext.push(bytes));
      decryptor.finish((bytes) => plaintext.push(bytes));
      const edited = Buffer.concat(plaintext);
      edit(edited);
      const fresh = encodeBlobHeader({ ...header, noncePrefix: nativeSodium.randomBytes(16) });
      const encryptor = new ContentEncryptor(nativeSodium, dek, binding, fresh);
      const out: Buffer[] = [];
      encryptor.push(edited, (bytes) => out.push(bytes));
      encryptor.finish((bytes) => out.push(bytes));
      const sealed = Buffer.concat(out);
      expect(sealed.length).toBe(length);
      sealed.copy(file, offset);
      writeFileSync(path, file);
      keys.wipe();
    }

    /** The pack entry or blob file of the only file of `size` bytes. */
    function whereIs(dir: string, size: number): { path: string; offset: number; length: number } {
      const length = blobSize(blobPlaintextSize(size, true));
      const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
      const rows = db.prepare('SELECT file_id, pack_id, pack_offset, pack_length FROM contents').all() as {
        file_id: Buffer;
        pack_id: Buffer | null;
        pack_offset: number;
        pack_length: number;
      }[];
      db.close();
      for (const row of rows) {
        if (row.pack_id !== null && row.pack_length === length) {
          return {
            path: join(dir, 'packs', `${row.pack_id.toString('hex')}.pack`),
            offset: row.pack_offset,
            length,
          };
        }
        const hex = row.file_id.toString('hex');
        const path = join(dir, 'blobs', hex.slice(0, 2), hex);
        if (row.pack_id === null && statSync(path).size === length) return { path, offset: 0, length };
      }
      throw new Error(`no blob for ${size} bytes`);
    }

    const SMALL = 1000;
    const LARGE = 2 * MiB + 7;

    /** A vault holding /src/s.bin (SMALL bytes) and /src/l.bin (LARGE), both blobs resealed with `edit`; reopened. */
    async function withResealedFiles(edit: (plaintext: Buffer, size: number) => void): Promise<Vault> {
      const { vault, dir, root } = await newVault();
      const files = { 's.bin': Buffer.alloc(SMALL, 5), 'l.bin': Buffer.alloc(LARGE, 6) };
      await writeTree(join(root, 'src'), files);
      await vault.add([join(root, 'src')]);
      vault.close();
      for (const size of [SMALL, LARGE]) {
        const at = whereIs(dir, size);
        await reseal(dir, at.path, at.offset, at.length, (p) => {
          edit(p, size);
        });
      }
      return reopen(dir);
    }

    it.each([
      ['a padding byte is not zero', (p: Buffer, size: number) => void (p[size] = 1)],
      [
        'the size at its end is another',
        (p: Buffer) => void p.writeBigUInt64LE(BigInt(SMALL - 1), p.length - 8),
      ],
    ])('%s: restore, read and verify report INTEGRITY, and write nothing', async (_, edit) => {
      const reopened = await withResealedFiles(edit);
      const out = tempDir();
      const report = await reopened.restore(['/src'], out);
      expect(report.problems.map((p) => [p.path, p.code]).sort()).toEqual([
        ['/src/l.bin', 'INTEGRITY'],
        ['/src/s.bin', 'INTEGRITY'],
      ]);
      expect(report.filesRestored).toBe(0);
      await expect(collect(reopened.read('/src/s.bin'))).rejects.toMatchObject({ code: 'INTEGRITY' });
      const verified = await reopened.verify({ readData: true });
      expect(verified.ok).toBe(false);
      expect(verified.problems.map((p) => p.code)).toEqual(['INTEGRITY', 'INTEGRITY']);
    });

    it('a size at its end other than the index’s (same bucket): every reader says the sizes differ, and by how much', async () => {
      // Still padding to the same length: only the size at the end tells the blob from its record.
      const reopened = await withResealedFiles(
        (p, size) => void p.writeBigUInt64LE(BigInt(size - 1), p.length - 8),
      );
      const differs = (size: number): RegExp =>
        new RegExp(
          `its size differs from the index: the index says ${size} bytes, its stored contents hold ${size - 1}`,
          'u',
        );
      const report = await reopened.restore(['/src'], tempDir());
      expect(report.filesRestored).toBe(0);
      const byPath = Object.fromEntries(report.problems.map((p) => [p.path, p.message]));
      expect(byPath['/src/s.bin']).toMatch(differs(SMALL));
      expect(byPath['/src/l.bin']).toMatch(differs(LARGE));
      for (const [name, size] of [
        ['s.bin', SMALL],
        ['l.bin', LARGE],
      ] as const) {
        await expect(collect(reopened.read(`/src/${name}`))).rejects.toThrow(differs(size));
        // A range read, which opens no chunk of the padding, is refused as well: nothing the record claims beyond
        // what the blob holds is ever returned as the file's bytes.
        await expect(
          collect(reopened.read(`/src/${name}`, { start: size - 1, end: size - 1 })),
        ).rejects.toThrow(differs(size));
      }
      for (const readData of [false, true]) {
        const verified = await reopened.verify({ readData });
        expect(verified.problems.map((p) => p.message).sort(), `readData ${readData}`).toEqual([
          expect.stringMatching(differs(LARGE)),
          expect.stringMatching(differs(SMALL)),
        ]);
      }
    });
  });
});

describe('metadata padding', () => {
  /** Each row's sealed record length, and the tree snapshot's length, as a copier sees them. */
  function metadataLengths(dir: string): { records: number[]; snapshot: number | undefined } {
    const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
    const records = db.prepare('SELECT length(record) FROM nodes ORDER BY id').pluck().all() as number[];
    const snapshot = db
      .prepare("SELECT length(value) FROM meta WHERE key = 'tree_snapshot'")
      .pluck()
      .get() as number | undefined;
    db.close();
    return { records, snapshot };
  }

  it('a rename to a name 40 bytes longer changes neither its record nor the snapshot in length', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'src'), filesOfSizes([10, 20_000]));
    await vault.add([join(root, 'src')]);
    vault.close();
    const before = metadataLengths(dir);
    expect(before.snapshot).toBeDefined();

    const reopened = await reopen(dir);
    reopened.rename('/src/f00-10.bin', `f00-10-${'x'.repeat(40)}.bin`);
    reopened.close();
    const after = metadataLengths(dir);
    expect(after).toEqual(before);
    expect(new Set(after.records)).toEqual(new Set([24 + 256 + 16]));
  });
});

describe('padding bytes, written and checked chunk by chunk', () => {
  /** The padding FORMAT.md 5.7 describes, built independently: zeros, then the size as a u64 LE. */
  function expectedTail(size: number, total: number): Buffer {
    const tail = Buffer.alloc(total - size);
    tail.writeBigUInt64LE(BigInt(size), tail.length - PADDING_TRAILER_BYTES);
    return tail;
  }

  /** `bytes` cut into consecutive views of `piece` bytes, as chunks are opened. */
  function pieces(bytes: Buffer, piece: number): Buffer[] {
    const out: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += piece) out.push(bytes.subarray(at, at + piece));
    return out;
  }

  // A size past 2^32 (its trailer's high bytes are not zero), and pieces that cut the trailer in two.
  const cases = [
    { size: 0, total: 8, piece: 3 },
    { size: 9, total: 18, piece: 5 },
    { size: 1000, total: 1024, piece: 1020 },
    { size: 70_000, total: 73_728, piece: 65_536 },
    { size: 2 ** 32 + 5, total: 2 ** 32 + 40, piece: 7 },
    { size: 0, total: 200_000, piece: 150_000 },
  ];

  it.each(cases)('fills and accepts exactly the padding of a $size-byte file', ({ size, total, piece }) => {
    // Only the last part of a large blob is held: from `position` on.
    const position = Math.max(0, size - 100);
    const bytes = Buffer.alloc(total - position, 0xaa);
    fillPadding(bytes, position, size, total);
    expect(bytes.subarray(size - position)).toEqual(expectedTail(size, total));
    expect(bytes.subarray(0, size - position).every((byte) => byte === 0xaa)).toBe(true);
    const views = pieces(bytes, piece);
    expect(badPaddingAt(views, position, size, total)).toBeUndefined();
    // Every padding byte near either end, and a sample of the long runs of zeros between.
    const start = size - position;
    for (let at = start; at < bytes.length; at++) {
      if (at - start > 16 && bytes.length - at > 16 && at % 997 !== 0) continue;
      bytes[at] = (bytes[at] ?? 0) ^ 0x01;
      expect(badPaddingAt(views, position, size, total)).toBe(Math.floor(at / piece));
      bytes[at] = (bytes[at] ?? 0) ^ 0x01;
    }
  });
});
