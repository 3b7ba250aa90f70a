/**
 * The back end of a vault's Security page (issue 14): changing, adding and removing passphrases, the recovery key,
 * the activity log and what the log could not record. Secrets arrive as strings over the contract (as for unlock)
 * and reach the engine only as wipeable buffers; keys never leave the engine.
 */
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';

import { describeSlots } from '../core/crypto/key-slots.js';
import { encodePassphrase } from '../core/crypto/kdf.js';
import { RecoveryKey } from '../core/crypto/recovery-key.js';
import type { SodiumBackend } from '../core/crypto/sodium.js';
import { parseVaultHeader, unlockVaultKeys } from '../core/crypto/vault-header.js';
import { InvalidArgumentError, WrongPassphraseError } from '../core/errors.js';
import { writeFileAtomic } from '../core/vault/durable.js';
import type { Vault } from '../core/vault/vault.js';
import type { ParsedRequestOf, ResponseOf } from '../shared/contract.js';

export type SecurityChannel =
  | 'security.changePassphrase'
  | 'security.addPassphrase'
  | 'security.removeSlot'
  | 'security.makeRecoveryKey'
  | 'security.activityLog'
  | 'security.logProblems'
  | 'security.exportHeader';

type SecurityHandlers = {
  [C in SecurityChannel]: (request: ParsedRequestOf<C>) => Promise<ResponseOf<C>> | ResponseOf<C>;
};

/**
 * Checks that `current` opens the key slot this session was unlocked with, against the header in use, without
 * changing anything (no failed-unlock count either: the vault is unlocked). After an unlock with the recovery key,
 * `current` is that key. Takes one key derivation per passphrase slot tried.
 * @throws {@link WrongPassphraseError} when it opens no slot, or another one than this session's.
 * @throws {@link InvalidArgumentError} for a recovery key with a typo.
 */
async function confirmCurrentSecret(sodium: SodiumBackend, vault: Vault, current: string): Promise<void> {
  const header = vault.exportHeader(); // throws VaultLockedError while locked
  const inUse = vault.keySlots().find((slot) => slot.unlockedWith);
  if (!inUse) throw new InvalidArgumentError("This session's way in is no longer in the vault header.");
  const secret =
    inUse.kind === 'recovery-key' ? RecoveryKey.parse(sodium, current) : encodePassphrase(sodium, current);
  try {
    const keys = await unlockVaultKeys(sodium, header, secret);
    const opened = describeSlots(parseVaultHeader(sodium, header), keys.openedSlotSalt).find(
      (slot) => slot.unlockedWith,
    );
    keys.wipe();
    if (opened?.index !== inUse.index)
      throw new WrongPassphraseError(inUse.kind === 'recovery-key' ? 'recovery key' : 'passphrase');
  } finally {
    if (secret instanceof RecoveryKey) secret.wipe(sodium);
    else secret.fill(0);
  }
}

/**
 * The Security page's handlers, for the back end's table. `vaultOf` finds an open vault by id (throwing for an
 * unknown one); `withPassphrase` hands the engine a passphrase as a buffer it wipes afterwards.
 */
export function securityHandlers(deps: {
  readonly sodium: () => Promise<SodiumBackend>;
  readonly vaultOf: (vaultId: string) => Vault;
  readonly withPassphrase: <T>(text: string, use: (passphrase: Buffer) => Promise<T>) => Promise<T>;
  /** The folder a 'header-backup' handle of this vault names. */
  readonly folderOf: (handle: string, vaultId: string) => string;
  /** Runs a check of the current passphrase at the pace wrong ones earn, shared with the vault's unlocks. */
  readonly paced: (vaultId: string, attempt: () => Promise<void>) => Promise<void>;
}): SecurityHandlers {
  const confirmed = async (vaultId: string, current: string): Promise<Vault> => {
    const vault = deps.vaultOf(vaultId);
    const sodium = await deps.sodium();
    await deps.paced(vaultId, () => confirmCurrentSecret(sodium, vault, current));
    return vault;
  };
  return {
    'security.changePassphrase': async (request) => {
      const vault = await confirmed(request.vaultId, request.current);
      await deps.withPassphrase(request.passphrase, (passphrase) =>
        vault.changePassphrase(passphrase, request.kdf ? { kdf: request.kdf } : {}),
      );
      return { logProblems: vault.takeLogProblems() };
    },
    'security.addPassphrase': async (request) => {
      const vault = await confirmed(request.vaultId, request.current);
      const index = await deps.withPassphrase(request.passphrase, (passphrase) =>
        vault.addPassphrase(passphrase, { kdf: request.kdf }),
      );
      return { index, logProblems: vault.takeLogProblems() };
    },
    'security.removeSlot': async (request) => {
      const vault = deps.vaultOf(request.vaultId);
      await vault.removeKeySlot(request.index);
      return { logProblems: vault.takeLogProblems() };
    },
    'security.makeRecoveryKey': async (request) => {
      const vault = await confirmed(request.vaultId, request.current);
      const recoveryKey = await vault.createRecoveryKey();
      return { recoveryKey, logProblems: vault.takeLogProblems() };
    },
    'security.activityLog': (request) => {
      const { entries, dropped, problems } = deps.vaultOf(request.vaultId).activityLog();
      return {
        entries: entries.map(({ seq, time, kind, outcome, counts, flags }) => ({
          seq,
          time,
          kind,
          outcome,
          counts,
          flags,
        })),
        dropped,
        problems: problems.map(({ kind, message }) => ({ kind, message })),
      };
    },
    'security.logProblems': (request) => deps.vaultOf(request.vaultId).takeLogProblems(),
    'security.exportHeader': (request) => {
      const vault = deps.vaultOf(request.vaultId);
      const header = vault.exportHeader();
      const folder = deps.folderOf(request.folder, request.vaultId);
      const fileName = freeName(
        folder,
        `${basename(vault.dir)} header ${isoDate(new Date())}`,
        HEADER_BACKUP_SUFFIX,
      );
      writeFileAtomic(join(folder, fileName), header);
      return { fileName, folder };
    },
  };
}

/** What a saved header backup's name ends with (what `coffer header import` reads back). */
const HEADER_BACKUP_SUFFIX = '.coffer-header';

/** "2026-11-23", in the local calendar: the day the user sees. */
function isoDate(date: Date): string {
  const pad = (value: number): string => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** `stem` + `suffix`, or with " (2)", " (3)"… when that name is taken: a backup never replaces a file. */
function freeName(folder: string, stem: string, suffix: string): string {
  for (let count = 1; ; count++) {
    const name = `${stem}${count === 1 ? '' : ` (${count})`}${suffix}`;
    if (!existsSync(join(folder, name))) return name;
  }
}
