import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';

import Database from 'better-sqlite3';
import { afterEach } from 'vitest';

import { encodePassphrase, Vault, type CreateOptions } from '../../src/core/index.js';
import { nativeSodium } from './backends.js';

export const PASSPHRASE = 'correct horse battery staple';
export const passphrase = (text = PASSPHRASE): Buffer => encodePassphrase(nativeSodium, text);

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A fresh temp folder, removed after the test. `base` picks the file system (e.g. /dev/shm for big files). */
export function tempDir(base = tmpdir()): string {
  const dir = mkdtempSync(join(base, 'coffer-test-'));
  cleanups.push(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Registers a vault to close after the test even if it fails midway. */
export function track(vault: Vault): Vault {
  cleanups.unshift(() => {
    vault.close();
  });
  return vault;
}

/** Creates an unlocked vault at the KDF floor (fast) in a temp folder; `options` as for {@link Vault.create}. */
export async function newVault(
  options: CreateOptions = {},
): Promise<{ vault: Vault; dir: string; root: string }> {
  const root = tempDir();
  const dir = join(root, 'vault');
  const vault = track(
    await Vault.create(dir, passphrase(), { kdf: 'interactive', sodium: nativeSodium, ...options }),
  );
  return { vault, dir, root };
}

/** The vault in `dir`, opened; closed after the test. */
export async function openVault(dir: string): Promise<Vault> {
  return track(await Vault.open(dir, { sodium: nativeSodium }));
}

/** The vault in `dir`, opened and unlocked with {@link passphrase}; closed after the test. */
export async function unlockedVault(dir: string): Promise<Vault> {
  const vault = await openVault(dir);
  await vault.unlock(passphrase());
  return vault;
}

/** Writes a tree of files: keys are relative paths, values their contents. */
export async function writeTree(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [path, contents] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), contents);
  }
}

export async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Straight from a closed vault's folder and index (no Vault.open, which would recover): the packs and blob files
 * no contents row names, and how many intents are recorded. Both empty when nothing was left behind.
 */
export function leftBehind(dir: string): { files: string[]; intents: number } {
  const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
  try {
    const packs = new Set(
      (
        db
          .prepare('SELECT DISTINCT pack_id FROM contents WHERE pack_id IS NOT NULL')
          .pluck()
          .all() as Buffer[]
      ).map((id) => `${id.toString('hex')}.pack`),
    );
    const blobs = new Set(
      (db.prepare('SELECT file_id FROM contents WHERE pack_id IS NULL').pluck().all() as Buffer[]).map((id) =>
        id.toString('hex'),
      ),
    );
    const files = [
      ...readdirSync(join(dir, 'packs'))
        .filter((name) => !packs.has(name))
        .map((name) => `packs/${name}`),
      ...readdirSync(join(dir, 'blobs'), { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile() && !blobs.has(entry.name))
        .map((entry) => `blobs/${entry.name}`),
      ...readdirSync(join(dir, 'tmp')).map((name) => `tmp/${name}`),
    ];
    const intents = db.prepare('SELECT count(*) FROM intents').pluck().get() as number;
    return { files, intents };
  } finally {
    db.close();
  }
}
