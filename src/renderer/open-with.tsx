/**
 * "Open with the default app": the back end writes a decrypted copy into its private folder and opens it; the
 * window never learns where. The first time, the window says what that leaves on disk and for how long (remembered
 * in the settings), because it is the one action that puts plaintext on disk without the user choosing a place.
 */
import { useState, type ReactNode } from 'react';

import type { VaultEntry } from '../shared/contract.js';
import { ApiError, call, describeError } from './api.js';
import { Actions, Frame } from './browser/dialogs.js';
import { useCapabilities } from './host.js';

export interface OpenWithApp {
  /** The host can open files with another app. */
  readonly available: boolean;
  /** Opens `entry` (after the one-time notice, the first time). */
  readonly open: (entry: VaultEntry) => void;
  /** The notice while it is shown; render it. */
  readonly notice: ReactNode;
}

export function useOpenWithApp(vaultId: string, onError: (message: string) => void): OpenWithApp {
  const { openWithApp: available } = useCapabilities();
  const [asking, setAsking] = useState<VaultEntry | null>(null);

  const openNow = async (entry: VaultEntry): Promise<void> => {
    try {
      await call('entries.openWithApp', { vaultId, path: entry.path });
    } catch (cause) {
      // The back end's NOT_SUPPORTED here says why in words (no app for this kind of file).
      onError(
        cause instanceof ApiError && cause.code === 'NOT_SUPPORTED' ? cause.message : describeError(cause),
      );
    }
  };

  const open = (entry: VaultEntry): void => {
    call('settings.get', {}).then(
      (settings) => {
        if (settings.openCopyNoticeShown) void openNow(entry);
        else setAsking(entry);
      },
      (cause: unknown) => {
        onError(describeError(cause));
      },
    );
  };

  const notice = asking && (
    <Frame
      title="Open a decrypted copy?"
      onCancel={() => {
        setAsking(null);
      }}
    >
      <p>
        To open “{asking.name}” with another app, Coffer writes a decrypted copy of it into a private folder
        of its own on this computer. The copy is removed when the vault locks, when Coffer quits, and
        otherwise the next time Coffer starts.
      </p>
      <p>
        Until then it is a readable file: the other app may keep its own copies (recent files, backups). Save
        changes back by adding the file to the vault again.
      </p>
      <Actions
        label="Open copy"
        onCancel={() => {
          setAsking(null);
        }}
        onConfirm={() => {
          const entry = asking;
          setAsking(null);
          call('settings.set', { openCopyNoticeShown: true }).then(
            () => openNow(entry),
            (cause: unknown) => {
              onError(describeError(cause));
            },
          );
        }}
      />
    </Frame>
  );

  return { available, open, notice };
}
