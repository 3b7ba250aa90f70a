/** Locking from the window: the lock button and the Ctrl+L / Cmd+L shortcut share this. */
import { useEffect } from 'react';

import { call } from './api.js';
import { useCoffer, vaultLocked } from './store.js';

/**
 * Locks the vault, then drops its contents from the window.
 * @throws {@link ApiError} when the back end could not lock it (the window then still shows it unlocked, as it is).
 */
export async function lockVault(vaultId: string): Promise<void> {
  await call('vault.lock', { vaultId });
  // The `locked` event says the same; clearing here too means no name stays on screen if it is late.
  vaultLocked(vaultId);
}

/** Ctrl+L (Cmd+L on a Mac) locks the shown vault from anywhere in the window, even inside a text field. */
export function useLockShortcut(onError: (cause: unknown) => void): void {
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent): void => {
      if (
        event.key.toLowerCase() !== 'l' ||
        !(event.ctrlKey || event.metaKey) ||
        event.altKey ||
        event.shiftKey
      )
        return;
      const { vault } = useCoffer.getState();
      if (vault === null || vault.locked) return;
      event.preventDefault();
      lockVault(vault.vaultId).catch(onError);
    };
    window.addEventListener('keydown', onKeyDown, { capture: true });
    return () => {
      window.removeEventListener('keydown', onKeyDown, { capture: true });
    };
  }, [onError]);
}
