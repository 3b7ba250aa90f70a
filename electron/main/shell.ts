import { shell } from 'electron';

import type { SystemShell } from '../../src/app/backend.js';

/** The back end's opener on Electron's `shell`. Paths come from the back end only, never from the window. */
export function electronShell(): SystemShell {
  return {
    async openPath(path) {
      // openPath resolves with an error message ('' when an app was started) rather than rejecting.
      const error = await shell.openPath(path);
      if (error !== '') throw new Error(error);
    },
    showItemInFolder(path) {
      shell.showItemInFolder(path);
      return Promise.resolve();
    },
  };
}
