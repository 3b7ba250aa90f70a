import { randomBytes } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import type { JobEvent } from '../../src/shared/contract.js';
import { addFiles, appReportingEveryProgress, codeOf, newApp, newVaultIn } from './helpers.js';

describe('rotate and re-encrypt from the window (vault.rotateKey, job.reencrypt)', () => {
  it('rotates, then re-encrypts as a job with progress and a report, leaving only the new key', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    const files = { 'a.txt': 'alpha', 'big.bin': randomBytes(1_500_000) };
    await addFiles(app, vaultId, files);
    expect(await app.call('vault.rotateKey', { vaultId })).toEqual({ keyId: 2, previousKeyId: 1 });
    expect((await app.call('vault.info', { vaultId })).info.keyIds).toEqual([1, 2]);

    const { jobId } = await app.call('job.reencrypt', { vaultId });
    const events = await app.jobEvents(jobId);
    expect(events[0]).toMatchObject({ type: 'started', kind: 'reencrypt' });
    const progress = events.filter(
      (event): event is Extract<JobEvent, { type: 'progress' }> => event.type === 'progress',
    );
    expect(progress.at(-1)?.progress).toMatchObject({ filesDone: 2, filesTotal: 2 });
    expect(events.at(-1)).toMatchObject({
      type: 'ended',
      status: 'done',
      result: {
        kind: 'reencrypt',
        report: { keyId: 2, rotated: false, removedKeyIds: [1], filesReencrypted: 2, problems: [] },
      },
    });
    expect((await app.call('vault.info', { vaultId })).info.keyIds).toEqual([2]);
    const read = await app.call('preview.read', { vaultId, path: '/a.txt', length: 5 });
    expect(Buffer.from(read.bytes).toString()).toBe('alpha');
  });

  it('ends cancelled when cancelled, and a second job continues to the same key', async () => {
    const app = await appReportingEveryProgress();
    const { vaultId } = await newVaultIn(app);
    const many: Record<string, Buffer> = {};
    for (let i = 0; i < 300; i++) many[`f${i}.bin`] = randomBytes(20_000);
    await addFiles(app, vaultId, many);
    let jobId = '';
    const cancelled = new Promise<void>((resolve) => {
      app.backend.onEvent((event, payload) => {
        const job = payload as JobEvent;
        if (event === 'job' && job.jobId === jobId && job.type === 'progress' && job.progress.filesDone > 0) {
          void app.call('job.cancel', { jobId }).catch(() => undefined);
          resolve();
        }
      });
    });
    ({ jobId } = await app.call('job.reencrypt', { vaultId }));
    await cancelled;
    expect((await app.jobEvents(jobId)).at(-1)).toMatchObject({ type: 'ended', status: 'cancelled' });
    expect((await app.call('vault.info', { vaultId })).info.keyIds).toEqual([1, 2]);

    const again = await app.call('job.reencrypt', { vaultId });
    expect((await app.jobEvents(again.jobId)).at(-1)).toMatchObject({
      status: 'done',
      result: { kind: 'reencrypt', report: { keyId: 2, rotated: false, removedKeyIds: [1] } },
    });
  });

  it('refuses while another job changes the vault (BUSY), and on a locked vault', async () => {
    const app = await newApp();
    const { vaultId } = await newVaultIn(app);
    await addFiles(app, vaultId, { 'a.txt': 'alpha' });
    // The first job takes the vault in its first step, before anything it writes completes; the calls after it
    // run before then (no I/O between them), so they meet it running.
    const first = await app.call('job.reencrypt', { vaultId });
    const second = await app.call('job.reencrypt', { vaultId });
    expect(codeOf(await app.raw('vault.rotateKey', { vaultId }))).toBe('BUSY');
    expect((await app.jobEvents(second.jobId)).at(-1)).toMatchObject({ status: 'failed', code: 'BUSY' });
    expect((await app.jobEvents(first.jobId)).at(-1)).toMatchObject({ status: 'done' });

    await app.call('vault.lock', { vaultId });
    expect(codeOf(await app.raw('job.reencrypt', { vaultId }))).toBe('VAULT_LOCKED');
    expect(codeOf(await app.raw('vault.rotateKey', { vaultId }))).toBe('VAULT_LOCKED');
  });
});
