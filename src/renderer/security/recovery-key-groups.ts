/** "ABCDE-FGHIJ-…" as its groups of five. */
export function recoveryKeyGroups(recoveryKey: string): string[] {
  return recoveryKey.split(/[\s-]+/u).filter((group) => group !== '');
}
