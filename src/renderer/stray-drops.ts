/** A drag event as the window sees it: only what refusing it needs (so this also type-checks outside the DOM). */
interface DragLike extends Event {
  readonly dataTransfer: { dropEffect: string } | null;
}

/**
 * Files dropped where nothing takes them (a dialog, the Start or Unlock screen) are refused with the "not allowed"
 * cursor: otherwise Chromium opens the file in the page, which in the preview unloads the window (and locks).
 */
export function refuseStrayDrops(target: EventTarget): void {
  target.addEventListener('dragover', (event) => {
    if (event.defaultPrevented) return;
    event.preventDefault();
    const { dataTransfer } = event as DragLike;
    if (dataTransfer) dataTransfer.dropEffect = 'none';
  });
  target.addEventListener('drop', (event) => {
    event.preventDefault();
  });
}
