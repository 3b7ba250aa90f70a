/**
 * Measures what padding the sealed records (FORMAT.md 7) and the tree snapshot (8.6) to buckets costs on a
 * vault of 100,000 real names, and how often one rename still changes a stored length: the first 100,000 files
 * and folders under /usr/share (or the folder given), as records the way the engine encodes them.
 * Run: npx tsx scripts/metadata-padding.ts [folder]
 */
import { randomBytes } from 'node:crypto';
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { snapshotPlaintextSize } from '../src/core/vault/snapshot.js';
import { encodeRecord } from '../src/core/vault/tree.js';

const COUNT = 100_000;
const root = process.argv[2] ?? '/usr/share';

interface Entry {
  name: string;
  parent: string | null;
  folder: boolean;
  size: number;
  mtime: number;
}
const entries: Entry[] = [];
const queue: { dir: string; id: string | null }[] = [{ dir: root, id: null }];
while (queue.length > 0 && entries.length < COUNT) {
  const { dir, id } = queue.shift() ?? { dir: '', id: null };
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    continue;
  }
  for (const name of names) {
    if (entries.length >= COUNT) break;
    const stats = lstatSync(join(dir, name), { throwIfNoEntry: false });
    if (!stats) continue;
    const folder = stats.isDirectory();
    const entryId = randomBytes(16).toString('hex');
    entries.push({ name, parent: id, folder, size: folder ? 0 : stats.size, mtime: stats.mtimeMs });
    if (folder) queue.push({ dir: join(dir, name), id: entryId });
  }
}

const recordLength = (entry: Entry, name = entry.name): number =>
  encodeRecord({
    type: entry.folder ? 'folder' : 'file',
    name,
    parent: entry.parent,
    size: entry.size,
    mtime: entry.mtime,
    ...(entry.folder ? {} : { fileId: randomBytes(16).toString('hex') }),
  }).length;
const sealed = (length: number, block: number): number => 40 + block * (Math.floor(length / block) + 1);

const lengths = entries.map((entry) => recordLength(entry));
// One rename each: the entry takes another entry's name; does its sealed length change?
const renamed = entries.map((entry, i) =>
  recordLength(entry, entries[(i * 7919 + 1) % entries.length]?.name),
);
const nameBytes = entries.reduce((sum, entry) => sum + Buffer.byteLength(entry.name), 0);

console.log(`${entries.length} entries from ${root}; names ${nameBytes} bytes in all`);
console.log('| Record bucket | Sealed records | vs 32 | Renames that change the length |');
console.log('| ---: | ---: | ---: | ---: |');
const base = lengths.reduce((sum, length) => sum + sealed(length, 32), 0);
for (const block of [32, 64, 128, 256]) {
  const total = lengths.reduce((sum, length) => sum + sealed(length, block), 0);
  const changed = lengths.filter(
    (length, i) => sealed(length, block) !== sealed(renamed[i] ?? 0, block),
  ).length;
  console.log(
    `| ${block} B | ${(total / 1e6).toFixed(2)} MB | +${(((total - base) / base) * 100).toFixed(1)} % | ${((changed / lengths.length) * 100).toFixed(1)} % |`,
  );
}
const plain = snapshotPlaintextSize(entries.length, nameBytes, false);
const padded = snapshotPlaintextSize(entries.length, nameBytes, true);
let snapshotChanges = 0;
for (let i = 0; i < entries.length; i++) {
  const delta = (renamed[i] ?? 0) - (lengths[i] ?? 0);
  if (snapshotPlaintextSize(entries.length, nameBytes + delta, true) !== padded) snapshotChanges++;
}
console.log(
  `Snapshot plaintext: ${plain} bytes unpadded (version 1), ${padded} padded (+${(((padded - plain) / plain) * 100).toFixed(2)} %); ` +
    `${((snapshotChanges / entries.length) * 100).toFixed(2)} % of single renames change its padded length`,
);
