import { useEffect } from 'react';

import type { Problem, VaultEntry } from '../../shared/contract.js';
import { call } from '../api.js';
import { showNotices, useCoffer } from '../store.js';
import { logProblemNotice } from './activity-words.js';

/** Shows what the activity log could not record with the vault's other notices, until dismissed. */
export function reportLogProblems(problems: readonly Problem[]): void {
  if (problems.length === 0) return;
  const { notices } = useCoffer.getState();
  showNotices([...notices, ...problems.map(logProblemNotice).filter((notice) => !notices.includes(notice))]);
}

/**
 * Asks the back end, after each change the browser shows (a folder listed again after a rename, delete or move)
 * and each job that ended, what the activity log could not record, and shows it with the vault's notices.
 */
export function useLogProblemNotices(
  vaultId: string,
  entries: readonly VaultEntry[],
  jobsEnded: number,
): void {
  useEffect(() => {
    // Shown even when a newer answer is under way: the back end hands each problem over once.
    call('security.logProblems', { vaultId }).then(reportLogProblems, () => undefined);
  }, [vaultId, entries, jobsEnded]);
}
