import { describe, expect, it } from 'vitest';

import type { EventListener } from '../../src/app/backend.js';
import type { JobEvent } from '../../src/shared/contract.js';
import type { JobNotice } from '../../src/shared/job-notice.js';
import { startJobNotifier } from '../../electron/main/job-notifier.js';

describe("main's job notifications", () => {
  it('shows a notice for a long job that ends while the window is in the background, until stopped', () => {
    const listeners = new Set<EventListener>();
    const emit = (event: JobEvent) => {
      for (const listener of listeners) listener('job', event);
    };
    let now = 0;
    let background = true;
    const shown: JobNotice[] = [];
    const stop = startJobNotifier(
      {
        onEvent(listener) {
          listeners.add(listener);
          return () => listeners.delete(listener);
        },
      },
      { inBackground: () => background, show: (notice) => shown.push(notice), now: () => now },
    );
    const job = (jobId: string) => ({ jobId, vaultId: 'v', kind: 'verify' }) as const;
    const done = (jobId: string): JobEvent => ({
      ...job(jobId),
      type: 'ended',
      status: 'done',
      result: {
        kind: 'verify',
        report: { ok: true, filesChecked: 3, bytesChecked: 9, problems: [], unreferenced: [] } as never,
      },
    });

    emit({ ...job('a'), type: 'started' });
    now = 10_000;
    emit(done('a'));
    expect(shown).toEqual([{ title: 'Coffer: check finished', body: 'No damage found in 3 files.' }]);

    background = false;
    emit({ ...job('b'), type: 'started' });
    now = 20_000;
    emit(done('b'));
    expect(shown).toHaveLength(1);

    stop();
    expect(listeners.size).toBe(0);
  });
});
