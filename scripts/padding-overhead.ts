/**
 * Measures what content padding (FORMAT.md section 5.7) costs on real files: walks the folders given (default
 * /usr/share, /usr/lib and this checkout's node_modules), without following links, and compares the bytes the
 * files' blobs take unpadded and padded with Padmé, in total and per size class. Only sizes are read.
 * Run: npx tsx scripts/padding-overhead.ts [folder...]
 */
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { blobSize } from '../src/core/crypto/content.js';
import { blobPlaintextSize } from '../src/core/crypto/padding.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const CLASSES = [
  { name: '0 – 1 KiB', below: KiB },
  { name: '1 – 64 KiB', below: 64 * KiB },
  { name: '64 KiB – 1 MiB', below: MiB + 1 },
  { name: '1 – 64 MiB', below: 64 * MiB },
  { name: '64 MiB and up', below: Infinity },
];

const roots = process.argv.slice(2);
if (roots.length === 0) roots.push('/usr/share', '/usr/lib', join(import.meta.dirname, '..', 'node_modules'));

const totals = CLASSES.map(() => ({ files: 0, content: 0, unpadded: 0, padded: 0 }));

function walk(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    const stats = lstatSync(path, { throwIfNoEntry: false });
    if (stats?.isDirectory()) walk(path);
    else if (stats?.isFile()) {
      const size = stats.size;
      const at = CLASSES.findIndex((c) => size < c.below);
      const total = totals[at];
      if (!total) continue;
      total.files++;
      total.content += size;
      total.unpadded += blobSize(size);
      total.padded += blobSize(blobPlaintextSize(size, true));
    }
  }
}

for (const root of roots) walk(root);

const pct = (padded: number, unpadded: number): string =>
  unpadded === 0 ? '–' : `${(((padded - unpadded) / unpadded) * 100).toFixed(2)} %`;
const mib = (bytes: number): string => `${(bytes / MiB).toFixed(1)} MiB`;
console.log(`Folders: ${roots.join(', ')}`);
console.log('| Size class | Files | Contents | Stored unpadded | Stored with Padmé | Padding costs |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
const all = { files: 0, content: 0, unpadded: 0, padded: 0 };
CLASSES.forEach((c, i) => {
  const t = totals[i] ?? all;
  for (const key of ['files', 'content', 'unpadded', 'padded'] as const) all[key] += t[key];
  console.log(
    `| ${c.name} | ${t.files} | ${mib(t.content)} | ${mib(t.unpadded)} | ${mib(t.padded)} | ${pct(t.padded, t.unpadded)} |`,
  );
});
console.log(
  `| All | ${all.files} | ${mib(all.content)} | ${mib(all.unpadded)} | ${mib(all.padded)} | ${pct(all.padded, all.unpadded)} |`,
);
