import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { folderSyncUnsupported, fsyncDirectorySync } from '../../src/core/publish.js';
import { fsyncDirectory } from '../../src/core/vault/durable.js';
import { tempDir } from '../helpers/vault.js';

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(code), { code });
}

describe('making a folder durable', () => {
  it('fsyncs a folder here, and fails on one that is not there', async () => {
    const folder = join(tempDir(), 'made');
    mkdirSync(folder);
    fsyncDirectorySync(folder);
    await fsyncDirectory(folder);
    expect(() => {
      fsyncDirectorySync(join(folder, 'missing'));
    }).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    await expect(fsyncDirectory(join(folder, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it("tolerates only Windows' refusal to fsync a folder (security checklist 28)", () => {
    expect(folderSyncUnsupported(errno('EPERM'), 'win32')).toBe(true);
    expect(folderSyncUnsupported(errno('EISDIR'), 'win32')).toBe(true);
    expect(folderSyncUnsupported(errno('EIO'), 'win32')).toBe(false);
    expect(folderSyncUnsupported(errno('ENOENT'), 'win32')).toBe(false);
    // The same errors elsewhere are real ones: the rename they follow might not survive a power cut.
    for (const platform of ['linux', 'darwin', 'freebsd'] as const) {
      expect(folderSyncUnsupported(errno('EPERM'), platform)).toBe(false);
      expect(folderSyncUnsupported(errno('EISDIR'), platform)).toBe(false);
    }
  });
});
