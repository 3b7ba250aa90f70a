/** A drag event as the window sees it: only what refusing it needs (so this also type-checks outside the DOM). */
interface DragLike extends Event {
  readonly dataTransfer: { dropEffect: string; readonly types: readonly string[] } | null;
}

/** Whether a drag holds files from outside the window: text dragged into a field, or rows moved within it, do not. */
export function holdsFiles<T extends { readonly types: readonly string[] }>(data: T | null): data is T {
  return data?.types.includes('Files') === true;
}

/**
 * Files dropped where nothing takes them (a dialog, the Start or Unlock screen) are refused with the "not allowed"
 * cursor: otherwise Chromium opens the file in the page, which in the preview unloads the window (and locks).
 */
export function refuseStrayDrops(target: EventTarget): void {
  target.addEventListener('dragover', (event) => {
    const data = (event as DragLike).dataTransfer;
    if (event.defaultPrevented || !holdsFiles(data)) return;
    event.preventDefault();
    data.dropEffect = 'none';
  });
  target.addEventListener('drop', (event) => {
    if (holdsFiles((event as DragLike).dataTransfer)) event.preventDefault();
  });
}
