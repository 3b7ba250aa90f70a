import { randomBytes } from 'node:crypto';

import { ContentDecryptor, ContentEncryptor, type ContentBinding } from '../../src/core/crypto/content.js';
import { Keyring, SecretKey } from '../../src/core/crypto/keys.js';
import type { SodiumBackend } from '../../src/core/crypto/sodium.js';

export const KEY_ID = 1;

/** A one-key vault context for content tests. */
export function contentFixture(sodium: SodiumBackend, chunkSize = 64) {
  const keyring = new Keyring();
  keyring.add(KEY_ID, SecretKey.generate(sodium));
  const newBinding = (): ContentBinding => ({ vaultId: randomBytes(16), fileId: randomBytes(16) });
  const vaultBinding = newBinding();
  const dek = (): SecretKey => {
    const key = keyring.find(KEY_ID);
    if (!key) throw new Error('no key');
    return key;
  };
  const encrypt = (plaintext: Buffer, binding: ContentBinding = vaultBinding): Buffer => {
    const encryptor = ContentEncryptor.create(sodium, dek(), KEY_ID, binding, chunkSize);
    const out: Buffer[] = [];
    encryptor.push(plaintext, (b) => out.push(b));
    encryptor.finish((b) => out.push(b));
    return Buffer.concat(out);
  };
  const decrypt = (blob: Buffer, binding: ContentBinding = vaultBinding): Buffer => {
    const decryptor = new ContentDecryptor(sodium, (id) => keyring.find(id), binding);
    const out: Buffer[] = [];
    decryptor.push(blob, (b) => out.push(b));
    decryptor.finish((b) => out.push(b));
    return Buffer.concat(out);
  };
  return { keyring, binding: vaultBinding, newBinding, dek, encrypt, decrypt, chunkSize };
}
