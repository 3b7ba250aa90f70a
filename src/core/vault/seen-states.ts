import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { writeFileAtomic } from './durable.js';

/**
 * Rollback memory kept outside the vault (FORMAT.md section 8.8, THREAT-MODEL.md): per vault id, the last state of
 * its index this computer saw. A whole vault folder put back from an older copy is a valid vault, so nothing inside
 * it can show that it went backwards; this memory can. One small JSON file per vault id, so two processes working on
 * two vaults never write the same file (one vault is only ever open in one process: its lock).
 */

/** Which state of a vault's index was seen: its generation, and a fingerprint of its sealed commitment. */
export interface IndexState {
  readonly vaultId: string;
  /** `meta.generation`, a u64 in decimal. */
  readonly generation: string;
  /** BLAKE2b-256 of the stored `meta.index_commitment` (hex); empty for a format 1.0 index, which has none. */
  readonly fingerprint: string;
  /**
   * The index was format 1.0 when this open found it (read as it is, or brought to 1.1 by this unlock). Not kept:
   * it says how the state now was reached.
   */
  readonly foundAsFormat10?: boolean;
}

const FOLDER = 'seen-vaults';
const VAULT_ID = /^[0-9a-f]{32}$/u;
const DECIMAL = /^\d{1,20}$/u;
const FINGERPRINT = /^(?:[0-9a-f]{64})?$/u;

/**
 * What a vault's index now is, compared with what was seen last: a warning for the user when it went backwards, or
 * is another state at the same generation (another copy, changed separately); `undefined` when it is the same or
 * newer, or was never seen.
 */
export function rollbackWarning(seen: IndexState | undefined, now: IndexState): string | undefined {
  if (!seen || seen.vaultId !== now.vaultId) return undefined;
  const before = BigInt(seen.generation);
  const current = BigInt(now.generation);
  const advice =
    'Changes made since then may be missing, and deleted files may be back. If you did not put back an older copy ' +
    'of the vault on purpose, look for the newest copy (your sync service, a backup) before changing anything.';
  // A 1.0 index has no authenticated generation, and the upgrade at unlock seals whatever it claims: an index from
  // before this vault's upgrade, put back, would otherwise pass as newer.
  if (seen.fingerprint !== '' && now.foundAsFormat10 === true) {
    return (
      'This vault is older than when this computer last opened it: its index was in format 1.1 then and is in the ' +
      `older format 1.0 now, so it was replaced by a copy from before the vault was upgraded. ${advice}`
    );
  }
  if (current < before) {
    return (
      `This vault is older than when this computer last opened it: its index went back from change ${before} to ` +
      `change ${current}. The vault folder (or its index) was replaced by an older copy. ${advice}`
    );
  }
  if (current === before && seen.fingerprint !== '' && now.fingerprint !== seen.fingerprint) {
    return (
      `This vault is not the one this computer last opened: its index is at the same change (${current}) but in ` +
      `another state, so another copy of the vault was changed separately, or the index was replaced. ${advice}`
    );
  }
  return undefined;
}

/** The memory of seen index states in a folder outside every vault (the CLI's state folder, the app's data folder). */
export class SeenStates {
  readonly #dir: string;

  constructor(stateDir: string) {
    this.#dir = join(stateDir, FOLDER);
  }

  #path(vaultId: string): string {
    if (!VAULT_ID.test(vaultId)) throw new Error('internal error: a vault id is 32 lowercase hex digits');
    return join(this.#dir, `${vaultId}.json`);
  }

  /**
   * The state last remembered for a vault; `undefined` when none was, or the file is not one Coffer wrote (it is
   * then overwritten at the next {@link SeenStates.remember}).
   * @throws the file system's error when the file exists but cannot be read.
   */
  recall(vaultId: string): IndexState | undefined {
    let text: string;
    try {
      text = readFileSync(this.#path(vaultId), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const { generation, fingerprint } = JSON.parse(text) as Record<string, unknown>;
      if (typeof generation === 'string' && DECIMAL.test(generation) && typeof fingerprint === 'string')
        if (FINGERPRINT.test(fingerprint)) return { vaultId, generation, fingerprint };
    } catch {
      // not JSON: as if nothing was remembered
    }
    return undefined;
  }

  /**
   * Remembers a vault's current state (temp file, fsync, rename), unless it is the state remembered already: an
   * unlock after a lock with no change between would otherwise wait for the disk (1 to 30 ms here) for nothing.
   * @throws {@link IoError} (or the file system's error for the folder) when it cannot be written.
   */
  remember(state: IndexState): void {
    let known: IndexState | undefined;
    try {
      known = this.recall(state.vaultId);
    } catch {
      known = undefined; // unreadable: written anew
    }
    if (known?.generation === state.generation && known.fingerprint === state.fingerprint) return;
    mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
    const { generation, fingerprint } = state;
    writeFileAtomic(
      this.#path(state.vaultId),
      Buffer.from(`${JSON.stringify({ generation, fingerprint })}\n`),
    );
  }
}
