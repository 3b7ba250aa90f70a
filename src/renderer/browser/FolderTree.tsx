import { ChevronRight, Folder, FolderOpen } from 'lucide-react';
import { memo, useEffect, useMemo, useState, type KeyboardEvent } from 'react';
import { Button, Collection, Tree, TreeItem, TreeItemContent, type Key } from 'react-aria-components';

import type { FolderTree as FolderNode } from '../../shared/contract.js';
import { parentOf } from '../format.js';
import { useFolderDrop, type FolderDropHandlers } from './drag.js';

interface FolderTreeProps extends FolderDropHandlers {
  readonly tree: FolderNode;
  readonly vaultName: string;
  /** The folder shown: it and the folders above it are open and it is selected ('' while searching: none). */
  readonly current: string;
  readonly onOpen: (path: string) => void;
}

/** A folder as the tree's collection wants it: keyed by its path. */
interface TreeNode {
  readonly id: string;
  readonly name: string;
  readonly children: readonly TreeNode[];
}

function toNodes(folder: FolderNode, name: string): TreeNode {
  return {
    id: folder.path,
    name,
    children: folder.children.map((child) => toNodes(child, child.name)),
  };
}

/** `path` and every folder above it. */
function foldersUpTo(path: string): string[] {
  if (path === '') return [];
  const out = [path];
  for (let at = path; at !== '/'; at = parentOf(at)) out.push(parentOf(at));
  return out;
}

/**
 * The vault's folders in the sidebar, as a React Aria tree (ARIA treegrid: levels, set sizes and positions, the
 * WAI-ARIA keyboard model: arrows move and open or close, Home/End, type to find). Selecting a folder (click,
 * Enter or Space) opens it, so arrows only move focus and never load a folder per keystroke. Each row takes
 * dropped rows and files.
 */
export const FolderTree = memo(function FolderTree(props: FolderTreeProps) {
  const { tree, vaultName, current, onOpen } = props;
  // The same items while the tree is the same: new ones made React Aria rebuild every row at each keystroke of a
  // search.
  const items = useMemo(() => [toNodes(tree, vaultName)], [tree, vaultName]);
  const [expanded, setExpanded] = useState<ReadonlySet<Key>>(() => new Set(foldersUpTo(current)));
  // Folders on the way to the one shown open; the user may open or close any.
  useEffect(() => {
    setExpanded((before) => {
      const missing = foldersUpTo(current).filter((path) => !before.has(path));
      return missing.length === 0 ? before : new Set([...before, ...missing]);
    });
  }, [current]);
  return (
    <nav className="sidebar" aria-label="Folders" onKeyDownCapture={toFirstChild}>
      <h2 className="section-title" id="folder-tree-title">
        Folders
      </h2>
      <Tree
        aria-labelledby="folder-tree-title"
        className="tree"
        items={items}
        selectionMode="single"
        selectionBehavior="toggle"
        disallowEmptySelection
        selectedKeys={current === '' ? [] : [current]}
        onSelectionChange={(keys) => {
          const [key] = keys === 'all' ? [] : [...keys];
          if (typeof key === 'string' && key !== current) onOpen(key);
        }}
        expandedKeys={expanded}
        onExpandedChange={setExpanded}
      >
        {function renderItem(node: TreeNode) {
          return (
            <TreeItem id={node.id} textValue={node.name} className="tree-item">
              <TreeItemContent>
                {({ hasChildItems, isExpanded, isSelected }) => (
                  <FolderRow
                    path={node.id}
                    name={node.name}
                    toggle={hasChildItems}
                    expanded={isExpanded}
                    selected={isSelected}
                    handlers={props}
                  />
                )}
              </TreeItemContent>
              <Collection items={node.children}>{renderItem}</Collection>
            </TreeItem>
          );
        }}
      </Tree>
    </nav>
  );
});

/**
 * The WAI-ARIA tree's Right on an open folder: to its first child. React Aria's treegrid would move focus into
 * the row, onto the chevron button, which is there for the mouse.
 */
function toFirstChild(event: KeyboardEvent): void {
  const row = event.target;
  if (event.key !== 'ArrowRight' || !(row instanceof HTMLElement)) return;
  if (row.getAttribute('role') !== 'row' || row.getAttribute('aria-expanded') !== 'true') return;
  const child = row.nextElementSibling;
  const level = Number(row.getAttribute('aria-level'));
  if (!(child instanceof HTMLElement) || Number(child.getAttribute('aria-level')) !== level + 1) return;
  event.preventDefault();
  event.stopPropagation();
  child.focus();
}

function FolderRow({
  path,
  name,
  toggle,
  expanded,
  selected,
  handlers,
}: {
  path: string;
  name: string;
  toggle: boolean;
  expanded: boolean;
  selected: boolean;
  handlers: FolderDropHandlers;
}) {
  const drop = useFolderDrop(path, handlers);
  const Icon = selected ? FolderOpen : Folder;
  return (
    <div className={drop.over ? 'tree-row drop-target' : 'tree-row'} {...drop.props}>
      {toggle ? (
        // Not in the tab order: the tree's own keys (Right, Left) expand and collapse; this is for the mouse. React
        // Aria labels it by this word and the row's name ("Expand Photos"): the name is not repeated here. Not
        // "Open": elsewhere that goes into a folder, which this button does not.
        <Button slot="chevron" className="tree-toggle" aria-label={expanded ? 'Collapse' : 'Expand'}>
          <ChevronRight size={14} aria-hidden="true" className={expanded ? 'chevron open' : 'chevron'} />
        </Button>
      ) : (
        <span className="tree-toggle" />
      )}
      <span className="tree-folder">
        <Icon size={16} aria-hidden="true" />
        <span className="name" title={name}>
          {name}
        </span>
      </span>
    </div>
  );
}
