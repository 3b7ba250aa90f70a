/**
 * Measures the two figures FORMAT.md quotes: AEAD throughput by chunk size, and Argon2id time per KDF preset, for
 * both libsodium backends. Run: npx tsx scripts/crypto-bench.ts. Medians of 3 runs; the machine is noisy, so
 * compare rows with each other rather than with other days.
 */
import { KDF_PRESETS } from '../src/core/crypto/kdf.js';
import { loadNativeSodium, loadWasmSodium, type SodiumBackend } from '../src/core/crypto/sodium.js';
import { median } from './bench-stats.js';

const seconds = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e9;

function aeadThroughput(
  sodium: SodiumBackend,
  chunkSize: number,
  total: number,
): { encrypt: number; decrypt: number } {
  const key = sodium.randomBytes(32);
  const nonce = sodium.randomBytes(24);
  const aad = sodium.randomBytes(61);
  const plaintext = sodium.randomBytes(chunkSize);
  const count = Math.max(1, Math.floor(total / chunkSize));
  let start = process.hrtime.bigint();
  let sealed: Buffer = Buffer.alloc(0);
  for (let i = 0; i < count; i++) sealed = sodium.aeadEncrypt(plaintext, aad, nonce, key);
  const encrypt = (count * chunkSize) / seconds(start) / 1e6;
  start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) sodium.aeadDecrypt(sealed, aad, nonce, key);
  const decrypt = (count * chunkSize) / seconds(start) / 1e6;
  return { encrypt, decrypt };
}

const native = loadNativeSodium();
const backends = [...(native ? [native] : []), await loadWasmSodium()];
console.log('AEAD throughput, MB/s (median of 3), XChaCha20-Poly1305-IETF');
console.log('| backend | chunk | encrypt | decrypt |\n|---|---|---|---|');
for (const sodium of backends) {
  const total = sodium.name === 'sodium-native' ? 256 * 1024 * 1024 : 64 * 1024 * 1024;
  for (const chunkSize of [4096, 16384, 65536, 262144, 1048576]) {
    const runs = [0, 1, 2].map(() => aeadThroughput(sodium, chunkSize, total));
    const enc = median(runs.map((r) => r.encrypt));
    const dec = median(runs.map((r) => r.decrypt));
    console.log(`| ${sodium.name} | ${chunkSize / 1024} KiB | ${enc.toFixed(0)} | ${dec.toFixed(0)} |`);
  }
}

console.log('\nArgon2id time per preset, seconds (median of 3)');
console.log('| backend | preset | seconds |\n|---|---|---|');
for (const sodium of backends) {
  for (const [name, params] of Object.entries(KDF_PRESETS)) {
    if (name === 'sensitive' && sodium.name !== 'sodium-native') continue;
    const runs: number[] = [];
    for (let i = 0; i < 3; i++) {
      const start = process.hrtime.bigint();
      await sodium.argon2id(
        32,
        Buffer.from('passphrase'),
        sodium.randomBytes(16),
        params.opslimit,
        params.memlimitKiB * 1024,
      );
      runs.push(seconds(start));
    }
    console.log(`| ${sodium.name} | ${name} | ${median(runs).toFixed(2)} |`);
  }
}
