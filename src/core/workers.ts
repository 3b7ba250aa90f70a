import { sharedCryptoPool } from './crypto/pool.js';

/**
 * Starts the worker threads that adds and restores use, without waiting for them. Starting takes 50-100 ms; a
 * caller that expects such work calls this before unlocking, so the threads start while the key is derived.
 * Optional: the work starts them when needed anyway.
 */
export function startWorkers(): void {
  void sharedCryptoPool();
}
