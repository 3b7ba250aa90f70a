import { describe, expect, it } from 'vitest';

import { unlockNotices } from '../../src/renderer/unlock-notices.js';

describe('what the window says after an unlock', () => {
  it('says nothing for a healthy vault seen as it was', () => {
    expect(
      unlockNotices({ problems: [], openWarnings: [], rollbackWarning: null, headerOlderThanData: false }),
    ).toEqual([]);
  });

  it('says how the vault was opened, the rollback warning, the index damage in the engine words, and counts unreadable entries', () => {
    const notices = unlockNotices({
      openWarnings: ['This vault was left by an interrupted write.'],
      rollbackWarning: 'This vault went back to an older copy.',
      headerOlderThanData: false,
      problems: [
        { path: '(index)', code: 'INTEGRITY', message: 'The vault index was changed outside Coffer.' },
        { path: '(index row 00)', code: 'INTEGRITY', message: 'x' },
        { path: '(index row 01)', code: 'INTEGRITY', message: 'y' },
      ],
    });
    expect(notices).toEqual([
      'This vault was left by an interrupted write.',
      'This vault went back to an older copy.',
      'The vault index was changed outside Coffer.',
      expect.stringMatching(/^2 entries of this vault could not be read and are left out/u) as string,
    ]);
  });

  it('speaks of one entry in the singular', () => {
    const [notice] = unlockNotices({
      openWarnings: [],
      rollbackWarning: null,
      headerOlderThanData: false,
      problems: [{ path: '(index row 00)', code: 'INTEGRITY', message: 'x' }],
    });
    expect(notice).toMatch(/^1 entry of this vault could not be read and is left out/u);
  });

  it('with a header older than the data, points unreadable entries to the newer header before a check', () => {
    const notices = unlockNotices({
      openWarnings: [],
      rollbackWarning: null,
      headerOlderThanData: true,
      problems: [
        { path: '(index row 00)', code: 'INTEGRITY', message: 'x' },
        { path: '(index row 01)', code: 'INTEGRITY', message: 'y' },
      ],
    });
    expect(notices).toEqual([
      '2 entries of this vault could not be read and are left out of the list. Most likely they are under the ' +
        'newer key: restore the newer header first, then, if any are still missing, open Vault details and ' +
        'choose “Check vault”.',
    ]);
    expect(
      unlockNotices({
        openWarnings: [],
        rollbackWarning: null,
        headerOlderThanData: true,
        problems: [{ path: '(index row 00)', code: 'INTEGRITY', message: 'x' }],
      }),
    ).toEqual([
      '1 entry of this vault could not be read and is left out of the list. Most likely it is under the newer ' +
        'key: restore the newer header first, then, if it is still missing, open Vault details and choose ' +
        '“Check vault”.',
    ]);
  });
});
