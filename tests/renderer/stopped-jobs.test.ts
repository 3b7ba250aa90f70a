import { describe, expect, it } from 'vitest';

import { stoppedByLockNotice } from '../../src/renderer/stopped-jobs.js';

describe('what the unlock screen says of jobs a lock stopped', () => {
  it('says nothing when the lock stopped none', () => {
    expect(stoppedByLockNotice([])).toBeNull();
  });

  it('names one stopped job and what it left', () => {
    expect(stoppedByLockNotice(['restore'])).toBe(
      'Locking stopped a restore before it finished. Files the restore had finished are in their folder and ' +
        'nothing half-written is: restore the rest again.',
    );
  });

  it('counts the jobs of each kind, in the order they came, and says what each kind left', () => {
    expect(stoppedByLockNotice(['add', 'verify', 'add', 'reencrypt'])).toBe(
      'Locking stopped 2 adds, a check and a re-encryption before they finished. Files the adds had finished ' +
        'are in the vault and nothing half-added is: add the rest again. Run “Check all data” again from Vault ' +
        'details. Start the re-encryption again from Security: it goes on where it stopped.',
    );
  });
});
