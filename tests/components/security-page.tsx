/**
 * The vault's Security page as Browser.tsx shows it, against a fake back end whose `vault.info` answers with the
 * test's vault facts (changeable mid-test, as a key change changes them), for the Security page's test files.
 */
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { expect, vi } from 'vitest';

import { installApi, onEvent } from '../../src/renderer/api.js';
import { SecurityDialog } from '../../src/renderer/security/SecurityDialog.js';
import { clearVaultContents, jobEvent, showVault } from '../../src/renderer/store.js';
import type { VaultInfo, VaultSummary } from '../../src/shared/contract.js';
import { fakeApi, type FakeApi, type Handlers } from './fake-api.js';
import { VAULT } from './fixtures.js';

type Slot = VaultInfo['slots'][number];

/** A passphrase slot at `index` with a preset's key strength; `used` when this window was unlocked with it. */
export const passphraseSlot = (index: number, preset = 'moderate', used = false): Slot => ({
  index,
  kind: 'passphrase',
  kdf: { opslimit: 3, memlimitKiB: 262_144, preset },
  unlockedWith: used,
});

export const recoveryKeySlot = (index: number, used = false): Slot => ({
  index,
  kind: 'recovery-key',
  unlockedWith: used,
});

/** An unlocked vault's facts with these slots. */
export const vaultInfo = (slots: readonly Slot[], more: Partial<VaultInfo> = {}): VaultInfo => ({
  formatVersion: 1,
  format: '1.1',
  vaultId: VAULT.vaultId,
  locked: false,
  readOnly: false,
  headerOlderThanData: false,
  warnings: [],
  kdf: [],
  contentPadding: 'padme',
  slots,
  storedBytes: 1000,
  keyIds: [1],
  ...more,
});

export interface SecurityPage {
  readonly api: FakeApi;
  readonly onClose: ReturnType<typeof vi.fn>;
  /** What `vault.info` answers from now on (the vault after a change). */
  setInfo(info: VaultInfo): void;
}

let stopListening: () => void = () => undefined;

/**
 * Opens the Security page of `vault`, unlocked with `info`, and waits for its tabs. Job events go into the store as
 * App.tsx wires them. Channels the page asks on its own (key strength figures, the log's problems) answer
 * harmlessly unless `handlers` say otherwise.
 */
export async function openSecurity(
  info: VaultInfo,
  handlers: Handlers = {},
  vault: VaultSummary = VAULT,
): Promise<SecurityPage> {
  let current = info;
  const api = fakeApi({
    'vault.info': () => ({ ...vault, info: current }),
    'app.kdfEstimate': () => ({ interactive: 400, moderate: 1500, sensitive: 6000 }),
    'security.logProblems': () => [],
    ...handlers,
  });
  installApi(api);
  clearVaultContents();
  showVault(vault);
  stopListening();
  stopListening = onEvent('job', jobEvent);
  const onClose = vi.fn();
  render(<SecurityDialog vault={vault} onClose={onClose} />);
  await screen.findByRole('tabpanel');
  return {
    api,
    onClose,
    setInfo(next) {
      current = next;
    },
  };
}

/** Switches to a tab of the Security page. */
export async function openTab(name: 'Passphrases' | 'Recovery key' | 'Data key' | 'Activity log') {
  await userEvent.click(screen.getByRole('tab', { name }));
}

/**
 * Checks the Security page said `words` on its status line and moved the focus there: the form or dialog that
 * made the change is gone, and the focus must not be lost with it.
 */
export function expectToldAndFocused(words: string) {
  const said = screen.getByText(words);
  expect(said.getAttribute('role')).toBe('status');
  expect(document.activeElement).toBe(said);
}
