import * as fs from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it, vi } from 'vitest';

import { Keyring, SecretKey } from '../../src/core/crypto/keys.js';
import { IoError } from '../../src/core/errors.js';
import { ActivityLog } from '../../src/core/vault/activity-log.js';
import { nativeSodium } from '../helpers/backends.js';
import { tempDir } from '../helpers/vault.js';

// The log's writes go through this module's writeSync, so one of them can be cut short as a full disk cuts it.
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return { ...real, writeSync: vi.fn(real.writeSync) };
});

afterEach(() => {
  vi.mocked(fs.writeSync).mockReset();
});

describe('activity log on a disk that fills up mid-entry', () => {
  it('says the entry was not written, and the next append repairs the torn part', async () => {
    const real = await vi.importActual<typeof import('node:fs')>('node:fs');
    vi.mocked(fs.writeSync).mockImplementation(real.writeSync);
    const dir = tempDir();
    fs.mkdirSync(join(dir, 'tmp'));
    const keyring = new Keyring();
    keyring.add(1, SecretKey.generate(nativeSodium));
    const log = new ActivityLog(dir, {
      sodium: nativeSodium,
      keyring,
      vaultId: nativeSodium.randomBytes(16),
    });
    log.append({ kind: 'move', counts: { entries: 1 } });

    const cutShort = (fd: number, buffer: NodeJS.ArrayBufferView): number =>
      real.writeSync(fd, buffer, 0, 40);
    vi.mocked(fs.writeSync).mockImplementationOnce(cutShort as typeof fs.writeSync);
    expect(() => {
      log.append({ kind: 'rename', counts: { entries: 1 } });
    }).toThrow(IoError);

    log.append({ kind: 'move', counts: { entries: 1 } });
    const report = log.read();
    expect(report.problems).toEqual([]);
    expect(report.entries.map((entry) => entry.kind)).toEqual(['move', 'log-repaired', 'move']);
    expect(report.entries[1]?.counts).toEqual({ tornBytes: 40, discardedEntries: 0 });
  });
});
