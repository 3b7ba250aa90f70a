/**
 * Drops files built in the page onto the vault's drop zone, as a person dragging files would. Such files have no
 * path on disk, so their bytes cross to the back end.
 */
import type { Page } from '@playwright/test';

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

/** `target`: where they are dropped (a selector); by default the vault's contents area. */
export async function dropFiles(
  page: Page,
  files: readonly DroppedFile[],
  target = '[data-testid=drop-zone]',
): Promise<void> {
  const serialisable = files.map(({ name, bytes, size, lastModified }) => ({
    name,
    lastModified: lastModified ?? null,
    data: bytes === undefined ? null : [...bytes],
    size: size ?? bytes?.length ?? 0,
  }));
  const dataTransfer = await page.evaluateHandle((list) => {
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
  await page.dispatchEvent(target, 'drop', { dataTransfer });
}
