import { FolderInput } from 'lucide-react';
import { useEffect, useRef, type KeyboardEvent } from 'react';

import { focusIsNowhere } from '../focus.js';

/**
 * What an empty folder shows in place of the table. It takes the keyboard as the table would (a folder opened from
 * the keyboard must not leave the focus nowhere), and answers the table's keys that still mean something with no
 * rows: Backspace or Alt+Up goes up, Shift+F10 or the menu key opens the folder's menu.
 */
export function EmptyFolder({
  onUp,
  onMenu,
}: {
  /** Goes to the folder above; null at the top of the vault, where there is none. */
  onUp: (() => void) | null;
  onMenu: (x: number, y: number) => void;
}) {
  const area = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (focusIsNowhere()) area.current?.focus();
  }, []);
  const onKeyDown = (event: KeyboardEvent) => {
    const up = onUp !== null && (event.key === 'Backspace' || (event.key === 'ArrowUp' && event.altKey));
    const menu = event.key === 'ContextMenu' || (event.key === 'F10' && event.shiftKey);
    if (!up && !menu) return;
    event.preventDefault();
    event.stopPropagation();
    if (up) onUp();
    else {
      const box = area.current?.getBoundingClientRect();
      if (box) onMenu(box.left + 48, box.top + 48);
    }
  };
  return (
    <div
      ref={area}
      className="empty empty-folder"
      role="group"
      aria-label="Empty folder"
      // Focusable like the table it stands for, so the keyboard stays in the folder.
      tabIndex={0}
      // Told to screen readers, as nothing on screen says them.
      aria-keyshortcuts={onUp === null ? 'Shift+F10' : 'Backspace Alt+ArrowUp Shift+F10'}
      onKeyDown={onKeyDown}
    >
      <FolderInput size={40} aria-hidden="true" className="muted" />
      <p>This folder is empty.</p>
      <p className="muted">Drop files here or use “Add files…”.</p>
    </div>
  );
}
