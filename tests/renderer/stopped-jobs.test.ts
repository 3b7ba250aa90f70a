import { describe, expect, it } from 'vitest';

import { failedJobSummary, stoppedByLockNotice, stoppedJobSummary } from '../../src/renderer/stopped-jobs.js';
import type { StoppedWork } from '../../src/shared/contract.js';

/** Work a lock stopped after it had begun. */
const begun = (kind: StoppedWork['kind']): StoppedWork => ({ kind, begun: true });
/** Work a lock stopped while it still waited for its turn. */
const waiting = (kind: StoppedWork['kind']): StoppedWork => ({ kind, begun: false });

describe('what the unlock screen says of jobs a lock stopped', () => {
  it('says nothing when the lock stopped none', () => {
    expect(stoppedByLockNotice([])).toBeNull();
  });

  it('names one stopped job and what it left', () => {
    expect(stoppedByLockNotice([begun('restore')])).toBe(
      'Locking stopped a restore before it finished. Files the restore had finished are in their folder and ' +
        'nothing half-written is: restore the rest again.',
    );
  });

  it('counts the jobs of each kind, in the order they came, and says what each kind left', () => {
    expect(stoppedByLockNotice([begun('add'), begun('verify'), begun('add'), begun('reencrypt')])).toBe(
      'Locking stopped 2 adds, a check and a re-encryption before they finished. Files the adds had finished ' +
        'are in the vault and nothing half-added is: add the rest again. Run “Check all data” again from Vault ' +
        'details. Start the re-encryption again from Security: it goes on where it stopped.',
    );
  });
});

describe('what the unlock screen says of jobs a lock stopped before their turn', () => {
  it('says that a restore or an add that had not begun did nothing', () => {
    expect(stoppedByLockNotice([waiting('restore')])).toBe(
      'Locking stopped a restore before it began. Nothing was restored: the restore had not begun. Restore ' +
        'again what you still want.',
    );
    expect(stoppedByLockNotice([begun('restore'), waiting('add'), waiting('add')])).toBe(
      'Locking stopped a restore and 2 adds before they finished. Files the restore had finished are in their ' +
        'folder and nothing half-written is: restore the rest again. Nothing was added: the adds had not begun. ' +
        'Add again what you still want in the vault.',
    );
  });

  it('says what those that had begun left when others of their kind had not', () => {
    expect(stoppedByLockNotice([waiting('add'), begun('add')])).toBe(
      'Locking stopped 2 adds before they finished. Files the adds had finished are in the vault and nothing ' +
        'half-added is: add the rest again.',
    );
  });

  it('says what to do the same way of a check or a re-encryption, begun or not', () => {
    const what =
      'Run “Check all data” again from Vault details. Start the re-encryption again from Security: it goes on ' +
      'where it stopped.';
    expect(stoppedByLockNotice([waiting('verify'), waiting('reencrypt')])).toBe(
      `Locking stopped a check and a re-encryption before they began. ${what}`,
    );
    expect(stoppedByLockNotice([begun('verify'), begun('reencrypt')])).toBe(
      `Locking stopped a check and a re-encryption before they finished. ${what}`,
    );
  });
});

describe('what the unlock screen says of deletes a lock stopped before their turn', () => {
  it('says that nothing was deleted, beside what a stopped add left', () => {
    expect(stoppedByLockNotice([begun('add'), waiting('delete')])).toBe(
      'Locking stopped an add and a delete before they finished. Files the add had finished are in the vault ' +
        'and nothing half-added is: add the rest again. Nothing was deleted: the delete had not begun. Delete ' +
        'again what you still want gone.',
    );
    expect(stoppedByLockNotice([waiting('delete'), waiting('delete')])).toBe(
      'Locking stopped 2 deletes before they began. Nothing was deleted: the deletes had not begun. Delete ' +
        'again what you still want gone.',
    );
  });
});

describe('what a stopped job’s row says', () => {
  it('names the files a stopped add or restore had finished, which stay', () => {
    expect(stoppedJobSummary('add', 312)).toBe(
      'Stopped after adding 312 files: those are in the vault, and nothing half-added is. Add the rest again.',
    );
    expect(stoppedJobSummary('restore', 1)).toBe(
      'Stopped after restoring 1 file: it is in the folder you chose, and nothing half-written is. Restore the ' +
        'rest again.',
    );
  });

  it('says when nothing got in, and what a stopped check or one with no count left', () => {
    expect(stoppedJobSummary('add', 0)).toBe(
      'Stopped before any file was added; nothing half-added is in the vault.',
    );
    expect(stoppedJobSummary('restore', 0)).toBe(
      'Stopped before any file was restored; nothing half-written is in the folder.',
    );
    expect(stoppedJobSummary('verify')).toBe('Stopped. Run “Check all data” again from Vault details.');
    expect(stoppedJobSummary('add')).toBe(
      'Stopped. Files it had finished are in the vault and nothing half-added is: add the rest again.',
    );
  });
});

describe('what a failed job’s row says', () => {
  const full = 'Coffer could not write: the disk is full.';

  it('adds to the failure’s words how many files an add or a restore had put in place, which stay', () => {
    expect(failedJobSummary('add', full, 3)).toBe(
      `${full} The 3 files added before it stopped are in the vault, whole.`,
    );
    expect(failedJobSummary('restore', full, 1)).toBe(
      `${full} The 1 file restored before it stopped is in the folder you chose, whole.`,
    );
  });

  it('says only the failure when nothing got in, or for a job that puts no files in place', () => {
    expect(failedJobSummary('add', full, 0)).toBe(full);
    expect(failedJobSummary('verify', full)).toBe(full);
  });
});
