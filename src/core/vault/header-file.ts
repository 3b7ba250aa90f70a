import { randomBytes } from 'node:crypto';
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';

import type { SodiumBackend } from '../crypto/sodium.js';
import { MAX_HEADER_BYTES, parseVaultHeader } from '../crypto/vault-header.js';
import { IntegrityError, InvalidArgumentError, NotAVaultError } from '../errors.js';
import { writeFileAtomicSync } from '../publish.js';
import { announceWrite } from '../test-hooks.js';
import { asIoError } from './durable.js';
import {
  HEADER_BACKUP_FILE,
  HEADER_FILE,
  PRIVATE_FOLDER_MODE,
  TEMP_DIR,
  VAULT_READ_FLAGS,
} from './layout.js';

/** The header a vault was opened with, and where it came from. */
export interface LoadedHeader {
  readonly bytes: Buffer;
  readonly vaultId: Buffer;
  /** Set when `coffer.header` was missing or damaged and its backup is in use (FORMAT.md 4.7). */
  readonly warning?: string;
  /**
   * With the backup in use: what `coffer.header` gave (its damage, or that it is missing), the error to report
   * instead when the backup turns out not to be this index's vault's (FORMAT.md 4.7).
   */
  readonly replaced?: IntegrityError | NotAVaultError;
}

/**
 * A header file's bytes, but never more than one byte past the largest header: a longer file then fails the
 * header's checks as damage (FORMAT.md 4.1), where reading it whole could take gigabytes or fail untyped.
 */
async function readHeaderFile(dir: string, name: string): Promise<Buffer | undefined> {
  const what = `Could not read the vault header in "${dir}"`;
  let file;
  try {
    file = await open(join(dir, name), VAULT_READ_FLAGS);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw asIoError(error, what);
  }
  try {
    const bytes = Buffer.alloc(Math.min((await file.stat()).size, MAX_HEADER_BYTES + 1));
    let filled = 0;
    for (let read = -1; read !== 0 && filled < bytes.length; filled += read) {
      ({ bytesRead: read } = await file.read(bytes, filled, bytes.length - filled, filled));
    }
    return bytes.subarray(0, filled);
  } catch (error) {
    throw asIoError(error, what);
  } finally {
    await file.close();
  }
}

/** Damage a backup can stand in for: not a newer format, which the backup would not read either. */
function isDamage(error: unknown): error is IntegrityError | NotAVaultError {
  return error instanceof IntegrityError || error instanceof NotAVaultError;
}

/**
 * Reads the vault header, falling back to `coffer.header.bak` when `coffer.header` is missing or fails its
 * checksum or structure (FORMAT.md 4.7). Only checksum and structure are checked here; the caller checks the vault
 * id against the index and the MAC at unlock.
 * @throws {@link NotAVaultError} when neither file is there; otherwise the error `coffer.header` gave, when the
 * backup cannot stand in for it.
 */
export async function loadVaultHeader(dir: string, sodium: SodiumBackend): Promise<LoadedHeader> {
  const primary = await readHeaderFile(dir, HEADER_FILE);
  let failure: IntegrityError | NotAVaultError | undefined;
  if (primary) {
    try {
      return { bytes: primary, vaultId: parseVaultHeader(sodium, primary).vaultId };
    } catch (error) {
      if (!isDamage(error)) throw error;
      failure = error;
    }
  }
  const backup = await readHeaderFile(dir, HEADER_BACKUP_FILE);
  if (!backup) {
    if (failure !== undefined) throw failure;
    throw new NotAVaultError(
      `"${dir}" is not a Coffer vault (it has no ${HEADER_FILE}). Choose the folder you created the vault in.`,
    );
  }
  let vaultId: Buffer;
  try {
    vaultId = parseVaultHeader(sodium, backup).vaultId;
  } catch (error) {
    throw failure ?? error;
  }
  const what = primary ? 'is damaged' : 'is missing';
  return {
    bytes: backup,
    vaultId,
    replaced:
      failure ??
      new NotAVaultError(
        `"${dir}" is not a Coffer vault: it has no ${HEADER_FILE}, and its ${HEADER_BACKUP_FILE} belongs to ` +
          'another vault. Choose the folder you created the vault in.',
      ),
    warning:
      `The vault header (${HEADER_FILE}) ${what}; its backup (${HEADER_BACKUP_FILE}) is used instead. ` +
      `Unlocking the vault writes ${HEADER_FILE} again from the backup.`,
  };
}

/**
 * Replaces one header file atomically and durably: a Coffer temp file in tmp/ (removed by the next open if a crash
 * leaves it), fsync, rename, fsync the vault folder.
 */
function replaceHeaderFile(dir: string, name: string, bytes: Buffer): void {
  const temp = join(dir, TEMP_DIR, `${randomBytes(16).toString('hex')}.tmp`);
  writeFileAtomicSync({ temp, target: join(dir, name) }, bytes, () => {
    announceWrite('pending');
  });
  announceWrite('committed');
}

/**
 * Writes a header as `coffer.header`, then as `coffer.header.bak`, skipping a file that already holds exactly these
 * bytes (FORMAT.md 4.7). A crash leaves each file whole; between the two the header is new and the backup old,
 * which the next unlock repairs.
 * @throws {@link IoError} when the disk refuses.
 */
export async function writeVaultHeader(dir: string, bytes: Buffer): Promise<void> {
  try {
    await mkdir(join(dir, TEMP_DIR), { recursive: true, mode: PRIVATE_FOLDER_MODE });
    for (const name of [HEADER_FILE, HEADER_BACKUP_FILE]) {
      const current = await readHeaderFile(dir, name).catch(() => undefined);
      if (!current?.equals(bytes)) replaceHeaderFile(dir, name, bytes);
    }
  } catch (error) {
    throw asIoError(error, `Could not write the vault header in "${dir}"`);
  }
}

/**
 * Whether `coffer.header` on disk still holds `inUse`: `other` when it is a whole header with other bytes (a sync
 * service or another copy of Coffer put it there since the vault was opened), `damaged` when missing or broken.
 */
async function headerOnDisk(
  dir: string,
  sodium: SodiumBackend,
  inUse: Buffer,
): Promise<'same' | 'damaged' | 'other'> {
  const bytes = await readHeaderFile(dir, HEADER_FILE).catch(() => undefined);
  if (!bytes) return 'damaged';
  if (bytes.equals(inUse)) return 'same';
  try {
    parseVaultHeader(sodium, bytes);
    return 'other';
  } catch {
    return 'damaged';
  }
}

/**
 * The repair after unlock (FORMAT.md 4.7): writes the header that unlocked over a damaged or missing `coffer.header`,
 * and over a backup that differs. A whole `coffer.header` with other bytes is left alone, and so is its backup: it
 * arrived after the vault was opened, and the next open uses it.
 */
export async function repairVaultHeader(dir: string, sodium: SodiumBackend, inUse: Buffer): Promise<void> {
  if ((await headerOnDisk(dir, sodium, inUse)) !== 'other') await writeVaultHeader(dir, inUse);
}

/**
 * The key ids `coffer.header.bak` holds and `inUse` does not, when the backup is a whole header of the same vault
 * with other bytes (FORMAT.md 4.7): a newer header, when the vault's data names one of them. Only its key ids are
 * read, unauthenticated: a forged backup can only hold back the session's writes. None when the
 * backup is missing, damaged, another vault's, or holds the same bytes.
 * @throws {@link IoError} when the backup cannot be read for another reason than its absence.
 */
export async function keyIdsOnlyInBackup(
  dir: string,
  sodium: SodiumBackend,
  inUse: Buffer,
): Promise<number[]> {
  const backup = await readHeaderFile(dir, HEADER_BACKUP_FILE);
  if (!backup || backup.equals(inUse)) return [];
  const header = parseVaultHeader(sodium, inUse);
  let other;
  try {
    other = parseVaultHeader(sodium, backup);
  } catch {
    return [];
  }
  if (!other.vaultId.equals(header.vaultId)) return [];
  const held = new Set(header.deks.map((dek) => dek.keyId));
  return other.deks.map((dek) => dek.keyId).filter((keyId) => !held.has(keyId));
}

/**
 * Replaces the header in use by `next` (a header change, FORMAT.md 4.6), unless `coffer.header` on disk is no
 * longer the header in use, which the change would silently undo.
 * @throws {@link InvalidArgumentError} then, with nothing written; {@link IoError} when the disk refuses.
 */
export async function replaceVaultHeader(
  dir: string,
  sodium: SodiumBackend,
  inUse: Buffer,
  next: Buffer,
): Promise<void> {
  if ((await headerOnDisk(dir, sodium, inUse)) === 'other') {
    throw new InvalidArgumentError(
      `The vault header (${HEADER_FILE}) was replaced on disk after the vault was opened, by a sync service or ` +
        'another copy of Coffer. Nothing was changed. Lock the vault, open it again, and try again.',
    );
  }
  await writeVaultHeader(dir, next);
}
