import { join } from 'node:path';

import { afterEach } from 'vitest';

import {
  createBackend,
  type Backend,
  type BackendOptions,
  type DialogProvider,
  type SystemShell,
} from '../../src/app/backend.js';
import type {
  Channel,
  EventName,
  EventPayloads,
  JobEvent,
  RequestOf,
  ResponseOf,
  Result,
} from '../../src/shared/contract.js';
import { nativeSodium } from '../helpers/backends.js';
import { startedJobId } from '../helpers/job-add.js';
import { PASSPHRASE, tempDir, writeTree } from '../helpers/vault.js';

export { PASSPHRASE };

/** Dialog answers a test queues before the request that opens the dialog; an empty queue answers "cancelled". */
export interface QueuedDialogs extends DialogProvider {
  readonly folders: (string | null)[];
  readonly files: (string[] | null)[];
  /** The folder each file dialog was to open in, in order (undefined: the system's choice). */
  readonly filesStartIn: (string | undefined)[];
}

function queuedDialogs(): QueuedDialogs {
  const folders: (string | null)[] = [];
  const files: (string[] | null)[] = [];
  const filesStartIn: (string | undefined)[] = [];
  return {
    folders,
    files,
    filesStartIn,
    pickFolder: () => Promise.resolve(folders.shift() ?? null),
    pickFiles: (_purpose, startIn) => {
      filesStartIn.push(startIn);
      return Promise.resolve(files.shift() ?? null);
    },
  };
}

/** A shell that records what it was asked (and can refuse to open, as when no app handles a kind of file). */
export function recordingShell(refuseToOpen = false): SystemShell & {
  readonly opened: { action: 'open' | 'show'; path: string }[];
} {
  const opened: { action: 'open' | 'show'; path: string }[] = [];
  return {
    opened,
    openPath(path) {
      opened.push({ action: 'open', path });
      return refuseToOpen ? Promise.reject(new Error('no handler')) : Promise.resolve();
    },
    showItemInFolder(path) {
      opened.push({ action: 'show', path });
      return Promise.resolve();
    },
  };
}

export interface TestApp {
  readonly backend: Backend;
  readonly dataDir: string;
  readonly dialogs: QueuedDialogs;
  readonly events: { event: EventName; payload: EventPayloads[EventName] }[];
  /** Invokes a channel and returns its value; fails the test with the error's code when it is not ok. */
  call<C extends Channel>(channel: C, request: RequestOf<C>): Promise<ResponseOf<C>>;
  /** Invokes a channel (any payload) and returns the raw result. */
  raw(channel: string, payload: unknown): Promise<Result<unknown>>;
  /** Resolves with a job's events once its 'ended' event has arrived. */
  jobEvents(jobId: string): Promise<JobEvent[]>;
}

const disposals: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const dispose of disposals.splice(0)) await dispose();
});

export async function newApp(options: Partial<BackendOptions> = {}): Promise<TestApp> {
  const dataDir = options.dataDir ?? tempDir();
  const dialogs = queuedDialogs();
  const backend = await createBackend({ dataDir, dialogs, sodium: nativeSodium, ...options });
  disposals.push(() => backend.dispose());
  const events: TestApp['events'] = [];
  const waiting = new Map<string, () => void>();
  backend.onEvent((event, payload) => {
    events.push({ event, payload });
    if (event === 'job') {
      const job = payload as JobEvent;
      if (job.type === 'ended') waiting.get(job.jobId)?.();
    }
  });
  const jobOf = (jobId: string): JobEvent[] =>
    events.flatMap(({ event, payload }) =>
      event === 'job' && (payload as JobEvent).jobId === jobId ? [payload as JobEvent] : [],
    );
  return {
    backend,
    dataDir,
    dialogs,
    events,
    async call(channel, request) {
      const result = await backend.handle(channel, request);
      if (!result.ok) throw new Error(`${channel} failed: ${result.code}: ${result.message}`);
      return result.value as never;
    },
    raw: (channel, payload) => backend.handle(channel, payload),
    jobEvents: (jobId) =>
      new Promise((resolve) => {
        if (jobOf(jobId).some((event) => event.type === 'ended')) resolve(jobOf(jobId));
        else
          waiting.set(jobId, () => {
            resolve(jobOf(jobId));
          });
      }),
  };
}

/**
 * A back end whose clock reads a second later each time: every progress report goes out at once (not coalesced),
 * so a test that acts on the first files done acts before the rest are stored, however fast the machine.
 */
export function appReportingEveryProgress(): Promise<TestApp> {
  let clock = 0;
  return newApp({ now: () => (clock += 1000), handleTtlMs: 1e12 });
}

/** Adds `files` (name → contents) at the vault's root through the file picker, and waits for the job to end. */
export async function addFiles(
  app: TestApp,
  vaultId: string,
  files: Record<string, string | Buffer>,
): Promise<void> {
  const source = tempDir();
  await writeTree(source, files);
  app.dialogs.files.push(Object.keys(files).map((name) => join(source, name)));
  const picked = await app.call('dialog.pickFiles', { purpose: 'add-files', vaultId });
  if (!picked) throw new Error('nothing picked');
  await app.jobEvents(startedJobId(await app.call('job.add', { vaultId, source: picked.handle })));
}

/**
 * Starts an add of one dropped file, "hello.txt", whose bytes are held until `arrive` is called: a drop whose bytes
 * are still coming, so the add runs (and holds its turn) as long as the test needs.
 */
export async function startHeldAdd(
  app: TestApp,
  vaultId: string,
): Promise<{ jobId: string; arrive: () => void }> {
  let arrive = (): void => undefined;
  const arrived = new Promise<void>((resolve) => {
    arrive = resolve;
  });
  async function* bytes(): AsyncGenerator<Uint8Array> {
    await arrived;
    yield Buffer.from('hello');
  }
  const dropped = app.backend.registerDroppedBytes([
    { name: 'hello.txt', size: 5, mtime: 1_600_000_000_000, bytes: bytes() },
  ]);
  if (!dropped.ok) throw new Error(dropped.message);
  const jobId = startedJobId(await app.call('job.add', { vaultId, source: dropped.value.handle }));
  return { jobId, arrive };
}

/** Creates a vault named "vault" in a fresh temp folder (KDF preset 'interactive', to keep tests quick). */
export async function newVaultIn(app: TestApp): Promise<{ vaultId: string; parent: string }> {
  const parent = tempDir();
  app.dialogs.folders.push(parent);
  const picked = await app.call('dialog.pickFolder', { purpose: 'create-vault' });
  if (!picked) throw new Error('no folder picked');
  const created = await app.call('vault.create', {
    folder: picked.handle,
    name: 'vault',
    passphrase: PASSPHRASE,
    kdf: 'interactive',
  });
  return { vaultId: created.vaultId, parent };
}

/** A handle for a folder the "user" picks for a purpose. */
export async function pickFolder(
  app: TestApp,
  path: string,
  request: RequestOf<'dialog.pickFolder'>,
): Promise<string> {
  app.dialogs.folders.push(path);
  const picked = await app.call('dialog.pickFolder', request);
  if (!picked) throw new Error('no folder picked');
  return picked.handle;
}

export function codeOf(result: Result<unknown>): string {
  return result.ok ? 'ok' : result.code;
}
