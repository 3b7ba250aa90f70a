/** Runs `npm run preview`'s server as a child process, the way a person starts it, for the tests and screenshots. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = join(import.meta.dirname, '..');

export interface PreviewProcess {
  /** The URL it printed, with the token in the fragment. */
  readonly url: string;
  readonly token: string;
  readonly child: ChildProcess;
  /** Queues the paths the next dialogs answer with (test mode only); `null` = cancelled. */
  readonly answerFolderDialogs: (answers: readonly (string | null)[]) => Promise<void>;
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
  return {
    url: printed,
    token,
    child,
    async answerFolderDialogs(answers) {
      const response = await fetch(new URL('/api/test/dialog-answers', printed), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ folders: answers }),
      });
      if (!response.ok) throw new Error(`queueing dialog answers failed: HTTP ${response.status}`);
    },
    stop() {
      child.kill();
    },
  };
}
