/** The browser's modal dialogs (React Aria: focus kept inside, Esc cancels, focus back where it was after). */
import { useId, useState, type ReactNode } from 'react';
import {
  Button,
  Dialog,
  Heading,
  ListBox,
  ListBoxItem,
  Modal,
  ModalOverlay,
  RadioButton,
  RadioField,
  RadioGroup,
  Label,
} from 'react-aria-components';

import type { FolderTree, VaultEntry } from '../../shared/contract.js';
import { plural } from '../../shared/plural.js';
import { nameOf, parentOf } from '../format.js';
import { describeItems, flattenTree, folderLabel, isWithin } from './entries.js';

export function Frame({
  title,
  onCancel,
  children,
  role = 'dialog',
}: {
  title: string;
  onCancel: () => void;
  children: ReactNode;
  role?: 'dialog' | 'alertdialog';
}) {
  return (
    <ModalOverlay
      isOpen
      isDismissable
      onOpenChange={(open) => {
        if (!open) onCancel();
      }}
      className="modal-backdrop"
    >
      <Modal className="card dialog">
        <Dialog role={role} className="dialog-body">
          <Heading slot="title">{title}</Heading>
          {children}
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}

/**
 * Cancel, then the dialog's own button. The own button has the focus first (Enter confirms, Esc cancels), unless it
 * destroys something for good: then Cancel has it, so an Enter pressed out of habit loses nothing.
 */
export function Actions({
  label,
  kind = 'primary',
  disabled = false,
  onConfirm,
  onCancel,
}: {
  label: string;
  kind?: 'primary' | 'danger';
  disabled?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <div className="actions">
      <Button onPress={onCancel} autoFocus={kind === 'danger'}>
        Cancel
      </Button>
      <Button
        className={kind}
        autoFocus={kind !== 'danger' && !disabled}
        isDisabled={disabled}
        onPress={onConfirm}
      >
        {label}
      </Button>
    </div>
  );
}

const SHOWN_NAMES = 6;

/** Asks before deleting, naming what goes (and that a folder's contents go with it). */
export function DeleteDialog({
  entries,
  onConfirm,
  onCancel,
}: {
  entries: readonly VaultEntry[];
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const folders = entries.filter((entry) => entry.type === 'folder').length;
  const rest = entries.length - SHOWN_NAMES;
  return (
    <Frame title={`Delete ${describeItems(entries)}?`} onCancel={onCancel} role="alertdialog">
      <ul className="dialog-list">
        {entries.slice(0, SHOWN_NAMES).map((entry) => (
          <li key={entry.path}>{entry.path}</li>
        ))}
        {rest > 0 && <li className="muted">and {plural(rest, 'more item')}</li>}
      </ul>
      <p>
        {folders > 0 && `Everything inside the ${folders === 1 ? 'folder' : 'folders'} goes too. `}
        {entries.length === 1 ? 'It is' : 'They are'} removed from the vault for good; copies elsewhere on
        this computer are not touched.
      </p>
      <Actions
        label={entries.length === 1 ? 'Delete' : `Delete ${plural(entries.length, 'item')}`}
        kind="danger"
        onConfirm={onConfirm}
        onCancel={onCancel}
      />
    </Frame>
  );
}

/**
 * Chooses the folder to move entries into. The entries' own folders (and those inside them) are not offered; the
 * folder they all are in already is shown but cannot be chosen.
 */
export function MoveDialog({
  entries,
  tree,
  vaultName,
  onConfirm,
  onCancel,
}: {
  entries: readonly VaultEntry[];
  tree: FolderTree;
  vaultName: string;
  onConfirm: (destination: string) => void;
  onCancel: () => void;
}) {
  const folders = flattenTree(tree).filter(
    ({ folder }) => !entries.some((entry) => isWithin(folder.path, entry.path)),
  );
  const holders = new Set(entries.map((entry) => parentOf(entry.path)));
  const [here] = holders.size === 1 ? holders : [];
  const [destination, setDestination] = useState<string | null>(null);
  const hintId = `${useId()}-hint`;
  const shownName = (folder: FolderTree): string => (folder.path === '/' ? vaultName : folder.name);
  const nameCounts = new Map<string, number>();
  for (const { folder } of folders)
    nameCounts.set(shownName(folder), (nameCounts.get(shownName(folder)) ?? 0) + 1);
  // Indents show sighted users where a folder is; a name shared by two folders is told apart by where each is.
  const spokenName = (folder: FolderTree): string | undefined => {
    if ((nameCounts.get(shownName(folder)) ?? 0) < 2) return undefined;
    const where =
      folder.path === '/'
        ? `${vaultName} (the top of the vault)`
        : `${folder.name}, in ${folderLabel(vaultName, parentOf(folder.path))}`;
    return folder.path === here ? `${where} (already here)` : where;
  };
  return (
    <Frame title={`Move ${describeItems(entries)} to…`} onCancel={onCancel}>
      <p className="muted" id={hintId}>
        Choose a folder, then “Move here” (or press Enter).
      </p>
      <ListBox
        aria-label="Destination folder"
        aria-describedby={hintId}
        // The keyboard starts in the list, where the arrows choose (nothing is chosen for the person).
        autoFocus
        className="chooser-list"
        selectionMode="single"
        // As in a file manager's folder chooser: a click or the arrows choose, Enter or a double-click moves there.
        selectionBehavior="replace"
        onAction={(key) => {
          onConfirm(String(key));
        }}
        disabledKeys={here === undefined ? [] : [here]}
        selectedKeys={destination === null ? [] : [destination]}
        onSelectionChange={(keys) => {
          const [key] = keys === 'all' ? [] : [...keys];
          setDestination(typeof key === 'string' ? key : null);
        }}
        items={folders.map(({ folder, depth }) => ({ id: folder.path, folder, depth }))}
      >
        {({ folder, depth }) => (
          <ListBoxItem
            id={folder.path}
            textValue={shownName(folder)}
            aria-label={spokenName(folder)}
            className="chooser-item"
            style={{ paddingLeft: 12 + depth * 16 }}
          >
            {shownName(folder)}
            {folder.path === here && (
              <>
                {' '}
                <span className="chooser-note">(already here)</span>
              </>
            )}
          </ListBoxItem>
        )}
      </ListBox>
      <Actions
        label="Move here"
        disabled={destination === null}
        onConfirm={() => {
          if (destination !== null) onConfirm(destination);
        }}
        onCancel={onCancel}
      />
    </Frame>
  );
}

/** What an add does with names already in its folder (the engine's choices but `fail`). */
export type ExistingChoice = 'keep-both' | 'skip' | 'replace';

/**
 * Asked once per add, before it starts, when names it brings are already in the folder: one choice for the batch,
 * as a file manager asks. Keep both is the default (nothing is lost); Replace is marked as the one that discards.
 */
export function ExistingNamesDialog({
  count,
  paths,
  folderLabel,
  onConfirm,
  onCancel,
}: {
  count: number;
  paths: readonly string[];
  folderLabel: string;
  onConfirm: (choice: ExistingChoice) => void;
  onCancel: () => void;
}) {
  const [first] = paths;
  const title =
    count === 1 && first !== undefined
      ? `“${nameOf(first)}” already exists`
      : `${plural(count, 'name')} already exist`;
  const rest = count - paths.length;
  return (
    <Frame title={title} onCancel={onCancel} role="alertdialog">
      <p>
        Already in <span className="location">{folderLabel}</span>:
      </p>
      <ul className="dialog-list">
        {paths.map((path) => (
          <li key={path}>{path}</li>
        ))}
        {rest > 0 && <li className="muted">and {rest.toLocaleString()} more</li>}
      </ul>
      <p className="muted">
        Keep both adds them under numbered names, such as “report (2).pdf”. Replace puts the new file in place
        of the old one, which is then deleted from the vault. Folders of the same name are merged.
      </p>
      <div className="actions">
        <Button onPress={onCancel}>Cancel</Button>
        <Button
          onPress={() => {
            onConfirm('skip');
          }}
        >
          Skip
        </Button>
        <Button
          className="danger"
          onPress={() => {
            onConfirm('replace');
          }}
        >
          Replace
        </Button>
        <Button
          className="primary"
          autoFocus
          onPress={() => {
            onConfirm('keep-both');
          }}
        >
          Keep both
        </Button>
      </div>
    </Frame>
  );
}

/** After the destination is picked: what to do with files that already exist there. */
export function RestoreDialog({
  entries,
  destinationLabel,
  onConfirm,
  onCancel,
}: {
  entries: readonly VaultEntry[];
  destinationLabel: string;
  onConfirm: (overwrite: boolean) => void;
  onCancel: () => void;
}) {
  const [choice, setChoice] = useState('skip');
  return (
    <Frame title={`Restore ${describeItems(entries)}`} onCancel={onCancel}>
      <p>
        Into <span className="location">{destinationLabel}</span>
      </p>
      <RadioGroup value={choice} onChange={setChoice} className="radio-group">
        <Label>When a file of the same name is already there</Label>
        <RadioField value="skip">
          <RadioButton className="radio">Skip it and keep the file that is there</RadioButton>
        </RadioField>
        <RadioField value="overwrite">
          <RadioButton className="radio">Replace it with the copy from the vault</RadioButton>
        </RadioField>
      </RadioGroup>
      <Actions
        label="Restore"
        onConfirm={() => {
          onConfirm(choice === 'overwrite');
        }}
        onCancel={onCancel}
      />
    </Frame>
  );
}
