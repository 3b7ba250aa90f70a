/**
 * A count and its noun: "1 file", "1,000 files", "3 entries" with the plural given. The count is grouped as
 * English groups it (the words around it are English), the same in the window and the command line on every
 * machine.
 */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? noun : nouns}`;
}
