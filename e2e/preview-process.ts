/** Runs `npm run preview`'s server as a child process, the way a person starts it, for the tests and screenshots. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import type { ShellRequest } from '../src/preview/shell.js';
import { decodeWire } from '../src/preview/wire.js';

const ROOT = join(import.meta.dirname, '..');

export interface PreviewProcess {
  /** The URL it printed, with the token in the fragment. */
  readonly url: string;
  readonly token: string;
  readonly child: ChildProcess;
  /** Queues the paths the next dialogs answer with (test mode only); `null` = cancelled. */
  readonly answerFolderDialogs: (answers: readonly (string | null)[]) => Promise<void>;
  /** Queues the files the next file dialogs answer with (test mode only); `null` = cancelled. */
  readonly answerFileDialogs: (answers: readonly (readonly string[] | null)[]) => Promise<void>;
  /** What the back end asked of the system's shell so far (test mode records instead of opening). */
  readonly shellRequests: () => Promise<ShellRequest[]>;
  /** Sends one contract request as the page would, for a test to check the back end's state. */
  readonly invoke: (channel: string, request: unknown) => Promise<unknown>;
  readonly stop: () => void;
}

/** Starts the server in test mode on `dataDir` over the built renderer, and waits for the URL it prints. */
export async function startPreview(dataDir: string): Promise<PreviewProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'src/preview/cli.ts'), '--test', '--data-dir', dataDir],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let url: string | undefined;
  for await (const line of createInterface({ input: child.stdout })) {
    url = /http:\/\/127\.0\.0\.1:\d+\/\S*/.exec(line)?.[0];
    if (url !== undefined) break;
  }
  if (url === undefined) throw new Error('The preview server stopped before printing its URL.');
  const printed = url;
  const token = new URL(printed).hash.replace(/^#token=/, '');
  const post = async (path: string, body: unknown): Promise<unknown> => {
    const response = await fetch(new URL(path, printed), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    // Decoded as the page decodes it (a long listing comes packed).
    const result = decodeWire(await response.text()) as { ok: boolean; value?: unknown; message?: string };
    if (!result.ok) throw new Error(`${path} failed: ${result.message ?? response.status}`);
    return result.value;
  };
  const queueAnswers = async (answers: object): Promise<void> => {
    await post('/api/test/dialog-answers', answers);
  };
  return {
    url: printed,
    token,
    child,
    answerFolderDialogs: (answers) => queueAnswers({ folders: answers }),
    answerFileDialogs: (answers) => queueAnswers({ files: answers }),
    shellRequests: async () => (await post('/api/test/shell-requests', {})) as ShellRequest[],
    invoke: (channel, request) => post(`/api/invoke/${channel}`, request),
    stop() {
      child.kill();
    },
  };
}
