/**
 * Worker-thread side of the crypto pool: seals and opens batches of chunks in place with native libsodium, so the
 * main thread only reads, writes and keeps order. The records buffer travels back and forth by transfer (no
 * copy); each job's key copy is wiped after use. Never log a job.
 */
import { parentPort } from 'node:worker_threads';

import { runBatch, type BatchJob, type BatchOutcome } from './chunk-batch.js';
import { loadNativeSodium } from './sodium.js';

const sodium = loadNativeSodium();
const port = parentPort;
if (!sodium || !port) throw new Error('the crypto worker needs sodium-native and a parent thread');

port.on('message', (message: { id: number; job: BatchJob }) => {
  let outcome: BatchOutcome;
  try {
    outcome = runBatch(sodium, message.job);
  } finally {
    sodium.memzero(message.job.key);
  }
  const { records } = message.job;
  port.postMessage({ id: message.id, outcome, records }, [records.buffer as ArrayBuffer]);
});
port.postMessage({ ready: true });
