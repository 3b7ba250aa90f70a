/**
 * What several component tests need alike: entries and folder trees to show, a vault and its facts, a host that
 * offers nothing beyond the core contract, the default settings, and ways to read what the window asked.
 */
import { act } from '@testing-library/react';

import {
  DEFAULT_SETTINGS,
  type Channel,
  type FolderTree,
  type HostCapabilities,
  type RequestOf,
  type Settings,
  type VaultEntry,
  type VaultInfo,
} from '../../src/shared/contract.js';
import type { FakeApi } from './fake-api.js';

/** A file at `path` (its name the last part). */
export function file(path: string, size = 10, mtime = 0): VaultEntry {
  return { path, name: path.slice(path.lastIndexOf('/') + 1), type: 'file', size, mtime };
}
/** A folder at `path`. */
export function folder(path: string, mtime = 0): VaultEntry {
  return { ...file(path, 0, mtime), type: 'folder' };
}
/** A folder of the sidebar's tree, with its subfolders. */
export function tree(path: string, children: FolderTree[] = []): FolderTree {
  return { path, name: path.slice(path.lastIndexOf('/') + 1), mtime: 0, children, truncated: false };
}

export { LOCKED_VAULT, VAULT } from './vault-summary.js';

/** The facts of a format 1.1 vault with nothing in it. */
export const INFO: VaultInfo = {
  formatVersion: 1,
  format: '1.1',
  vaultId: 'v1',
  locked: false,
  readOnly: false,
  headerOlderThanData: false,
  warnings: [],
  kdf: [],
  contentPadding: 'padme',
  slots: [],
  storedBytes: 0,
};

/** A host that can do nothing beyond the core contract (the preview's, less its drops). */
export const NO_CAPABILITIES: HostCapabilities = {
  openWithApp: false,
  showInFolder: false,
  contentProtection: false,
  notifications: 'host',
  folderDrops: false,
};

/** The settings of a first start, the decrypted-copy notice already seen. */
export const SETTINGS: Settings = { ...DEFAULT_SETTINGS, openCopyNoticeShown: true };

/** What the window asked of `channel`, in order. */
export const requests = <C extends Channel>(api: FakeApi, channel: C): RequestOf<C>[] =>
  api.calls.filter((c) => c.channel === channel).map((c) => c.request as RequestOf<C>);

/** Lets every answered request run its course, for asserting that something did not happen. */
export const settle = () =>
  act(async () => {
    await new Promise((resolve) => setTimeout(resolve, 0));
  });
