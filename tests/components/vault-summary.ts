/**
 * The vault the window's tests show, in a module of its own with no DOM types, so the Node-typed tests of the
 * renderer's store (tests/renderer) can take it too.
 */
import type { VaultSummary } from '../../src/shared/contract.js';

/** An unlocked, writable vault. */
export const VAULT: VaultSummary = {
  vaultId: 'v1',
  recentId: 'r1',
  name: 'Personal',
  location: '/home/u/Personal',
  locked: false,
  readOnly: false,
  headerOlderThanData: false,
};
/** The same vault, locked. */
export const LOCKED_VAULT: VaultSummary = { ...VAULT, locked: true };
