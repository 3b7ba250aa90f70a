import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { backends, hex, unhex } from '../helpers/backends.js';
import { VECTOR_ROOT } from '../helpers/vector-schema.js';

type Independent =
  | {
      primitive: 'xchacha20poly1305-ietf';
      key: string;
      nonce: string;
      aad: string;
      plaintext: string;
      ciphertext: string;
    }
  | {
      primitive: 'argon2id13';
      password: string;
      salt: string;
      opslimit: number;
      memlimit: number;
      output: string;
    }
  | { primitive: 'blake2b'; key: string; input: string; output: string };

const dir = join(VECTOR_ROOT, 'independent');
const vectors = readdirSync(dir)
  .filter((file) => file.endsWith('.json'))
  .map((file) => ({ file, vector: JSON.parse(readFileSync(join(dir, file), 'utf8')) as Independent }));

describe('independent published vectors', () => {
  it('covers every primitive the format uses', () => {
    const primitives = new Set(vectors.map(({ vector }) => vector.primitive));
    expect([...primitives].sort()).toEqual(['argon2id13', 'blake2b', 'xchacha20poly1305-ietf']);
  });

  for (const sodium of backends) {
    describe(sodium.name, () => {
      it.each(vectors)('$file', async ({ vector }) => {
        switch (vector.primitive) {
          case 'xchacha20poly1305-ietf': {
            const args = [unhex(vector.aad), unhex(vector.nonce), unhex(vector.key)] as const;
            expect(hex(sodium.aeadEncrypt(unhex(vector.plaintext), ...args))).toBe(vector.ciphertext);
            expect(hex(sodium.aeadDecrypt(unhex(vector.ciphertext), ...args) ?? Buffer.alloc(0))).toBe(
              vector.plaintext,
            );
            break;
          }
          case 'argon2id13': {
            const out = await sodium.argon2id(
              vector.output.length / 2,
              unhex(vector.password),
              unhex(vector.salt),
              vector.opslimit,
              vector.memlimit,
            );
            expect(hex(out)).toBe(vector.output);
            break;
          }
          case 'blake2b':
            expect(
              hex(sodium.blake2b(vector.output.length / 2, unhex(vector.input), unhex(vector.key))),
            ).toBe(vector.output);
            break;
        }
      });
    });
  }
});
