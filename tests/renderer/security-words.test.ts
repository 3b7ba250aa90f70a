import { describe, expect, it } from 'vitest';

import { ACTIVITY_KINDS } from '../../src/core/vault/log-entry.js';
import { ERROR_WORDS, securityErrorSentence } from '../../src/renderer/error-messages.js';
import {
  describeActivity,
  droppedSentence,
  logProblemNotice,
} from '../../src/renderer/security/activity-words.js';
import { recoveryKeyGroups } from '../../src/renderer/security/recovery-key-groups.js';
import { slotName, whyNotRemovable, type Slot } from '../../src/renderer/security/slots.js';
import type { ActivityLogEntry } from '../../src/shared/contract.js';

const entry = (kind: string, counts: Record<string, number> = {}, outcome = 'done'): ActivityLogEntry => ({
  seq: 0,
  time: 0,
  kind,
  outcome: outcome as ActivityLogEntry['outcome'],
  counts,
  flags: [],
});

describe("the Security page's words", () => {
  it('say what each action’s refusal means, not the general words', () => {
    expect(securityErrorSentence('add', 'INVALID_ARGUMENT')).toContain('already has 8 ways in');
    expect(securityErrorSentence('change', 'WRONG_PASSPHRASE')).toContain(
      'not the passphrase this vault was unlocked',
    );
    expect(securityErrorSentence('remove', 'INVALID_ARGUMENT')).toContain('last way into the vault');
    expect(securityErrorSentence('add', 'KDF_LIMIT')).toContain('Choose a faster key strength');
    expect(securityErrorSentence('reencrypt', 'BUSY')).toContain('Another task is changing the vault');
    // A header change refused because the header in use is older than the data: not "part of the vault is damaged".
    for (const action of ['change', 'add', 'remove', 'recovery-key'] as const) {
      expect(securityErrorSentence(action, 'INTEGRITY'), action).toContain('an older copy was put back');
    }
    for (const action of ['rotate', 'reencrypt'] as const) {
      expect(securityErrorSentence(action, 'INTEGRITY'), action).toContain(
        'older than the data in this vault',
      );
    }
    // Codes the action gives no meaning of its own fall back to the general words.
    expect(securityErrorSentence('rotate', 'READ_ONLY')).toBe(
      `${ERROR_WORDS.READ_ONLY.message} ${ERROR_WORDS.READ_ONLY.next}`,
    );
  });

  it('describe every kind of log entry this build writes, with its counts', () => {
    for (const kind of Object.keys(ACTIVITY_KINDS)) {
      expect(describeActivity(entry(kind)), kind).not.toContain('newer version');
    }
    expect(describeActivity(entry('add', { files: 3, folders: 1, bytes: 2_100_000 }))).toBe(
      'Added 3 files, 1 folder (2.1 MB)',
    );
    expect(describeActivity(entry('unlock', { failedAttempts: 2 }))).toBe(
      'Unlocked, after 2 failed attempts since the last unlock',
    );
    expect(describeActivity(entry('restore', { files: 1 }, 'cancelled'))).toBe('Restored 1 file — stopped');
    expect(describeActivity(entry('unknown-99'))).toContain('newer version of Coffer');
  });

  it('count dropped entries and give log-write problems a next step', () => {
    expect(droppedSentence(0)).toBeNull();
    expect(droppedSentence(12)).toContain('12 older entries were dropped');
    expect(droppedSentence(1)).toContain('1 older entry was dropped');
    expect(describeActivity(entry('log-trimmed', { dropped: 1 }))).toContain('the 1 oldest entry');
    const notice = logProblemNotice({ path: '(activity log)', code: 'IO', message: 'The disk is full.' });
    expect(notice).toContain('The disk is full.');
    expect(notice).toContain('the change itself is done');
    expect(notice).toContain('Check vault');
  });

  it('name slots and say before trying why one cannot be removed', () => {
    const slots: Slot[] = [
      { index: 0, kind: 'passphrase', unlockedWith: false },
      { index: 1, kind: 'recovery-key', unlockedWith: false },
      { index: 2, kind: 'passphrase', unlockedWith: true },
    ];
    expect(slots.map((slot) => slotName(slots, slot))).toEqual([
      'Passphrase 1',
      'Recovery key',
      'Passphrase 2',
    ]);
    expect(slots.map((slot) => whyNotRemovable(slots, slot))).toEqual([
      null,
      null,
      'Cannot be removed while this window uses it',
    ]);
    const only: Slot = { index: 0, kind: 'passphrase', unlockedWith: true };
    expect(whyNotRemovable([only], only)).toBe('The only way in: cannot be removed');
  });

  it('split a printed recovery key into its groups, however it was typed', () => {
    expect(recoveryKeyGroups('ABCDE-FGHIJ-KLMNO')).toEqual(['ABCDE', 'FGHIJ', 'KLMNO']);
    expect(recoveryKeyGroups(' abcde  fghij\n')).toEqual(['abcde', 'fghij']);
  });
});
