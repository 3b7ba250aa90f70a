/** A drag event as the window sees it: only what refusing it needs (so this also type-checks outside the DOM). */
interface DragLike extends Event {
  readonly dataTransfer: { dropEffect: string; readonly types: readonly string[] } | null;
}

/** Files from outside the window: text dragged into a field, or rows moved within it, are left to the page. */
function carriesFiles(
  event: Event,
): event is DragLike & { dataTransfer: NonNullable<DragLike['dataTransfer']> } {
  return (event as DragLike).dataTransfer?.types.includes('Files') === true;
}

/**
 * Files dropped where nothing takes them (a dialog, the Start or Unlock screen) are refused with the "not allowed"
 * cursor: otherwise Chromium opens the file in the page, which in the preview unloads the window (and locks).
 */
export function refuseStrayDrops(target: EventTarget): void {
  target.addEventListener('dragover', (event) => {
    if (event.defaultPrevented || !carriesFiles(event)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'none';
  });
  target.addEventListener('drop', (event) => {
    if (carriesFiles(event)) event.preventDefault();
  });
}
