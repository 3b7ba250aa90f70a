import { ChevronDown, ChevronRight, Folder, FolderOpen } from 'lucide-react';
import { useState } from 'react';

import type { FolderTree as Tree } from '../../shared/contract.js';
import { useFolderDrop, type FolderDropHandlers } from './drag.js';
import { isWithin } from './entries.js';

interface FolderTreeProps extends FolderDropHandlers {
  readonly tree: Tree;
  readonly vaultName: string;
  /** The folder shown: it and the folders above it are open and it is marked. */
  readonly current: string;
  readonly onOpen: (path: string) => void;
}

/** The vault's folders in the sidebar; each one opens on click and takes dropped rows. */
export function FolderTree(props: FolderTreeProps) {
  return (
    <nav className="sidebar" aria-label="Folders">
      <h2 className="section-title">Folders</h2>
      <ul className="tree">
        <TreeItem {...props} node={props.tree} label={props.vaultName} />
      </ul>
    </nav>
  );
}

function TreeItem(props: FolderTreeProps & { node: Tree; label: string }) {
  const { node, current } = props;
  // Folders on the way to the current one start open; the user may open or close any.
  const [open, setOpen] = useState<boolean | null>(null);
  const expanded = open ?? isWithin(current, node.path);
  const drop = useFolderDrop(node.path, props);
  const here = current === node.path;
  const hasChildren = node.children.length > 0;
  return (
    <li>
      <div className={drop.over ? 'tree-row drop-target' : 'tree-row'} {...drop.props}>
        {hasChildren ? (
          <button
            type="button"
            className="tree-toggle"
            aria-expanded={expanded}
            aria-label={`${expanded ? 'Close' : 'Open'} ${props.label}`}
            onClick={() => {
              setOpen(!expanded);
            }}
          >
            {expanded ? (
              <ChevronDown size={14} aria-hidden="true" />
            ) : (
              <ChevronRight size={14} aria-hidden="true" />
            )}
          </button>
        ) : (
          <span className="tree-toggle" />
        )}
        <button
          type="button"
          className={here ? 'tree-folder current' : 'tree-folder'}
          aria-current={here ? 'page' : undefined}
          onClick={() => {
            props.onOpen(node.path);
          }}
        >
          {here ? <FolderOpen size={16} aria-hidden="true" /> : <Folder size={16} aria-hidden="true" />}
          <span className="name">{props.label}</span>
        </button>
      </div>
      {expanded && hasChildren && (
        <ul>
          {node.children.map((child) => (
            <TreeItem {...props} key={child.path} node={child} label={child.name} />
          ))}
        </ul>
      )}
    </li>
  );
}
