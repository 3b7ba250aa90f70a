import { dialog, type BrowserWindow, type OpenDialogOptions } from 'electron';

import type { DialogProvider } from '../../src/app/backend.js';

type FolderPurpose = Parameters<DialogProvider['pickFolder']>[0];

const FOLDER_DIALOGS: Readonly<Record<FolderPurpose, { title: string; buttonLabel: string }>> = {
  'create-vault': { title: 'Choose where to create the vault', buttonLabel: 'Create here' },
  'open-vault': { title: 'Open a vault folder', buttonLabel: 'Open' },
  'restore-destination': { title: 'Restore to…', buttonLabel: 'Restore here' },
  'add-folder': { title: 'Add a folder', buttonLabel: 'Add' },
  'header-backup': { title: 'Save a header backup in…', buttonLabel: 'Save here' },
};

/**
 * Native dialogs, the only way a path on disk reaches the back end from the window besides a drop: the renderer
 * asks for a purpose and gets back an opaque handle, never the path.
 */
export function nativeDialogs(getWindow: () => BrowserWindow | null): DialogProvider {
  const show = async (options: OpenDialogOptions): Promise<string[] | null> => {
    const window = getWindow();
    const result = window
      ? await dialog.showOpenDialog(window, options)
      : await dialog.showOpenDialog(options);
    return result.canceled || result.filePaths.length === 0 ? null : result.filePaths;
  };
  return {
    async pickFolder(purpose) {
      const paths = await show({
        ...FOLDER_DIALOGS[purpose],
        properties: ['openDirectory', 'createDirectory', 'dontAddToRecent'],
      });
      return paths?.[0] ?? null;
    },
    pickFiles(purpose, startIn) {
      return show(
        purpose === 'header-restore'
          ? {
              title: 'Choose a header backup',
              buttonLabel: 'Choose',
              ...(startIn === undefined ? {} : { defaultPath: startIn }),
              filters: [
                // coffer.header.bak too: the dialog opens in the vault folder to restore it.
                { name: 'Coffer header backups', extensions: ['coffer-header', 'bak'] },
                { name: 'All files', extensions: ['*'] },
              ],
              properties: ['openFile', 'dontAddToRecent'],
            }
          : {
              title: 'Add files',
              buttonLabel: 'Add',
              properties: ['openFile', 'multiSelections', 'dontAddToRecent'],
            },
      );
    },
  };
}
