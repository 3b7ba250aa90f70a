/** The memory of index states outside the vault (rollback warnings): what is written, and when. */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { SeenStates, type IndexState } from '../../src/core/vault/seen-states.js';
import { tempDir } from '../helpers/vault.js';

const VAULT_ID = 'ab'.repeat(16);
const state = (generation: string, fingerprint: string): IndexState => ({
  vaultId: VAULT_ID,
  generation,
  fingerprint,
});

describe('seen index states', () => {
  it('writes a state once: the same state again leaves the file as it is, a new one replaces it', () => {
    const dir = tempDir();
    const seen = new SeenStates(dir);
    const first = state('7', 'c'.repeat(64));
    seen.remember(first);
    const [folder] = readdirSync(dir);
    const file = join(dir, folder ?? '', `${VAULT_ID}.json`);
    const written = statSync(file).ino;
    seen.remember(first);
    expect(statSync(file).ino).toBe(written);
    expect(seen.recall(VAULT_ID)).toEqual({
      vaultId: VAULT_ID,
      generation: '7',
      fingerprint: 'c'.repeat(64),
    });

    seen.remember(state('8', 'c'.repeat(64)));
    expect(statSync(file).ino).not.toBe(written);
    expect(seen.recall(VAULT_ID)).toMatchObject({ generation: '8' });
    const before = statSync(file).ino;
    seen.remember(state('8', 'd'.repeat(64)));
    expect(statSync(file).ino).not.toBe(before);
    expect(seen.recall(VAULT_ID)).toMatchObject({ generation: '8', fingerprint: 'd'.repeat(64) });
  });
});
