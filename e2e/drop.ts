/**
 * Drops files built in the page onto the vault's drop zone (or onto another drop target, such as a folder row), as
 * a person dragging files would. Such files have no path on disk, so their bytes cross to the back end.
 */
import type { JSHandle, Locator, Page } from '@playwright/test';

// The browser-side globals the drop is built with, declared here so this module also type-checks where the DOM
// library is not loaded (scripts/screenshots.ts imports it).
declare const DataTransfer: new () => { readonly items: { add(file: unknown): unknown } };
declare const File: new (parts: Uint8Array[], name: string, options?: { lastModified?: number }) => unknown;

export interface DroppedFile {
  readonly name: string;
  /** The contents; when absent, `size` zero bytes. */
  readonly bytes?: Uint8Array;
  readonly size?: number;
  /** Its modification time (ms since the epoch); when absent, the time of the drop. */
  readonly lastModified?: number;
}

/**
 * The files as a DataTransfer in the page, as a drag from the file manager carries them: for the drag's events
 * (dragenter, dragover, drop) dispatched where the test chooses.
 */
export async function filesTransfer(page: Page, files: readonly DroppedFile[]): Promise<JSHandle> {
  const serialisable = files.map(({ name, bytes, size, lastModified }) => ({
    name,
    lastModified: lastModified ?? null,
    data: bytes === undefined ? null : [...bytes],
    size: size ?? bytes?.length ?? 0,
  }));
  return page.evaluateHandle((list) => {
    const transfer = new DataTransfer();
    for (const file of list) {
      transfer.items.add(
        new File(
          [file.data === null ? new Uint8Array(file.size) : new Uint8Array(file.data)],
          file.name,
          file.lastModified === null ? {} : { lastModified: file.lastModified },
        ),
      );
    }
    return transfer;
  }, serialisable);
}

/** Drags the files of `dataTransfer` from outside the window over `target` (enters, moves over), not dropping. */
export async function dragFilesOver(target: Locator, dataTransfer: JSHandle): Promise<void> {
  await target.dispatchEvent('dragenter', { dataTransfer });
  await target.dispatchEvent('dragover', { dataTransfer });
}

/** Drops `files` on `target`: by default the vault's drop zone (the folder shown). */
export async function dropFiles(
  page: Page,
  files: readonly DroppedFile[],
  target: Locator = page.getByTestId('drop-zone'),
): Promise<void> {
  await target.dispatchEvent('drop', { dataTransfer: await filesTransfer(page, files) });
}

/**
 * Holds the bytes of the page's drops (their own requests to the preview server) until the returned function is
 * called, so that their add runs for as long as a test needs. The preview only: in Electron they cross by IPC.
 */
export async function holdDroppedBytes(page: Page): Promise<() => void> {
  let release = (): void => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  await page.route('**/api/drop/*', async (route) => {
    await held;
    await route.continue();
  });
  return release;
}
