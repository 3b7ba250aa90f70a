import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { Keyring, SecretKey } from '../../src/core/crypto/keys.js';
import { IntegrityError, Vault, WrongPassphraseError } from '../../src/core/index.js';
import { ActivityLog, LOG_HEADER_BYTES, type LogLimits } from '../../src/core/vault/activity-log.js';
import { LOG_ENTRY_BYTES, type ActivityEntry } from '../../src/core/vault/log-entry.js';
import { nativeSodium } from '../helpers/backends.js';
import { newVault, passphrase, tempDir, track, writeTree } from '../helpers/vault.js';

const E = LOG_ENTRY_BYTES;
const H = LOG_HEADER_BYTES;

/** A log over a fresh folder with its own random vault id and key 1. */
function bareLog(limits?: LogLimits): { log: ActivityLog; dir: string; vaultId: Buffer; keyring: Keyring } {
  const dir = tempDir();
  mkdirSync(join(dir, 'tmp'));
  const keyring = new Keyring();
  keyring.add(1, SecretKey.generate(nativeSodium));
  const vaultId = nativeSodium.randomBytes(16);
  return {
    log: new ActivityLog(dir, { sodium: nativeSodium, keyring, vaultId }, limits),
    dir,
    vaultId,
    keyring,
  };
}

function appendMany(log: ActivityLog, count: number): void {
  for (let i = 0; i < count; i++) log.append({ kind: 'move', counts: { entries: i + 1 } });
}

/** Entry `i`, which the test has made sure exists. */
function nth(entries: readonly Buffer[], i: number): Buffer {
  const entry = entries[i];
  if (entry === undefined) throw new Error(`the test log has no entry ${i}`);
  return entry;
}

const kinds = (entries: readonly ActivityEntry[]): string[] => entries.map((entry) => entry.kind);
const logPath = (dir: string): string => join(dir, 'activity.log');

/** The log's bytes with its entries rearranged by `edit` (given and returning whole entries). */
function editEntries(dir: string, edit: (entries: Buffer[]) => Buffer[]): void {
  const bytes = readFileSync(logPath(dir));
  const entries: Buffer[] = [];
  for (let at = H; at + E <= bytes.length; at += E) entries.push(Buffer.from(bytes.subarray(at, at + E)));
  writeFileSync(logPath(dir), Buffer.concat([bytes.subarray(0, H), ...edit(entries)]));
}

describe('activity log: what the vault records', () => {
  it('logs one entry per operation, with its counts, in order, and nothing in plaintext', async () => {
    const { vault, dir, root } = await newVault();
    await writeTree(join(root, 'src'), { 'a.txt': 'alpha', 'sub/b.txt': 'bravo!' });
    const added = await vault.add([join(root, 'src')]);
    expect(added.filesAdded).toBe(2);
    vault.mkdir('/new/deeper');
    vault.rename('/src/a.txt', 'renamed.txt');
    vault.move(['/src/renamed.txt', '/src/sub'], '/new');
    await vault.restore(['/new'], join(root, 'out'));
    expect(await vault.remove(['/new/deeper', '/new/sub'])).toBe(3);
    await vault.verify({ readData: true });
    vault.close();

    const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
    await reopened.unlock(passphrase());
    const log = reopened.activityLog();
    expect(log.problems).toEqual([]);
    expect(log.dropped).toBe(0);
    expect(log.entries.map(({ kind, outcome, counts, flags }) => ({ kind, outcome, counts, flags }))).toEqual(
      [
        {
          kind: 'add',
          outcome: 'done',
          counts: { files: 2, folders: 2, bytes: 11, problems: 0 },
          flags: [],
        },
        { kind: 'create-folder', outcome: 'done', counts: { folders: 2 }, flags: [] },
        { kind: 'rename', outcome: 'done', counts: { entries: 1 }, flags: [] },
        { kind: 'move', outcome: 'done', counts: { entries: 2 }, flags: [] },
        {
          kind: 'restore',
          outcome: 'done',
          counts: { files: 2, folders: 3, bytes: 11, problems: 0 },
          flags: [],
        },
        { kind: 'delete', outcome: 'done', counts: { entries: 3 }, flags: [] },
        {
          kind: 'verify',
          outcome: 'done',
          counts: { files: 1, problems: 0, unreferenced: 0, recovered: 0 },
          flags: ['readData'],
        },
        { kind: 'unlock', outcome: 'done', counts: { failedAttempts: 0 }, flags: [] },
      ],
    );
    expect(log.entries.map((entry) => entry.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const times = log.entries.map((entry) => entry.time);
    expect(times.every((time) => Math.abs(time - Date.now()) < 3_600_000)).toBe(true);
    // Fixed-size sealed entries: the file shows how many operations there were, nothing of which.
    const bytes = readFileSync(logPath(dir));
    expect(bytes.length).toBe(H + 8 * E);
    for (const needle of ['alpha', 'renamed', 'deeper', 'restore', 'verify']) {
      expect(bytes.includes(Buffer.from(needle))).toBe(false);
    }
  });

  it('logs a cancelled add, and a failed one, with what they had added', async () => {
    const { vault, root } = await newVault();
    await writeTree(join(root, 'src'), { 'a.txt': 'a' });
    const controller = new AbortController();
    controller.abort();
    await expect(vault.add([join(root, 'src')], '/', { signal: controller.signal })).rejects.toThrow(
      /cancel/i,
    );
    await expect(vault.add([join(root, 'src')], '/not-a-folder/../x')).rejects.toThrow();
    expect(
      vault.activityLog().entries.map(({ kind, outcome, counts }) => ({ kind, outcome, counts })),
    ).toEqual([
      { kind: 'add', outcome: 'cancelled', counts: { files: 0, folders: 0, bytes: 0, problems: 0 } },
      { kind: 'add', outcome: 'failed', counts: { files: 0, folders: 0, bytes: 0, problems: 0 } },
    ]);
  });

  it('counts wrong passphrases outside the log and seals the count into the next unlock', async () => {
    const { vault, dir } = await newVault();
    vault.close();
    const opened = track(await Vault.open(dir, { sodium: nativeSodium }));
    for (let i = 0; i < 3; i++) {
      await expect(opened.unlock(passphrase('wrong'))).rejects.toBeInstanceOf(WrongPassphraseError);
    }
    expect(existsSync(join(dir, 'unlock-failures'))).toBe(true);
    await opened.unlock(passphrase());
    opened.lock();
    await opened.unlock(passphrase());
    const unlocks = opened.activityLog().entries.filter((entry) => entry.kind === 'unlock');
    expect(unlocks.map((entry) => entry.counts.failedAttempts)).toEqual([3, 0]);
    expect(existsSync(join(dir, 'unlock-failures'))).toBe(false);
  });

  it('verify reports a tampered log, and a log it cannot read, as damage', async () => {
    const { vault, dir } = await newVault();
    vault.mkdir('/a');
    vault.mkdir('/b');
    expect((await vault.verify()).ok).toBe(true);
    editEntries(dir, (entries) => [nth(entries, 1), nth(entries, 0), ...entries.slice(2)]);
    const reordered = await vault.verify();
    expect(reordered.ok).toBe(false);
    expect(reordered.problems.length).toBeGreaterThan(0);
    for (const problem of reordered.problems) {
      expect(problem).toMatchObject({ path: '(activity log)', code: 'INTEGRITY' });
    }
    expect(vault.activityLog().entries.at(-1)?.counts.problems).toBe(reordered.problems.length);

    writeFileSync(logPath(dir), Buffer.alloc(40));
    const unreadable = await vault.verify();
    expect(unreadable.problems.map((problem) => problem.message)).toEqual([
      expect.stringMatching(/activity log \(activity\.log\) is not laid out as the vault format requires/),
    ]);
  });

  it('an unwritable log does not fail the operation: the problem is handed on', async () => {
    const { vault, dir, root } = await newVault();
    writeFileSync(logPath(dir), 'not a log at all, but long enough for a header');
    await writeTree(join(root, 'src'), { 'a.txt': 'a' });
    expect((await vault.add([join(root, 'src', 'a.txt')])).filesAdded).toBe(1);
    const problems = vault.takeLogProblems();
    expect(problems).toHaveLength(1);
    expect(problems[0]?.code).toBe('INTEGRITY');
    expect(problems[0]?.message).toMatch(/activity log/);
    expect(problems[0]?.message).toMatch(/Move activity\.log out of the vault folder/);
    expect(vault.takeLogProblems()).toEqual([]);
    expect(() => vault.activityLog()).toThrow(IntegrityError);
    // Left as it was: evidence is not overwritten.
    expect(readFileSync(logPath(dir), 'utf8')).toMatch(/^not a log/);
  });
});

describe('activity log: bound, crash and tampering', () => {
  it('keeps at most maxEntries, drops the oldest, and counts them', () => {
    const { log, dir } = bareLog({ maxEntries: 10, keepEntries: 6 });
    appendMany(log, 25);
    const report = log.read();
    expect(report.problems).toEqual([]);
    expect(report.entries.length).toBeLessThanOrEqual(10);
    expect(statSync(logPath(dir)).size).toBeLessThanOrEqual(H + 10 * E);
    // Sequence numbers run on across rewrites; the dropped count is the first kept one's.
    expect(report.dropped).toBeGreaterThan(0);
    expect(report.entries[0]?.seq).toBe(report.dropped);
    expect(report.entries.map((entry) => entry.seq)).toEqual(
      report.entries.map((_, i) => report.dropped + i),
    );
    // The newest move is the last entry; the trims themselves are entries too.
    expect(report.entries.at(-1)?.counts).toEqual({ entries: 25 });
    const moves = report.entries.filter((entry) => entry.kind === 'move').length;
    const trims = kinds(report.entries).filter((kind) => kind === 'log-trimmed').length;
    expect(trims).toBeGreaterThanOrEqual(1);
    expect(moves + trims).toBe(report.entries.length);
    // No temp file left by the rewrites.
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
  });

  it('detects an entry edited, reordered, dropped from the middle, replayed, or copied from another vault', () => {
    const cases: [string, (entries: Buffer[]) => Buffer[], string][] = [
      [
        'edited',
        (entries) => {
          const edited = nth(entries, 2);
          edited.writeUInt8(edited.readUInt8(60) ^ 1, 60);
          return entries;
        },
        'damaged',
      ],
      [
        'reordered',
        (entries) => [nth(entries, 0), nth(entries, 2), nth(entries, 1), ...entries.slice(3)],
        'out-of-order',
      ],
      ['dropped', (entries) => [nth(entries, 0), ...entries.slice(2)], 'out-of-order'],
      ['replayed', (entries) => [...entries.slice(0, 4), nth(entries, 1), nth(entries, 4)], 'out-of-order'],
      ['start removed', (entries) => entries.slice(2), 'start-removed'],
    ];
    for (const [name, edit, kind] of cases) {
      const { log, dir } = bareLog();
      appendMany(log, 5);
      editEntries(dir, edit);
      const report = log.read();
      expect(
        report.problems.map((problem) => problem.kind),
        name,
      ).toContain(kind);
      expect(
        report.problems.every((problem) => problem.kind !== 'torn-tail'),
        name,
      ).toBe(true);
    }
    const first = bareLog();
    const other = bareLog();
    appendMany(first.log, 3);
    appendMany(other.log, 3);
    const foreign = readFileSync(logPath(other.dir)).subarray(H + E, H + 2 * E);
    editEntries(first.dir, (entries) => [nth(entries, 0), Buffer.from(foreign), nth(entries, 2)]);
    expect(first.log.read().problems.map((problem) => problem.kind)).toEqual(['damaged']);
  });

  it('does not detect the tail cut at an entry boundary (documented in FORMAT.md 10.4)', () => {
    const { log, dir } = bareLog();
    appendMany(log, 5);
    truncateSync(logPath(dir), H + 3 * E);
    const report = log.read();
    expect(report.problems).toEqual([]);
    expect(report.entries).toHaveLength(3);
  });

  it('reports a torn last entry without failing, and the next append repairs it and says so', () => {
    const { log, dir } = bareLog();
    appendMany(log, 4);
    truncateSync(logPath(dir), H + 4 * E - 30);
    const torn = log.read();
    expect(torn.problems.map((problem) => problem.kind)).toEqual(['torn-tail']);
    expect(torn.problems[0]?.message).toMatch(/crash/);
    expect(torn.entries).toHaveLength(3);

    log.append({ kind: 'rename', counts: { entries: 1 } });
    const repaired = log.read();
    expect(repaired.problems).toEqual([]);
    expect(kinds(repaired.entries)).toEqual(['move', 'move', 'move', 'log-repaired', 'rename']);
    expect(repaired.entries[3]?.counts).toEqual({ tornBytes: E - 30, discardedEntries: 0 });
    expect(repaired.entries.map((entry) => entry.seq)).toEqual([0, 1, 2, 3, 4]);
  });

  it('treats a whole last entry that does not open as torn: reported, then discarded and counted', () => {
    const { log, dir } = bareLog();
    appendMany(log, 3);
    editEntries(dir, (entries) => {
      nth(entries, 2).fill(0, 40);
      return entries;
    });
    expect(log.read().problems.map((problem) => problem.kind)).toEqual(['torn-tail']);
    log.append({ kind: 'rename', counts: { entries: 1 } });
    const repaired = log.read();
    expect(repaired.problems).toEqual([]);
    expect(kinds(repaired.entries)).toEqual(['move', 'move', 'log-repaired', 'rename']);
    expect(repaired.entries[2]?.counts).toEqual({ tornBytes: 0, discardedEntries: 1 });
  });

  /** The log of `bareLog()` as a writer under a newer header sees it: key 1 and a newer key 2. */
  function underNewerHeader(
    { dir, vaultId, keyring }: ReturnType<typeof bareLog>,
    limits?: LogLimits,
  ): ActivityLog {
    const newer = new Keyring();
    const key1 = keyring.find(1);
    if (!key1) throw new Error('the test log has no key 1');
    newer.add(1, key1);
    newer.add(2, SecretKey.generate(nativeSodium));
    return new ActivityLog(dir, { sodium: nativeSodium, keyring: newer, vaultId }, limits);
  }

  it('keeps a last entry a newer header sealed, and appends after it at the next seq', () => {
    const older = bareLog();
    appendMany(older.log, 2);
    const newer = underNewerHeader(older);
    newer.append({ kind: 'rotate', counts: { keyId: 2, previousKeyId: 1 } });

    // Read under the older header (put back by hand): under a key it lacks, not torn and not damaged.
    const seen = older.log.read();
    expect(seen.problems.map((problem) => problem.kind)).toEqual(['newer-key']);
    expect(seen.problems[0]?.message).toMatch(/sealed under key 2, which the header in use does not hold/u);
    older.log.append({ kind: 'rename', counts: { entries: 1 } });
    const after = older.log.read();
    expect(after.problems.map((problem) => problem.kind)).toEqual(['newer-key']);
    expect(after.entries.map((entry) => entry.seq)).toEqual([0, 1, 3]);

    // The newer header reads every entry, in order: nothing was dropped or repaired.
    const whole = newer.read();
    expect(whole.problems).toEqual([]);
    expect(kinds(whole.entries)).toEqual(['move', 'move', 'rotate', 'rename']);
    expect(whole.entries.map((entry) => entry.seq)).toEqual([0, 1, 2, 3]);
  });

  it('keeps the last entry when every entry is under the newer key (after a re-encryption), and goes on from it', () => {
    const older = bareLog();
    const newer = underNewerHeader(older);
    appendMany(newer, 3);

    const seen = older.log.read();
    expect(seen.problems.map((problem) => problem.kind)).toEqual(['newer-key', 'newer-key', 'newer-key']);
    older.log.append({ kind: 'rename', counts: { entries: 1 } });
    expect(older.log.read().entries.map((entry) => entry.seq)).toEqual([3]);

    const whole = newer.read();
    expect(whole.problems).toEqual([]);
    expect(kinds(whole.entries)).toEqual(['move', 'move', 'move', 'rename']);
    expect(whole.entries.map((entry) => entry.seq)).toEqual([0, 1, 2, 3]);
  });

  it('counts the first kept entry by its place when it does not open, whatever its seq field says', () => {
    const { log, dir } = bareLog({ maxEntries: 6, keepEntries: 3 });
    appendMany(log, 6);
    // The first entry the trim keeps, damaged: its seq field far beyond any a log reaches.
    editEntries(dir, (entries) => {
      nth(entries, 3).writeBigUInt64LE(2n ** 60n, 0);
      return entries;
    });
    log.append({ kind: 'rename', counts: { entries: 1 } });
    const report = log.read();
    expect(report.dropped).toBe(3);
    expect(kinds(report.entries)).toEqual(['move', 'move', 'log-trimmed', 'rename']);
    expect(report.problems.map(({ kind }) => kind)).toEqual(['damaged']);
  });

  it('does not call the start of a trimmed log removed when its log-trimmed entry is under the newer key', () => {
    const limits = { maxEntries: 6, keepEntries: 2 };
    const older = bareLog(limits);
    appendMany(older.log, 2);
    // The newer header's writer reaches the bound: the log-trimmed entry is under key 2.
    const newer = underNewerHeader(older, limits);
    appendMany(newer, 5);
    expect(newer.read().problems).toEqual([]);
    expect(newer.read().dropped).toBeGreaterThan(0);
    // The older header's writer appends after them, under key 1: its entry's seq is far from 0.
    older.log.append({ kind: 'rename', counts: { entries: 1 } });
    expect(new Set(older.log.read().problems.map(({ kind }) => kind))).toEqual(new Set(['newer-key']));
    expect(newer.read().problems).toEqual([]);
  });

  it('drops stale bytes that a crash left as a whole last entry, whatever key id they name', () => {
    const { log, dir } = bareLog();
    appendMany(log, 2);
    const lastSeq = (entries: Buffer[]): bigint => nth(entries, entries.length - 1).readBigUInt64LE(0);
    for (const stale of [
      // Random bytes: a key id the header lacks, a seq that does not follow.
      () => nativeSodium.randomBytes(E).fill(0xfe, 8, 12).fill(0x7f, 0, 8),
      // The next seq, but key id 0, which no header holds (zeros a file system left).
      (entries: Buffer[]) => {
        const entry = Buffer.alloc(E);
        entry.writeBigUInt64LE(lastSeq(entries) + 1n, 0);
        return entry;
      },
      // A newer key id, but not the next seq.
      (entries: Buffer[]) => {
        const entry = nativeSodium.randomBytes(E);
        entry.writeBigUInt64LE(lastSeq(entries) + 5n, 0);
        entry.writeUInt32LE(2, 8);
        return entry;
      },
    ]) {
      editEntries(dir, (entries) => [...entries, stale(entries)]);
      expect(log.read().problems.map((problem) => problem.kind)).toEqual(['torn-tail']);
      log.append({ kind: 'rename', counts: { entries: 1 } });
      const repaired = log.read();
      expect(repaired.problems).toEqual([]);
      expect(repaired.entries.at(-2)?.counts).toEqual({ tornBytes: 0, discardedEntries: 1 });
    }
  });

  it('counts no key id of a last entry whose seq does not follow (stale bytes), and those of real entries', () => {
    const older = bareLog();
    appendMany(older.log, 2);
    const stale = nativeSodium.randomBytes(E).fill(0x7f, 0, 8).fill(0xfe, 8, 12);
    editEntries(older.dir, (entries) => [...entries, stale]);
    // Stale bytes name key 4,278,124,286; counted, they would refuse every header import.
    expect(older.log.keyIdsNamed()).toEqual(new Set([1]));
    editEntries(older.dir, (entries) => entries.slice(0, -1));
    underNewerHeader(older).append({ kind: 'rotate', counts: { keyId: 2, previousKeyId: 1 } });
    expect(older.log.keyIdsNamed()).toEqual(new Set([1, 2]));
  });

  it('keeps a damaged whole entry that torn bytes follow: an earlier append wrote it whole', () => {
    const { log, dir } = bareLog();
    appendMany(log, 3);
    editEntries(dir, (entries) => {
      nth(entries, 2).fill(0, 40);
      return [...entries, Buffer.alloc(30, 1)];
    });
    const problems = (): string[] => log.read().problems.map((problem) => problem.kind);
    expect(problems()).toEqual(['torn-tail', 'damaged']);
    log.append({ kind: 'rename', counts: { entries: 1 } });
    // The torn bytes are gone; the damaged entry is kept (and still reported), not dropped as torn.
    expect(problems()).toEqual(['damaged']);
    const repaired = log.read();
    expect(kinds(repaired.entries)).toEqual(['move', 'move', 'log-repaired', 'rename']);
    expect(repaired.entries.map((entry) => entry.seq)).toEqual([0, 1, 3, 4]);
    expect(repaired.entries[2]?.counts).toEqual({ tornBytes: 30, discardedEntries: 0 });
  });

  it('refuses a log of another vault, and one whose header is damaged', () => {
    const first = bareLog();
    const other = bareLog();
    appendMany(first.log, 1);
    appendMany(other.log, 1);
    writeFileSync(logPath(first.dir), readFileSync(logPath(other.dir)));
    expect(() => first.log.read()).toThrow(expect.objectContaining({ reason: 'wrong-file' }));
    expect(() => {
      first.log.append({ kind: 'move' });
    }).toThrow(IntegrityError);
  });
});
