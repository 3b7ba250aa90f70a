import { useRef } from 'react';
import { Menu, MenuItem, Popover, Separator } from 'react-aria-components';

export type EntryAction = 'open' | 'restore' | 'rename' | 'move' | 'new-folder' | 'delete';

interface EntryMenuProps {
  /** Where it opens, in window coordinates. */
  readonly x: number;
  readonly y: number;
  /** How many entries it acts on (0: the folder's background). */
  readonly count: number;
  /** The one selected entry is a folder. */
  readonly folder: boolean;
  readonly onAction: (action: EntryAction) => void;
  readonly onClose: () => void;
}

/** The context menu of the selection (React Aria: arrow keys, type-ahead, Esc closes). */
export function EntryMenu({ x, y, count, folder, onAction, onClose }: EntryMenuProps) {
  const anchor = useRef<HTMLDivElement>(null);
  const disabled: EntryAction[] = [];
  if (count !== 1) disabled.push('rename');
  if (count !== 1 || !folder) disabled.push('open');
  if (count === 0) disabled.push('restore', 'move', 'delete');
  return (
    <>
      <div ref={anchor} className="menu-anchor" style={{ left: x, top: y }} />
      <Popover
        triggerRef={anchor}
        isOpen
        onOpenChange={(open) => {
          if (!open) onClose();
        }}
        placement="bottom start"
        offset={2}
        className="menu-popover"
      >
        <Menu
          aria-label="Actions"
          autoFocus="first"
          className="menu"
          disabledKeys={disabled}
          onAction={(key) => {
            onClose();
            onAction(key as EntryAction);
          }}
        >
          <MenuItem id="open" className="menu-item">
            Open
          </MenuItem>
          <MenuItem id="restore" className="menu-item">
            Restore to…
          </MenuItem>
          <Separator className="menu-separator" />
          <MenuItem id="rename" className="menu-item">
            Rename
          </MenuItem>
          <MenuItem id="move" className="menu-item">
            Move to…
          </MenuItem>
          <MenuItem id="new-folder" className="menu-item">
            New folder
          </MenuItem>
          <Separator className="menu-separator" />
          <MenuItem id="delete" className="menu-item danger">
            Delete…
          </MenuItem>
        </Menu>
      </Popover>
    </>
  );
}
