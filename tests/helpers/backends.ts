import { loadNativeSodium, loadWasmSodium, type SodiumBackend } from '../../src/core/crypto/sodium.js';

const native = loadNativeSodium();
if (!native)
  throw new Error('sodium-native failed to load: the test suite checks both backends and needs it');

/** Both libsodium backends; every crypto test runs against each. */
export const backends: readonly SodiumBackend[] = [native, await loadWasmSodium()];
export const nativeSodium: SodiumBackend = native;

export const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
export const unhex = (text: string): Buffer => Buffer.from(text, 'hex');

/** A copy of `bytes` with the byte at `offset` XORed with `mask`. */
export function flipped(bytes: Buffer, offset: number, mask = 0x01): Buffer {
  const out = Buffer.from(bytes);
  out.writeUInt8((out.readUInt8(offset) ^ mask) & 0xff, offset);
  return out;
}
