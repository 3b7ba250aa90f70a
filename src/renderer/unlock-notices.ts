import { INDEX_PROBLEM_PATH, type Problem } from '../shared/contract.js';

/**
 * What the window must tell the user after an unlock: how the vault had to be opened (a crash's interrupted write
 * rolled back in a private copy, FORMAT.md 8.2; the header's backup standing in, 4.7), the vault went back to an
 * older copy since this computer last saw it (8.8), the index as a whole failed its checks (in the engine's
 * words), and entries that could not be read and are left out (counted, since each is only an id the user cannot
 * act on). A header older than the data is not among them: the browser says it for as long as it holds.
 */
export function unlockNotices(reply: {
  readonly problems: readonly Problem[];
  readonly openWarnings: readonly string[];
  readonly rollbackWarning: string | null;
  readonly headerOlderThanData: boolean;
}): string[] {
  const notices = [...reply.openWarnings];
  if (reply.rollbackWarning !== null) notices.push(reply.rollbackWarning);
  const whole = reply.problems.filter((problem) => problem.path === INDEX_PROBLEM_PATH);
  for (const problem of whole) notices.push(problem.message);
  const entries = reply.problems.length - whole.length;
  if (entries > 0) {
    const leftOut =
      `${entries} ${entries === 1 ? 'entry' : 'entries'} of this vault could not be read and ` +
      `${entries === 1 ? 'is' : 'are'} left out of the list.`;
    // The header's own notice (VaultNotices) comes first: most such entries come back with the newer header.
    notices.push(
      reply.headerOlderThanData
        ? `${leftOut} Most likely ${entries === 1 ? 'it is' : 'they are'} under the newer key: restore the newer ` +
            `header first, then, if ${entries === 1 ? 'it is' : 'any are'} still missing, open Vault details and ` +
            'choose “Check vault”.'
        : `${leftOut} Open Vault details and choose “Check vault” to see what is damaged.`,
    );
  }
  return notices;
}
