/**
 * Makes a vault with the engine directly (not through the window), for flows that need many entries: creating
 * thousands of files through the window would test the add, not the browser. Files are streamed, so nothing is
 * written to disk but the vault.
 */
import { encodePassphrase, loadSodium, Vault } from '../src/core/index.js';
import { PASSPHRASE } from './steps.js';

/** Folder path in the vault → the names of the files to make in it (each holds its own name as bytes). */
export type VaultLayout = ReadonlyMap<string, readonly string[]>;

/** Creates a vault in the new folder `dir`, unlockable with {@link PASSPHRASE}, holding `layout`. */
export async function makeVault(dir: string, layout: VaultLayout): Promise<void> {
  const sodium = await loadSodium();
  const vault = await Vault.create(dir, encodePassphrase(sodium, PASSPHRASE), { kdf: 'interactive', sodium });
  try {
    const mtime = Date.UTC(2026, 7, 12, 14, 3);
    for (const [folder, names] of layout) {
      vault.mkdir(folder);
      const files = names.map((name) => {
        const bytes = new TextEncoder().encode(name);
        return { name, size: bytes.length, mtime, bytes };
      });
      const report = await vault.addStreams(files, folder);
      if (report.problems.length > 0) throw new Error(`making the vault: ${report.problems[0]?.message}`);
    }
  } finally {
    vault.close();
  }
}

/** File names numbered from `first`: "file-000000.txt"… */
export function fileNames(first: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `file-${String(first + i).padStart(6, '0')}.txt`);
}

/**
 * `folders` folders under `parent` ("<parent>/folder-000"…), each with `perFolder` files numbered on from
 * `firstFile` across the folders.
 */
export function spreadLayout(
  parent: string,
  folders: number,
  perFolder: number,
  firstFile = 0,
): [string, string[]][] {
  return Array.from({ length: folders }, (_, f) => [
    `${parent}/folder-${String(f).padStart(3, '0')}`,
    fileNames(firstFile + f * perFolder, perFolder),
  ]);
}
