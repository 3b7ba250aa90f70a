/**
 * Key slots over a vault's life (FORMAT.md 4.6-4.7): changing a passphrase, more passphrases, the recovery key, and
 * the header's backup, export and import. Every refusal leaves the header files byte for byte as they were.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it, vi } from 'vitest';

import { KDF_PRESETS } from '../../src/core/crypto/kdf.js';
import { RecoveryKey } from '../../src/core/crypto/recovery-key.js';
import { replaceRecoverySlot } from '../../src/core/crypto/key-slots.js';
import {
  addPassphraseSlot,
  createVaultKeys,
  rewriteVaultHeader,
  unlockVaultKeys,
} from '../../src/core/crypto/vault-header.js';
import {
  IntegrityError,
  InvalidArgumentError,
  KdfLimitError,
  Vault,
  WrongPassphraseError,
} from '../../src/core/index.js';
import { nativeSodium as sodium } from '../helpers/backends.js';
import { collect, newVault, passphrase, PASSPHRASE, track, writeTree } from '../helpers/vault.js';

const HEADER = 'coffer.header';
const BACKUP = 'coffer.header.bak';

/** Every file of the vault folder but the two header files, hashed: what no key change may touch. */
function contentsDigest(dir: string): string {
  const hash = createHash('sha256');
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }).sort((a, b) =>
    join(a.parentPath, a.name).localeCompare(join(b.parentPath, b.name)),
  )) {
    // The activity log gains the unlock's and the change's entries (FORMAT.md 10); no other byte may change.
    if (!entry.isFile() || [HEADER, BACKUP, 'activity.log'].includes(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    hash
      .update(path)
      .update(readFileSync(path))
      .update(String(statSync(path).mtimeMs));
  }
  return hash.digest('hex');
}

function headerFiles(dir: string): [Buffer, Buffer] {
  return [readFileSync(join(dir, HEADER)), readFileSync(join(dir, BACKUP))];
}

/** Opens the vault folder again and tries to unlock it; the error's code, or 'ok'. */
async function opensWith(dir: string, secret: string, recovery = false): Promise<string> {
  const vault = await Vault.open(dir, { sodium });
  try {
    if (recovery) await vault.unlockWithRecoveryKey(secret);
    else await vault.unlock(passphrase(secret));
    return 'ok';
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  } finally {
    vault.close();
  }
}

async function vaultWithFiles(): Promise<{ vault: Vault; dir: string }> {
  const { vault, dir, root } = await newVault();
  await writeTree(join(root, 'src'), { 'a.txt': 'alpha', 'big.bin': Buffer.alloc(2_000_000, 7) });
  await vault.add([join(root, 'src')]);
  return { vault, dir };
}

describe('changing the passphrase', () => {
  it('rewrites only the slot: the old passphrase fails, the new one opens, no other byte of the vault changes', async () => {
    const { vault: first, dir } = await vaultWithFiles();
    first.close();
    const before = contentsDigest(dir);
    const headerBefore = readFileSync(join(dir, HEADER));
    const vault = track(await Vault.open(dir, { sodium }));
    await vault.unlock(passphrase());
    await vault.changePassphrase(passphrase('new passphrase'));
    vault.close();
    expect(contentsDigest(dir)).toBe(before);
    const [header, backup] = headerFiles(dir);
    expect(header.length).toBe(headerBefore.length);
    expect(backup.equals(header)).toBe(true);
    expect(await opensWith(dir, PASSPHRASE)).toBe('WRONG_PASSPHRASE');
    expect(await opensWith(dir, 'new passphrase')).toBe('ok');
  });

  it('keeps the slot in its place and may change its preset', async () => {
    const { vault, dir } = await newVault();
    await vault.addPassphrase(passphrase('second'), { kdf: 'interactive' });
    await vault.changePassphrase(passphrase('first, changed'), { kdf: 'moderate' });
    expect(vault.keySlots()).toEqual([
      {
        index: 0,
        kind: 'passphrase',
        kdf: { ...KDF_PRESETS.moderate, preset: 'moderate' },
        unlockedWith: true,
      },
      {
        index: 1,
        kind: 'passphrase',
        kdf: { ...KDF_PRESETS.interactive, preset: 'interactive' },
        unlockedWith: false,
      },
    ]);
    // Twice in one session: the second change starts from the header the first wrote.
    await vault.changePassphrase(passphrase('first, again'), { kdf: 'interactive' });
    vault.close();
    expect(await opensWith(dir, 'first, changed')).toBe('WRONG_PASSPHRASE');
    expect(await opensWith(dir, 'first, again')).toBe('ok');
    expect(await opensWith(dir, 'second')).toBe('ok');
  });

  it('is refused after unlocking with the recovery key, and changes nothing', async () => {
    const { vault, dir } = await newVault();
    const key = await vault.createRecoveryKey();
    vault.close();
    const again = track(await Vault.open(dir, { sodium }));
    await again.unlockWithRecoveryKey(key);
    const before = headerFiles(dir);
    await expect(again.changePassphrase(passphrase('x'))).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(headerFiles(dir)).toEqual(before);
  });
});

describe('more passphrases', () => {
  it('adds up to 8 slots, each opening the vault, and refuses a ninth without changing anything', async () => {
    const { vault, dir } = await newVault();
    for (let i = 1; i < 8; i++)
      expect(await vault.addPassphrase(passphrase(`pw ${i}`), { kdf: 'interactive' })).toBe(i);
    const before = headerFiles(dir);
    await expect(vault.addPassphrase(passphrase('pw 8'), { kdf: 'interactive' })).rejects.toThrow(
      /at most 8 key slots/u,
    );
    await expect(vault.createRecoveryKey()).rejects.toThrow(/no room for a recovery key/u);
    expect(headerFiles(dir)).toEqual(before);
    vault.close();
    expect(await opensWith(dir, 'pw 7')).toBe('ok');
    expect(await opensWith(dir, PASSPHRASE)).toBe('ok');
  });

  it('refuses a slot that would break the total KDF budget, before deriving anything', async () => {
    const { vault, dir } = await newVault();
    vault.close();
    // Two costly slots after the real one (10 + 5 passes over 1 GiB: 15.125 of the budget's 16 with the first).
    const keys = await unlockVaultKeys(sodium, readFileSync(join(dir, HEADER)), passphrase());
    const costly = (opslimit: number) => ({
      kind: 'passphrase' as const,
      kdf: { opslimit, memlimitKiB: 1024 * 1024 },
      salt: sodium.randomBytes(16),
      nonce: sodium.randomBytes(24),
      wrappedKek: sodium.randomBytes(48),
    });
    const crafted = await rewriteVaultHeader(sodium, keys, readFileSync(join(dir, HEADER)), (header) => ({
      ...header,
      slots: [...header.slots, costly(10), costly(5)],
    }));
    keys.wipe();
    writeFileSync(join(dir, HEADER), crafted);
    writeFileSync(join(dir, BACKUP), crafted);
    const again = track(await Vault.open(dir, { sodium }));
    await again.unlock(passphrase());
    await expect(again.addPassphrase(passphrase('one more'), { kdf: 'moderate' })).rejects.toBeInstanceOf(
      KdfLimitError,
    );
    expect(headerFiles(dir)).toEqual([crafted, crafted]);
    // The same check guards a passphrase change to a costlier preset.
    await expect(again.changePassphrase(passphrase('x'), { kdf: 'sensitive' })).rejects.toBeInstanceOf(
      KdfLimitError,
    );
    expect(headerFiles(dir)).toEqual([crafted, crafted]);
  });

  it('removes another slot, but never the last one or the one just used', async () => {
    const { vault, dir } = await newVault();
    await expect(vault.removeKeySlot(0)).rejects.toThrow(/only key slot/u);
    await vault.addPassphrase(passphrase('second'), { kdf: 'interactive' });
    const before = headerFiles(dir);
    await expect(vault.removeKeySlot(0)).rejects.toThrow(/just unlocked with/u);
    await expect(vault.removeKeySlot(2)).rejects.toThrow(/no key slot 2/u);
    expect(headerFiles(dir)).toEqual(before);
    vault.close();

    const again = track(await Vault.open(dir, { sodium }));
    await again.unlock(passphrase('second'));
    await again.removeKeySlot(0);
    expect(again.keySlots()).toEqual([
      {
        index: 0,
        kind: 'passphrase',
        kdf: { ...KDF_PRESETS.interactive, preset: 'interactive' },
        unlockedWith: true,
      },
    ]);
    again.close();
    expect(await opensWith(dir, PASSPHRASE)).toBe('WRONG_PASSPHRASE');
    expect(await opensWith(dir, 'second')).toBe('ok');
  });
});

describe('recovery key', () => {
  it('is printed in 8 groups of 5, unlocks like a passphrase, and a new one revokes the old', async () => {
    const { vault, dir } = await newVault();
    const first = await vault.createRecoveryKey();
    expect(first).toMatch(/^[A-Z2-7]{5}(-[A-Z2-7]{5}){7}$/u);
    expect(vault.keySlots().map((slot) => slot.kind)).toEqual(['passphrase', 'recovery-key']);
    vault.close();
    expect(await opensWith(dir, first, true)).toBe('ok');
    // Case, spaces and dashes do not matter.
    expect(await opensWith(dir, first.toLowerCase().replaceAll('-', ' '), true)).toBe('ok');
    expect(await opensWith(dir, PASSPHRASE)).toBe('ok');

    const again = track(await Vault.open(dir, { sodium }));
    await again.unlockWithRecoveryKey(first);
    const second = await again.createRecoveryKey();
    expect(second).not.toBe(first);
    expect(again.keySlots().map((slot) => slot.kind)).toEqual(['passphrase', 'recovery-key']);
    again.close();
    expect(await opensWith(dir, first, true)).toBe('WRONG_PASSPHRASE');
    expect(await opensWith(dir, second, true)).toBe('ok');
  });

  it('tells a typo (malformed) apart from a wrong key, before reading the header', async () => {
    const { vault, dir } = await newVault();
    const key = await vault.createRecoveryKey();
    vault.close();
    const swap = key[0] === 'A' ? 'B' : 'A';
    const typo = swap + key.slice(1);
    const opened = await Vault.open(dir, { sodium });
    await expect(opened.unlockWithRecoveryKey(typo)).rejects.toThrow(/typo/u);
    await expect(
      opened.unlockWithRecoveryKey(RecoveryKey.generate(sodium).format(sodium)),
    ).rejects.toBeInstanceOf(WrongPassphraseError);
    opened.close();
    expect(await opensWith(dir, typo, true)).toBe('INVALID_ARGUMENT');
    expect(await opensWith(dir, key.slice(0, -1), true)).toBe('INVALID_ARGUMENT');
    expect(await opensWith(dir, key.replace(/.$/u, '0'), true)).toBe('INVALID_ARGUMENT');
    // Well formed, but another vault's.
    const other = RecoveryKey.generate(sodium).format(sodium);
    expect(await opensWith(dir, other, true)).toBe('WRONG_PASSPHRASE');
  });
});

/**
 * Flips `mask` in byte `offset` of a closed vault's header, and expects the backup to stand in with a warning and
 * the header to be written again from it at unlock.
 */
async function expectBackupStandsIn(
  dir: string,
  header: Buffer,
  offset: number,
  mask: number,
): Promise<void> {
  const damaged = Buffer.from(header);
  damaged[offset] = (damaged[offset] ?? 0) ^ mask;
  writeFileSync(join(dir, HEADER), damaged);
  const opened = track(await Vault.open(dir, { sodium }));
  expect(opened.warnings).toEqual([expect.stringMatching(/coffer\.header\) is damaged; its backup/u)]);
  await opened.unlock(passphrase());
  opened.close();
  expect(readFileSync(join(dir, HEADER)).equals(header)).toBe(true);
}

describe('header backup', () => {
  it('is written with the header, stands in for a damaged or missing header with a warning, and repairs it', async () => {
    const { vault, dir } = await newVault();
    vault.close();
    const [header, backup] = headerFiles(dir);
    expect(backup.equals(header)).toBe(true);

    await expectBackupStandsIn(dir, header, 40, 1);

    rmSync(join(dir, HEADER));
    const missing = track(await Vault.open(dir, { sodium }));
    expect(missing.warnings).toEqual([expect.stringMatching(/is missing/u)]);
    await missing.unlock(passphrase());
    missing.close();
    expect(readFileSync(join(dir, HEADER)).equals(header)).toBe(true);
    expect((await Vault.open(dir, { sodium })).warnings).toEqual([]);
  });

  it('stands in for a header whose version field was damaged, instead of asking for a newer Coffer', async () => {
    const { vault, dir } = await newVault();
    vault.close();
    const [header] = headerFiles(dir);
    // Version 1 reads as 3; the checksum says the bytes changed.
    await expectBackupStandsIn(dir, header, 8, 2);
  });

  it('is not a way around a wrong passphrase, and both damaged is damage', async () => {
    const { vault, dir } = await newVault();
    vault.close();
    const [header] = headerFiles(dir);
    const damaged = Buffer.from(header);
    damaged[40] = (damaged[40] ?? 0) ^ 1;
    writeFileSync(join(dir, HEADER), damaged);
    writeFileSync(join(dir, BACKUP), damaged);
    await expect(Vault.open(dir, { sodium })).rejects.toMatchObject({ reason: 'header-damaged' });
  });

  it("does not stand in when it is another vault's: the header's own damage, or its absence, is the error", async () => {
    const { vault, dir } = await newVault();
    vault.close();
    const { vault: other, dir: otherDir } = await newVault();
    other.close();
    const [header] = headerFiles(dir);
    const damaged = Buffer.from(header);
    damaged[40] = (damaged[40] ?? 0) ^ 1;
    writeFileSync(join(dir, HEADER), damaged);
    writeFileSync(join(dir, BACKUP), readFileSync(join(otherDir, BACKUP)));
    await expect(Vault.open(dir, { sodium })).rejects.toMatchObject({ reason: 'header-damaged' });
    rmSync(join(dir, HEADER));
    await expect(Vault.open(dir, { sodium })).rejects.toThrow(
      /has no coffer\.header, and its coffer\.header\.bak belongs to another vault/u,
    );
  });

  it('is repaired at unlock when a crash left it older than the header', async () => {
    const { vault, dir } = await newVault();
    const [oldHeader] = headerFiles(dir);
    await vault.changePassphrase(passphrase('new'));
    vault.close();
    // As a crash between the two renames leaves it.
    writeFileSync(join(dir, BACKUP), oldHeader);
    expect(await opensWith(dir, PASSPHRASE)).toBe('WRONG_PASSPHRASE');
    expect(await opensWith(dir, 'new')).toBe('ok');
    const [header, backup] = headerFiles(dir);
    expect(backup.equals(header)).toBe(true);
  });

  it('is repaired, not held back, when a crash mid re-encryption left it holding the retired key', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'src'), { 'a.txt': 'alpha' });
    await vault.add([join(root, 'src', 'a.txt')]);
    // Rotated, with the log's entries under key 2: the header before the re-encryption's last step.
    await vault.rotateKey();
    const [beforeLastStep] = headerFiles(dir);
    await vault.reencrypt();
    vault.close();
    // As a crash between the two renames of the re-encryption's last step leaves it: key 1 in the backup only.
    writeFileSync(join(dir, BACKUP), beforeLastStep);
    const opened = track(await Vault.open(dir, { sodium }));
    expect(await opened.unlock(passphrase())).toEqual([]);
    expect(opened.headerOlderThanData).toBe(false);
    opened.close();
    const [header, backup] = headerFiles(dir);
    expect(backup.equals(header)).toBe(true);
  });

  /**
   * A vault with before.txt under key 1, then a new data key (with `reencrypt`, key 1 retired), after.txt under it;
   * its export from before that, put back as coffer.header.
   */
  async function olderHeaderPutBack(reencrypt: boolean) {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'src'), { 'before.txt': 'under key 1', 'after.txt': 'under key 2' });
    await vault.add([join(root, 'src', 'before.txt')]);
    const exported = vault.exportHeader();
    await vault.rotateKey();
    if (reencrypt) await vault.reencrypt();
    await vault.add([join(root, 'src', 'after.txt')]);
    vault.close();
    const [newer] = headerFiles(dir);
    writeFileSync(join(dir, HEADER), exported);
    return { dir, exported, newer, root };
  }

  /** Imports coffer.header.bak as an export, and checks that every file reads again. */
  async function importBackupAndRead(dir: string) {
    expect(await Vault.importHeader(dir, readFileSync(join(dir, BACKUP)), passphrase(), { sodium })).toEqual(
      [],
    );
    const repaired = track(await Vault.open(dir, { sodium }));
    expect(await repaired.unlock(passphrase())).toEqual([]);
    expect(repaired.headerOlderThanData).toBe(false);
    repaired.requireWritable();
    expect((await repaired.verify({ readData: true })).problems).toEqual([]);
    const read = async (path: string) => (await collect(repaired.read(path))).toString();
    expect([await read('/before.txt'), await read('/after.txt')]).toEqual(['under key 1', 'under key 2']);
    repaired.close();
  }

  it('keeps the backup when an older header lacking a key was put back: no repair, no change, no log entry', async () => {
    const { dir, exported, newer } = await olderHeaderPutBack(false);
    const log = readFileSync(join(dir, 'activity.log'));

    const opened = track(await Vault.open(dir, { sodium }));
    const problems = await opened.unlock(passphrase());
    // The last problem says it (the window leaves it out and says it in its own words).
    const headerProblem = problems.at(-1);
    expect(headerProblem).toMatchObject({ path: '(index)', code: 'INTEGRITY' });
    expect(opened.headerOlderThanData).toBe(true);
    expect((await opened.info()).headerOlderThanData).toBe(true);
    expect(() => {
      opened.requireWritable();
    }).toThrow(IntegrityError);
    expect(headerProblem?.message).toMatch(
      /key 2, held only by coffer\.header\.bak\) names an encryption key the header in use does not hold/u,
    );
    expect(headerProblem?.message).toMatch(/nothing is written to the vault/u);
    // Asked again while unlocked, it says so again.
    expect(await opened.unlock(passphrase())).toEqual(problems);
    // The backup, the only file holding key 2, is not repaired from the older header.
    expect(headerFiles(dir)).toEqual([exported, newer]);
    const index = readFileSync(join(dir, 'index.sqlite'));
    // Nothing is written under the older header: not the header, the tree, a repair nor a re-encryption.
    for (const change of [
      () => opened.changePassphrase(passphrase('new'), { kdf: 'interactive' }),
      () => opened.rotateKey(),
      () => Promise.resolve().then(() => opened.mkdir('/new folder')),
      () => opened.remove(['/before.txt']),
      () => opened.verify({ repair: true }),
      () => opened.reencrypt(),
    ]) {
      const refusal = await change().catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(IntegrityError);
      expect((refusal as Error).message).toMatch(/import coffer\.header\.bak/u);
    }
    // The unlock decides it: locked, nothing is known.
    opened.lock();
    expect(opened.headerOlderThanData).toBe(false);
    opened.close();
    expect(headerFiles(dir)).toEqual([exported, newer]);
    expect(readFileSync(join(dir, 'activity.log')).equals(log)).toBe(true);
    expect(readFileSync(join(dir, 'index.sqlite')).equals(index)).toBe(true);

    // The backup can be imported like an export, and every file reads again.
    await importBackupAndRead(dir);
  });

  it('lets the newer header be imported after a re-encryption retired the older header’s key', async () => {
    const { dir } = await olderHeaderPutBack(true);
    const opened = track(await Vault.open(dir, { sodium }));
    expect((await opened.unlock(passphrase())).map(({ path }) => path)).toContain('(index)');
    opened.close();
    // Nothing was logged under key 1, which the newer header no longer holds: the import's check of the log passes.
    await importBackupAndRead(dir);
  });

  /** A vault rotated with nothing added since, so only the log names key 2; its header from before put back. */
  async function rotatedThenOlderHeaderPutBack() {
    const { vault: created, dir } = await newVault();
    // Closed once first: its snapshot is then under key 1, and no later close has a change to write another.
    created.close();
    const vault = track(await Vault.open(dir, { sodium }));
    await vault.unlock(passphrase());
    const exported = vault.exportHeader();
    // The rotation's entry is sealed under key 2; nothing in the index is.
    await vault.rotateKey();
    vault.close();
    const [newer] = headerFiles(dir);
    writeFileSync(join(dir, HEADER), exported);
    return { dir, exported, newer };
  }

  /** Unlocks `dir` and expects it held back for key 2, with both header files as they were. */
  async function expectHeldBack(dir: string, headers: [Buffer, Buffer]) {
    const opened = track(await Vault.open(dir, { sodium }));
    expect((await opened.unlock(passphrase())).at(-1)?.message).toMatch(
      /key 2, held only by coffer\.header\.bak\) names an encryption key the header in use does not hold/u,
    );
    expect(opened.headerOlderThanData).toBe(true);
    opened.close();
    expect(headerFiles(dir)).toEqual(headers);
  }

  it('tells an older header by the activity log too, when only its entries are under the newer key', async () => {
    const { dir, exported, newer } = await rotatedThenOlderHeaderPutBack();
    const log = readFileSync(join(dir, 'activity.log'));
    await expectHeldBack(dir, [exported, newer]);
    // Nor is the log's last entry, under key 2, dropped as a torn one.
    expect(readFileSync(join(dir, 'activity.log')).equals(log)).toBe(true);

    expect(await Vault.importHeader(dir, newer, passphrase(), { sodium })).toEqual([]);
    const repaired = track(await Vault.open(dir, { sodium }));
    expect(await repaired.unlock(passphrase())).toEqual([]);
    const report = repaired.activityLog();
    expect(report.problems).toEqual([]);
    expect(report.entries.map((entry) => entry.kind)).toContain('rotate');
  });

  it('holds writes back, rather than failing the unlock, when the log that may name the key cannot be read', async () => {
    const { dir, exported, newer } = await rotatedThenOlderHeaderPutBack();
    // Longer than a reader reads (FORMAT.md 10.1).
    const log = join(dir, 'activity.log');
    writeFileSync(log, Buffer.concat([readFileSync(log), Buffer.alloc(32 + 16_384 * 100)]));
    await expectHeldBack(dir, [exported, newer]);
  });

  it('writes no snapshot under the older header, so the next unlock still tells it from the newer one', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'src'), { 'a.txt': 'alpha', 'b.txt': 'beta' });
    await vault.add([join(root, 'src', 'a.txt'), join(root, 'src', 'b.txt')]);
    const exported = vault.exportHeader();
    await vault.rotateKey();
    // Now only the snapshot and the commitment name key 2: no row is under it.
    await vault.remove(['/b.txt']);
    vault.close();
    const [newer] = headerFiles(dir);
    writeFileSync(join(dir, HEADER), exported);
    for (let unlock = 0; unlock < 2; unlock++) {
      const opened = track(await Vault.open(dir, { sodium }));
      expect((await opened.unlock(passphrase())).map(({ message }) => message).join('\n')).toMatch(
        /held only by coffer\.header\.bak/u,
      );
      opened.close();
      expect(headerFiles(dir)).toEqual([exported, newer]);
    }
    expect(await Vault.importHeader(dir, newer, passphrase(), { sodium })).toEqual([]);
    const repaired = track(await Vault.open(dir, { sodium }));
    expect(await repaired.unlock(passphrase())).toEqual([]);
    expect((await repaired.verify({ readData: true })).problems).toEqual([]);
    expect((await collect(repaired.read('/a.txt'))).toString()).toBe('alpha');
  });

  it('makes no new key while the data names one the header in use lacks, so the newer header can still be imported', async () => {
    const { dir, newer, root } = await olderHeaderPutBack(false);
    // Both files old: nothing holds writes back (FORMAT.md 4.7), and after.txt's key 2 is in neither.
    writeFileSync(join(dir, BACKUP), readFileSync(join(dir, HEADER)));
    const opened = track(await Vault.open(dir, { sodium }));
    expect(await opened.unlock(passphrase())).toEqual([
      expect.objectContaining({
        code: 'INTEGRITY',
        message: expect.stringMatching(/header in use does not hold/u) as unknown,
      }),
    ]);
    expect(opened.headerOlderThanData).toBe(false);
    const header = readFileSync(join(dir, HEADER));
    // A key 2 made now would not be after.txt's; a key 3 would leave the data split between two headers.
    for (const change of [() => opened.rotateKey(), () => opened.reencrypt()]) {
      const refusal = await change().catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(IntegrityError);
      expect((refusal as Error).message).toMatch(
        /the vault's data \(key 2\) names an encryption key the header in use does not hold\. The header in use is older than the data/u,
      );
    }
    expect(readFileSync(join(dir, HEADER))).toEqual(header);
    // Other changes are made, under key 1, which the newer header holds too.
    await writeTree(join(root, 'src'), { 'later.txt': 'under key 1 again' });
    await opened.add([join(root, 'src', 'later.txt')]);
    opened.close();

    expect(await Vault.importHeader(dir, newer, passphrase(), { sodium })).toEqual([]);
    const repaired = track(await Vault.open(dir, { sodium }));
    expect(await repaired.unlock(passphrase())).toEqual([]);
    const read = async (path: string) => (await collect(repaired.read(path))).toString();
    expect([await read('/after.txt'), await read('/later.txt')]).toEqual([
      'under key 2',
      'under key 1 again',
    ]);
    expect(await repaired.rotateKey()).toEqual({ keyId: 3, previousKeyId: 2 });
  });

  it('keeps the log entry under the newer key when an older header is put back over both files', async () => {
    const { dir, exported, newer } = await rotatedThenOlderHeaderPutBack();
    writeFileSync(join(dir, BACKUP), exported);
    // Writable (nothing holds writes back): the unlock appends its entry after the rotation's, which it cannot open.
    const opened = track(await Vault.open(dir, { sodium }));
    expect(await opened.unlock(passphrase())).toEqual([]);
    expect(opened.activityLog().problems.map(({ kind }) => kind)).toEqual(['newer-key']);
    // The log alone names key 2: enough to refuse a new key (FORMAT.md 11).
    await expect(opened.rotateKey()).rejects.toThrow(/the vault's data \(key 2\) names an encryption key/u);
    opened.close();

    expect(await Vault.importHeader(dir, newer, passphrase(), { sodium })).toEqual([]);
    const repaired = track(await Vault.open(dir, { sodium }));
    expect(await repaired.unlock(passphrase())).toEqual([]);
    const report = repaired.activityLog();
    expect(report.problems).toEqual([]);
    expect(report.entries.map(({ kind }) => kind)).toEqual([
      'unlock',
      'rotate',
      'unlock',
      'header-imported',
      'unlock',
    ]);
  });

  it('lets the newer header back after an older one put back over both files wrote under a key re-encryption removed', async () => {
    const { dir, exported, newer } = await olderHeaderPutBack(true);
    writeFileSync(join(dir, BACKUP), exported);
    // Writable: its unlock entries are sealed under key 1, which the newer header no longer holds.
    const index = readFileSync(join(dir, 'index.sqlite'));
    const first = track(await Vault.open(dir, { sodium }));
    await first.unlock(passphrase());
    first.close();
    const opened = track(await Vault.open(dir, { sodium }));
    expect((await opened.unlock(passphrase())).length).toBeGreaterThan(0);
    expect(opened.headerOlderThanData).toBe(false);
    // Every entry before them is under key 2 (re-encrypted), the last one too: kept, not dropped as torn.
    expect(opened.activityLog().problems.map(({ kind }) => kind)).toEqual(Array(4).fill('newer-key'));
    // A repair would seal the index commitment under key 1, which no header reading the data holds.
    await expect(opened.verify({ repair: true })).rejects.toThrow(
      /the vault index \(key 2\) names an encryption key the header in use does not hold/u,
    );
    expect(readFileSync(join(dir, 'index.sqlite')).equals(index)).toBe(true);
    opened.close();

    expect(await Vault.importHeader(dir, newer, passphrase(), { sodium })).toEqual([]);
    const repaired = track(await Vault.open(dir, { sodium }));
    expect(await repaired.unlock(passphrase())).toEqual([]);
    const read = async (path: string) => (await collect(repaired.read(path))).toString();
    expect([await read('/before.txt'), await read('/after.txt')]).toEqual(['under key 1', 'under key 2']);
    // Of the older header's entries (two unlocks, the refused repair), the last went as a torn one at the import's
    // append; the others stay, said to be under a key the header no longer holds.
    const report = repaired.activityLog();
    expect(report.problems.map(({ message }) => message.slice(0, message.indexOf(':')))).toEqual(
      [5, 6].map(
        (entry) =>
          `Entry ${entry} of the activity log is sealed under key 1, which the header in use no longer holds`,
      ),
    );
    expect(report.entries.map(({ seq, kind }) => `${seq} ${kind}`)).toEqual([
      '0 add',
      '1 rotate',
      '2 reencrypt',
      '3 add',
      '6 log-repaired',
      '7 header-imported',
      '8 unlock',
    ]);
    // That entry, under a key no header holds now, does not keep a later re-encryption from retiring key 2.
    expect(await repaired.reencrypt()).toMatchObject({ keyId: 3, removedKeyIds: [2], problems: [] });
  });

  it('makes header changes while a damaged log entry names a key no header holds', async () => {
    const { vault, dir } = await vaultWithFiles();
    // A second entry: a damaged last one would be taken for a torn write and dropped by the next append.
    vault.mkdir('/more');
    vault.close();
    // Bytes 8–11 of the first entry (after the log's 32-byte header) are its key id (FORMAT.md 10.2).
    const log = readFileSync(join(dir, 'activity.log'));
    log.writeUInt32LE(16_385, 32 + 8);
    writeFileSync(join(dir, 'activity.log'), log);
    const opened = track(await Vault.open(dir, { sodium }));
    await opened.unlock(passphrase());
    await opened.changePassphrase(passphrase('new'), { kdf: 'interactive' });
    opened.close();
    expect(await opensWith(dir, 'new')).toBe('ok');
  });

  it('never writes over a whole header that arrived after open (a sync service), at unlock or in a change', async () => {
    const { vault, dir } = await newVault();
    vault.close();
    const opened = track(await Vault.open(dir, { sodium }));
    // Another device added a passphrase, and its header arrived while this vault was open and locked.
    const keys = await unlockVaultKeys(sodium, readFileSync(join(dir, HEADER)), passphrase());
    const arrived = await addPassphraseSlot(
      sodium,
      keys,
      readFileSync(join(dir, HEADER)),
      passphrase('b'),
      KDF_PRESETS.interactive,
    );
    keys.wipe();
    writeFileSync(join(dir, HEADER), arrived);
    await opened.unlock(passphrase());
    expect(readFileSync(join(dir, HEADER)).equals(arrived)).toBe(true);
    await expect(opened.addPassphrase(passphrase('c'), { kdf: 'interactive' })).rejects.toThrow(
      /replaced on disk after the vault was opened/u,
    );
    expect(readFileSync(join(dir, HEADER)).equals(arrived)).toBe(true);
    opened.close();
    expect(await opensWith(dir, 'b')).toBe('ok');
  });
});

describe('header export and import', () => {
  it('puts an exported header back; an old export still opens with the passphrase it had (the LUKS catch)', async () => {
    const { vault, dir } = await vaultWithFiles();
    const exported = vault.exportHeader();
    await vault.changePassphrase(passphrase('new'));
    vault.close();
    expect(await opensWith(dir, PASSPHRASE)).toBe('WRONG_PASSPHRASE');
    expect(await Vault.importHeader(dir, exported, passphrase(), { sodium })).toEqual([]);
    expect(headerFiles(dir)).toEqual([exported, exported]);
    expect(await opensWith(dir, PASSPHRASE)).toBe('ok');
    expect(await opensWith(dir, 'new')).toBe('WRONG_PASSPHRASE');
  });

  it('an import whose activity-log entry cannot be written is still done, and says why it was not recorded', async () => {
    const { vault, dir } = await vaultWithFiles();
    const exported = vault.exportHeader();
    vault.close();
    // Not this vault's log any more: nothing may be appended to it (FORMAT.md 10.1).
    const log = readFileSync(join(dir, 'activity.log'));
    log[20] = (log[20] ?? 0) ^ 1;
    writeFileSync(join(dir, 'activity.log'), log);
    const problems = await Vault.importHeader(dir, exported, passphrase(), { sodium });
    expect(problems).toEqual([expect.objectContaining({ path: '(activity log)', code: 'INTEGRITY' })]);
    expect(headerFiles(dir)).toEqual([exported, exported]);
    expect(readFileSync(join(dir, 'activity.log')).equals(log)).toBe(true);
  });

  it('refuses a header exported before a key rotation, writing nothing: what was sealed since stays readable', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'src'), { 'before.txt': 'under key 1' });
    await vault.add([join(root, 'src', 'before.txt')]);
    const exported = vault.exportHeader();
    expect((await vault.rotateKey()).keyId).toBe(2);
    await writeTree(join(root, 'src'), { 'after.txt': 'under key 2' });
    await vault.add([join(root, 'src', 'after.txt')]);
    vault.close();
    const before = headerFiles(dir);
    const log = readFileSync(join(dir, 'activity.log'));
    const error = await Vault.importHeader(dir, exported, passphrase(), { sodium }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(/does not hold key 2, under which data in the vault is sealed/u);
    expect(headerFiles(dir)).toEqual(before);
    expect(readFileSync(join(dir, 'activity.log')).equals(log)).toBe(true);
    const reopened = track(await Vault.open(dir, { sodium }));
    expect(await reopened.unlock(passphrase())).toEqual([]);
    expect((await reopened.verify()).problems).toEqual([]);
  });

  it("refuses another vault's header, a damaged one, and a wrong passphrase, writing nothing", async () => {
    const { vault, dir } = await newVault();
    vault.close();
    const { vault: other } = await newVault();
    const foreign = other.exportHeader();
    other.close();
    const before = headerFiles(dir);
    await expect(Vault.importHeader(dir, foreign, passphrase(), { sodium })).rejects.toMatchObject({
      reason: 'wrong-file',
    });
    const damaged = Buffer.from(before[0]);
    damaged[40] = (damaged[40] ?? 0) ^ 1;
    const error = await Vault.importHeader(dir, damaged, passphrase(), { sodium }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IntegrityError);
    expect(error).toMatchObject({ reason: 'header-damaged' });
    await expect(Vault.importHeader(dir, before[0], passphrase('nope'), { sodium })).rejects.toBeInstanceOf(
      WrongPassphraseError,
    );
    expect(headerFiles(dir)).toEqual(before);
  });
});

describe('info', () => {
  it('lists the slots (kind, KDF) and key ids', async () => {
    const { vault } = await newVault();
    await vault.createRecoveryKey();
    const info = await vault.info();
    expect(info.slots).toEqual([
      {
        index: 0,
        kind: 'passphrase',
        kdf: { ...KDF_PRESETS.interactive, preset: 'interactive' },
        unlockedWith: true,
      },
      { index: 1, kind: 'recovery-key', unlockedWith: false },
    ]);
    expect(info.keyIds).toEqual([1]);
  });
});

describe('recovery slot, byte for byte as FORMAT.md 4.2.1 says', () => {
  it('opens with KR(R, label ‖ salt) and no Argon2id run, and every single-character typo is caught', async () => {
    const argon2id = vi.fn(sodium.argon2id.bind(sodium));
    const counting = { ...sodium, argon2id };
    const { headerBytes, keys } = await createVaultKeys(counting, passphrase(), KDF_PRESETS.interactive);
    const { headerBytes: withRecovery, recoveryKey } = await replaceRecoverySlot(counting, keys, headerBytes);
    const printed = recoveryKey.format(sodium);
    expect(argon2id).toHaveBeenCalledTimes(1);

    // The slot read at the offsets of 4.1/4.2, the key derived and the KEK opened with the primitives alone.
    const slot = withRecovery.subarray(32 + 100, 32 + 200);
    expect([...slot.subarray(0, 12)]).toEqual([2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    const parsed = RecoveryKey.parse(sodium, printed);
    const sk = sodium.blake2b(
      32,
      Buffer.concat([Buffer.from('coffer/v1 recovery-key'), slot.subarray(12, 28)]),
      parsed.secret,
    );
    const aad = Buffer.concat([Buffer.from('coffer/v1 slot'), keys.vaultId, slot.subarray(0, 28)]);
    const kek = sodium.aeadDecrypt(slot.subarray(52, 100), aad, slot.subarray(28, 52), sk);
    expect(kek && Buffer.from(kek).equals(keys.kek.bytes)).toBe(true);
    const unlocked = await unlockVaultKeys(counting, withRecovery, parsed);
    expect(argon2id).toHaveBeenCalledTimes(1);
    expect(unlocked.kek.bytes.equals(keys.kek.bytes)).toBe(true);
    unlocked.wipe();
    keys.wipe();

    const compact = printed.replaceAll('-', '');
    for (let at = 0; at < compact.length; at++) {
      const typo = compact.slice(0, at) + (compact[at] === 'A' ? 'B' : 'A') + compact.slice(at + 1);
      expect(() => RecoveryKey.parse(sodium, typo), `typo at ${at}`).toThrow(InvalidArgumentError);
    }
  });
});
