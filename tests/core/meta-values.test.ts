import { describe, expect, it } from 'vitest';

import { IntegrityError, Vault } from '../../src/core/index.js';
import { nativeSodium } from '../helpers/backends.js';
import { editIndex } from '../helpers/index-format.js';
import { newVault, passphrase, track } from '../helpers/vault.js';

/**
 * FORMAT.md 8.2: every meta value is a BLOB of a set length. Another storage class or length is damage of the index,
 * said as such, never a crash or a guess (an `index_schema` that is not 4 bytes once read as schema 1).
 */
describe('meta values of another storage class or length', () => {
  const cases: [string, string][] = [
    ['index_schema as TEXT', "UPDATE meta SET value = '4' WHERE key = 'index_schema'"],
    ['index_schema of 2 bytes', "UPDATE meta SET value = x'0400' WHERE key = 'index_schema'"],
    ['generation as an INTEGER', "UPDATE meta SET value = 7 WHERE key = 'generation'"],
    ['generation of 2 bytes', "UPDATE meta SET value = x'0700' WHERE key = 'generation'"],
    ['content_padding as TEXT', "UPDATE meta SET value = 'padme' WHERE key = 'content_padding'"],
  ];
  for (const [what, sql] of cases) {
    it(`${what} is reported as a malformed index`, async () => {
      const { vault, dir } = await newVault();
      await vault.unlock(passphrase());
      vault.close();
      await vault.released();
      editIndex(dir, (db) => db.exec(sql));
      const opened = async (): Promise<void> => {
        const reopened = track(await Vault.open(dir, { sodium: nativeSodium }));
        await reopened.unlock(passphrase());
        // The padding setting is read when a file is written.
        await reopened.addStreams([{ name: 'a.txt', size: 1, mtime: 0, bytes: Buffer.from('a') }]);
      };
      const failure: unknown = await opened().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(IntegrityError);
      expect((failure as IntegrityError).reason).toBe('malformed');
    });
  }
});

/** FORMAT.md 8.2: a table without a column its schema has is a malformed index, said when it is opened. */
describe('tables without a column of their schema', () => {
  // A writable open makes a missing intents table anew (empty: no operation was under way), as for a schema 2 index.
  const cases: [string, string, boolean[]][] = [
    ['nodes without version (schema 4)', 'ALTER TABLE nodes DROP COLUMN version', [false, true]],
    [
      'contents without pack_length (schema 4)',
      'ALTER TABLE contents DROP COLUMN pack_length',
      [false, true],
    ],
    ['no intents table (schema 4)', 'DROP TABLE intents', [true]],
  ];
  for (const [what, sql, opens] of cases) {
    for (const readOnly of opens) {
      it(`${what}, opened ${readOnly ? 'read-only' : 'writable'}: a malformed index naming the column`, async () => {
        const { vault, dir } = await newVault();
        vault.close();
        await vault.released();
        editIndex(dir, (db) => db.exec(sql));
        const failure: unknown = await Vault.open(dir, { sodium: nativeSodium, readOnly }).then(
          (opened) => {
            opened.close();
            return undefined;
          },
          (error: unknown) => error,
        );
        expect(failure).toBeInstanceOf(IntegrityError);
        expect((failure as IntegrityError).reason).toBe('malformed');
        expect((failure as Error).message).toMatch(/its table "\w+" has no column "\w+" \(index schema 4\)/u);
      });
    }
  }
});
