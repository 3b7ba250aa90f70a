/**
 * Worker-thread side of the crypto pool, with native libsodium. Two kinds of job:
 * - a batch: chunks sealed or opened in place in a records buffer that travels back and forth by transfer (no copy),
 *   while the main thread reads, writes and keeps order;
 * - a stripe: this worker's share of a whole blob file, read, run and written here (file-stripe.ts), reporting
 *   progress as it goes and stopping early when asked;
 * - a batch of small files, read, sealed and packed, or read from packs, opened and written, here (small-files.ts).
 * Each job's key copy is wiped after use. Never log a job.
 */
import { parentPort, type MessagePort } from 'node:worker_threads';

import { runBatch, type BatchJob, type BatchOutcome } from './chunk-batch.js';
import { runStripe, type StripeJob } from './file-stripe.js';
import type { OpenBatch, SealBatch } from './small-file-protocol.js';
import { openSmallFiles, sealSmallFiles } from './small-files.js';
import { loadNativeSodium, type SodiumBackend } from './sodium.js';

/** What the pool sends a worker. */
export type WorkerRequest =
  | { readonly id: number; readonly job: BatchJob }
  | { readonly id: number; readonly stripe: StripeJob }
  | { readonly id: number; readonly sealSmall: SealBatch }
  | { readonly id: number; readonly openSmall: OpenBatch }
  | { readonly id: number; readonly stop: true };

const native = loadNativeSodium();
if (!native || !parentPort) throw new Error('the crypto worker needs sodium-native and a parent thread');
// Named anew so the narrowing reaches into the functions below.
const sodium: SodiumBackend = native;
const port: MessagePort = parentPort;

/** Stripes still running, by job id, and whether each has been asked to stop. */
const stripes = new Map<number, { stop: boolean }>();

function runBatchJob(id: number, job: BatchJob): void {
  let outcome: BatchOutcome;
  try {
    outcome = runBatch(sodium, job);
  } finally {
    sodium.memzero(job.key);
  }
  const { records } = job;
  port.postMessage({ id, outcome, records }, [records.buffer as ArrayBuffer]);
}

async function runStripeJob(id: number, job: StripeJob): Promise<void> {
  const state = { stop: false };
  stripes.set(id, state);
  try {
    const outcome = await runStripe(
      sodium,
      job,
      (bytes) => {
        port.postMessage({ id, progress: bytes });
      },
      () => state.stop,
    );
    port.postMessage({ id, outcome });
  } finally {
    stripes.delete(id);
  }
}

function sealSmallJob(id: number, batch: SealBatch): void {
  try {
    port.postMessage({ id, outcome: sealSmallFiles(sodium, batch) });
  } finally {
    sodium.memzero(batch.material);
  }
}

function openSmallJob(id: number, batch: OpenBatch): void {
  try {
    port.postMessage({ id, outcome: openSmallFiles(sodium, batch) });
  } finally {
    sodium.memzero(batch.material);
  }
}

/** Runs a job; one that throws (a bug) is answered with its message, so its caller fails instead of waiting. */
async function handle(message: WorkerRequest): Promise<void> {
  try {
    if ('job' in message) runBatchJob(message.id, message.job);
    else if ('stripe' in message) await runStripeJob(message.id, message.stripe);
    else if ('sealSmall' in message) sealSmallJob(message.id, message.sealSmall);
    else if ('openSmall' in message) openSmallJob(message.id, message.openSmall);
    else {
      const stripe = stripes.get(message.id);
      if (stripe) stripe.stop = true;
    }
  } catch (error) {
    port.postMessage({ id: message.id, error: error instanceof Error ? error.message : String(error) });
  }
}

port.on('message', (message: WorkerRequest) => {
  void handle(message);
});
port.postMessage({ ready: true });
