/** What unlocking finds is said in the window: damage in the index, in words, until dismissed and gone at lock. */
import { join } from 'node:path';

import Database from 'better-sqlite3';

import { makeVault } from './engine-vault.js';
import { expect, test } from './fixtures.js';
import { openAndUnlock } from './steps.js';

test('a damaged index entry: unlock lists the rest and says what was found and what to do', async ({
  coffer,
}) => {
  const dir = join(coffer.vaultParent, 'Damaged vault');
  await makeVault(dir, new Map([['/docs', ['a.txt', 'b.txt']]]));
  // One record's ciphertext flipped by hand, and the snapshot removed so that unlock reads the rows.
  const db = new Database(join(dir, 'index.sqlite'));
  const { id, record } = db.prepare('SELECT id, record FROM nodes LIMIT 1').get() as {
    id: Buffer;
    record: Buffer;
  };
  record[40] = (record[40] ?? 0) ^ 1;
  db.prepare('UPDATE nodes SET record = ? WHERE id = ?').run(record, id);
  db.prepare("DELETE FROM meta WHERE key = 'tree_snapshot'").run();
  db.close();

  const { page } = coffer;
  await openAndUnlock(coffer, page, dir);
  const alert = page.getByRole('alert').filter({ hasText: 'could not be read' });
  // The damaged row may be the folder, whose files then have no place in the tree either.
  await expect(alert).toContainText(/\d+ entr(y|ies) of this vault could not be read/u);
  await expect(alert).toContainText('Check vault');
  // The sum of the rows no longer matches the index commitment either: said in the engine's own words.
  await expect(alert).toContainText('its rows do not match its sealed commitment');

  await alert.getByRole('button', { name: 'Dismiss' }).click();
  await expect(page.getByRole('alert')).toHaveCount(0);
});
