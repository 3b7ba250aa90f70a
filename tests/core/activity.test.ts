import { describe, expect, it } from 'vitest';

import { VaultActivity, type Access, type Caller } from '../../src/core/vault/activity.js';
import { BusyError, CancelledError } from '../../src/core/errors.js';

/** An operation that runs until the test ends it, recording when it started. */
function operation(activity: VaultActivity, access: Access, name: string, log: string[], caller?: Caller) {
  let end = (): void => undefined;
  const ended = new Promise<void>((resolve) => {
    end = resolve;
  });
  const result = activity.run(access, name, caller, async () => {
    log.push(name);
    await ended;
    return name;
  });
  return {
    end: () => {
      end();
    },
    result,
  };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('VaultActivity', () => {
  it('runs reads together and beside one change, and a rewrite alone', async () => {
    const activity = new VaultActivity();
    const log: string[] = [];
    const read1 = operation(activity, 'read', 'read 1', log);
    const change1 = operation(activity, 'change', 'change 1', log);
    const read2 = operation(activity, 'read', 'read 2', log);
    const change2 = operation(activity, 'change', 'change 2', log);
    await turn();
    expect(log).toEqual(['read 1', 'change 1', 'read 2']);
    const rewrite = operation(activity, 'rewrite', 'rewrite', log);
    change1.end();
    await turn();
    expect(log).toEqual(['read 1', 'change 1', 'read 2', 'change 2']);
    change2.end();
    read1.end();
    await turn();
    expect(log).toHaveLength(4);
    read2.end();
    await turn();
    expect(log.at(-1)).toBe('rewrite');
    rewrite.end();
    expect(await Promise.all([read1, read2, change1, change2, rewrite].map((op) => op.result))).toHaveLength(
      5,
    );
    expect(activity.busy).toBe(false);
  });

  it('runs an operation only if its turn is now when asked to, and tells when the reads running now are over', async () => {
    const activity = new VaultActivity();
    const log: string[] = [];
    const free = () => activity.runIfFree('rewrite', 'compacting', undefined, () => Promise.resolve('ran'));
    expect(activity.readsRunning()).toBeUndefined();
    expect(await free()).toBe('ran');

    const read1 = operation(activity, 'read', 'read 1', log);
    const change = operation(activity, 'change', 'change', log);
    await turn();
    expect(free()).toBeUndefined();
    const readsNow = activity.readsRunning();
    let readsOver = false;
    void readsNow?.then(() => {
      readsOver = true;
    });
    // A read started later is not waited for, nor is the change.
    const read2 = operation(activity, 'read', 'read 2', log);
    await turn();
    read1.end();
    await turn();
    expect(readsOver).toBe(true);
    change.end();
    read2.end();
    await Promise.all([read1.result, change.result, read2.result]);

    // Nor while an operation waits for its turn: a read beside a change, behind a waiting rewrite.
    const adding = operation(activity, 'change', 'adding', log);
    const waiting = operation(activity, 'rewrite', 'waiting rewrite', log);
    await turn();
    const read = () => activity.runIfFree('read', 'reading', undefined, () => Promise.resolve('ran'));
    expect(read()).toBeUndefined();
    adding.end();
    await turn();
    waiting.end();
    await Promise.all([adding.result, waiting.result]);
    expect(await read()).toBe('ran');
    expect(await free()).toBe('ran');
  });

  it('tells an operation that must wait for its turn that it waits, and when the turn comes', async () => {
    const activity = new VaultActivity();
    const log: string[] = [];
    const first = operation(activity, 'change', 'first add', log);
    const heard: string[] = [];
    const second = activity.run(
      'change',
      'second add',
      { onWaiting: (waiting) => heard.push(waiting ? 'waiting' : 'its turn') },
      () => {
        heard.push('runs');
        return Promise.resolve();
      },
    );
    const read = activity.run('read', 'restoring', { onWaiting: () => heard.push('the read waits') }, () =>
      Promise.resolve(),
    );
    await read;
    expect(heard).toEqual(['waiting']);
    first.end();
    await second;
    expect(heard).toEqual(['waiting', 'its turn', 'runs']);
  });

  it('lets nothing overtake a waiting rewrite, so reads cannot starve it', async () => {
    const activity = new VaultActivity();
    const log: string[] = [];
    const read1 = operation(activity, 'read', 'read 1', log);
    const rewrite = operation(activity, 'rewrite', 'rewrite', log);
    const read2 = operation(activity, 'read', 'read 2', log);
    await turn();
    expect(log).toEqual(['read 1']);
    read1.end();
    await turn();
    expect(log).toEqual(['read 1', 'rewrite']);
    rewrite.end();
    await turn();
    expect(log).toEqual(['read 1', 'rewrite', 'read 2']);
    read2.end();
  });

  it('refuses a key rotation while a change or rewrite runs, and changes made at once only beside a rewrite', async () => {
    const activity = new VaultActivity();
    const log: string[] = [];
    const both = (): unknown[] =>
      [
        () => {
          activity.requireNoChangeRunning();
        },
        () => {
          activity.requireNoRewriteRunning();
        },
      ].map((check) => {
        try {
          check();
          return 'allowed';
        } catch (error) {
          return error;
        }
      });
    const read = operation(activity, 'read', 'restoring', log);
    await turn();
    expect(both()).toEqual(['allowed', 'allowed']);
    const change = operation(activity, 'change', 'adding files', log);
    await turn();
    expect(both()).toEqual([new BusyError('adding files'), 'allowed']);
    change.end();
    read.end();
    await Promise.all([change.result, read.result]);
    expect(both()).toEqual(['allowed', 'allowed']);
    const rewrite = operation(activity, 'rewrite', 'deleting', log);
    await turn();
    expect(both()).toEqual([new BusyError('deleting'), new BusyError('deleting')]);
    rewrite.end();
    await rewrite.result;
    expect(both()).toEqual(['allowed', 'allowed']);
    // One that cannot be cancelled says so.
    const settle = operation(activity, 'rewrite', 'freeing space', log, {
      busyNext: 'Try again in a moment.',
    });
    await turn();
    const busy = new BusyError('freeing space', 'Try again in a moment.');
    expect(both()).toEqual([busy, busy]);
    expect(busy.message).toBe('The vault is busy freeing space. Try again in a moment.');
    settle.end();
    await settle.result;
  });

  it('stops running and waiting operations through their signals, and lets a cancelled waiter go', async () => {
    const activity = new VaultActivity();
    const seen: AbortSignal[] = [];
    const running = activity.run('rewrite', 'verifying', undefined, async (signal) => {
      seen.push(signal);
      await new Promise((resolve) => {
        signal.addEventListener('abort', resolve);
      });
      throw new CancelledError();
    });
    const caller = new AbortController();
    const waiting = activity.run('read', 'restoring', { signal: caller.signal }, () =>
      Promise.resolve('ran'),
    );
    const stoppedByLock = activity.run('change', 'adding files', undefined, () => Promise.resolve('ran'));
    await turn();
    caller.abort();
    await expect(waiting).rejects.toBeInstanceOf(CancelledError);
    expect(activity.busy).toBe(true);
    const stopped = activity.stopAll();
    await expect(running).rejects.toBeInstanceOf(CancelledError);
    await expect(stoppedByLock).rejects.toBeInstanceOf(CancelledError);
    await stopped;
    expect(seen[0]?.aborted).toBe(true);
    expect(activity.busy).toBe(false);
    await expect(activity.run('read', 'restoring', undefined, () => Promise.resolve('ran'))).resolves.toBe(
      'ran',
    );
  });
});
