import { useEffect, type RefObject } from 'react';

/** Whether the keyboard is nowhere: on the page itself, as when what had the focus went away. */
export function focusIsNowhere(): boolean {
  return document.activeElement === null || document.activeElement === document.body;
}

/**
 * Gives the focus to `target` when a screen appears with the keyboard nowhere: on mounting, and again whenever
 * `shown` changes (a component that swaps one screen for another). A frame later, because a dialog that closed with
 * the screen before (Settings, when Ctrl+L locks) gives the focus back in that frame to the button that opened it,
 * which is gone with its screen: the focus ends on the page, undoing the new screen's `autoFocus`.
 */
export function useFocusWhenNowhere(target: RefObject<HTMLElement | null>, shown?: unknown): void {
  useEffect(() => {
    const frame = requestAnimationFrame(() => {
      if (focusIsNowhere()) target.current?.focus();
    });
    return () => {
      cancelAnimationFrame(frame);
    };
  }, [target, shown]);
}

/**
 * Keeps the person typing: after a failed try (`failed` once `busy` ends), `field` takes the keyboard back with its
 * text selected, ready to be retyped. In an effect, so it runs once the field is enabled again: a field disabled
 * while the try ran dropped the keyboard to the page, and focusing a disabled field does nothing.
 */
export function useRetypeAfterFailure(
  field: RefObject<HTMLInputElement | null>,
  busy: boolean,
  failed: boolean,
): void {
  useEffect(() => {
    if (busy || !failed) return;
    field.current?.focus();
    field.current?.select();
  }, [field, busy, failed]);
}
