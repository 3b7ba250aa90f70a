import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import type { IndexDb, Intent } from '../../src/core/vault/index-db.js';
import { settleIntents } from '../../src/core/vault/leftovers.js';
import { tempDir } from '../helpers/vault.js';

const pack = (byte: number): Intent => ({ kind: 'pack', id: Buffer.alloc(16, byte) });
const packFile = (dir: string, intent: Intent): string =>
  join(dir, 'packs', `${intent.id.toString('hex')}.pack`);

/**
 * The two things settling asks of the index, answered from `namedFor`: what rows name, call by call (a change may
 * commit between two calls), and the intents it clears.
 */
function indexAnswering(namedFor: Map<Intent, boolean[]>) {
  const cleared: Intent[] = [];
  const db = {
    names: (intent: Intent) => namedFor.get(intent)?.shift() ?? false,
    clearIntents: (intents: readonly Intent[]) => {
      cleared.push(...intents);
    },
  };
  return { db: db as unknown as IndexDb, cleared };
}

/** A vault folder holding two packs, and their intents. */
function twoPacksOnDisk() {
  const dir = tempDir();
  mkdirSync(join(dir, 'packs'));
  const first = pack(1);
  const second = pack(2);
  writeFileSync(packFile(dir, first), 'x');
  writeFileSync(packFile(dir, second), 'y');
  return { dir, first, second };
}

describe('settling intents', () => {
  it('removes the files no row names and forgets their intents, and forgets those whose files rows still name', async () => {
    const { dir, first: unnamed, second: named } = twoPacksOnDisk();
    const { db, cleared } = indexAnswering(
      new Map([
        [unnamed, [false]],
        [named, [true, true]],
      ]),
    );
    expect(await settleIntents(dir, db, [unnamed, named])).toBe(1);
    expect([existsSync(packFile(dir, unnamed)), existsSync(packFile(dir, named))]).toEqual([false, true]);
    expect(cleared).toEqual([unnamed, named]);
  });

  it('keeps the intent of a file a change stopped naming while it settled, for that change to settle', async () => {
    const { dir, first: unnamed, second: releasedMeanwhile } = twoPacksOnDisk();
    // Named when looked at, no longer once the removal of the other file was made durable.
    const { db, cleared } = indexAnswering(
      new Map([
        [unnamed, [false]],
        [releasedMeanwhile, [true, false]],
      ]),
    );
    await settleIntents(dir, db, [unnamed, releasedMeanwhile]);
    expect(cleared).toEqual([unnamed]);
    expect(existsSync(packFile(dir, releasedMeanwhile))).toBe(true);
  });

  it('leaves alone, recorded, an intent its caller says to keep when it is reached', async () => {
    const { dir, first: unnamed, second: held } = twoPacksOnDisk();
    const { db, cleared } = indexAnswering(new Map());
    const asked: Intent[] = [];
    const lookingAt = (intent: Intent) => {
      asked.push(intent);
      return intent === held ? 'keep' : 'settle';
    };
    expect(await settleIntents(dir, db, [unnamed, held], lookingAt)).toBe(1);
    expect(asked).toEqual([unnamed, held]);
    expect(cleared).toEqual([unnamed]);
    expect(existsSync(packFile(dir, held))).toBe(true);
  });
});
