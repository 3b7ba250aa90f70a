import { useRef } from 'react';
import { Menu, MenuItem, Popover, Separator } from 'react-aria-components';

export type EntryAction =
  'open' | 'open-with' | 'show-in-folder' | 'restore' | 'rename' | 'move' | 'new-folder' | 'delete';

/** The menu's items in order; '-' draws a line between groups. */
const ITEMS: readonly (readonly [EntryAction, string] | '-')[] = [
  ['open', 'Open'],
  ['open-with', 'Open with default app'],
  ['show-in-folder', 'Show in folder'],
  ['restore', 'Restore to…'],
  '-',
  ['rename', 'Rename'],
  ['move', 'Move to…'],
  ['new-folder', 'New folder'],
  '-',
  ['delete', 'Delete…'],
];

interface EntryMenuProps {
  /** Where it opens, in window coordinates. */
  readonly x: number;
  readonly y: number;
  /** How many entries it acts on (0: the folder's background). */
  readonly count: number;
  /** The one selected entry is a folder. */
  readonly folder: boolean;
  /** The host can open a file with another app. */
  readonly canOpenWith: boolean;
  /** The entries are search results, which can be shown in their folders. */
  readonly inSearch: boolean;
  readonly onAction: (action: EntryAction) => void;
  readonly onClose: () => void;
}

/** The context menu of the selection (React Aria: arrow keys, type-ahead, Esc closes). */
export function EntryMenu({ x, y, count, folder, canOpenWith, inSearch, onAction, onClose }: EntryMenuProps) {
  const anchor = useRef<HTMLDivElement>(null);
  const disabled: EntryAction[] = [];
  if (count !== 1) disabled.push('rename', 'open', 'show-in-folder');
  if (count !== 1 || folder || !canOpenWith) disabled.push('open-with');
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
          {ITEMS.filter((item) => inSearch || item[0] !== 'show-in-folder').map((item, index) =>
            item === '-' ? (
              <Separator key={index} className="menu-separator" />
            ) : (
              <MenuItem
                key={item[0]}
                id={item[0]}
                className={item[0] === 'delete' ? 'menu-item danger' : 'menu-item'}
              >
                {item[1]}
              </MenuItem>
            ),
          )}
        </Menu>
      </Popover>
    </>
  );
}
