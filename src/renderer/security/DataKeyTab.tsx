import { useEffect, useState } from 'react';

import type { VaultInfo } from '../../shared/contract.js';
import { call } from '../api.js';
import { ErrorText } from '../components/ErrorText.js';
import { useCoffer } from '../store.js';
import type { Changed } from './PassphrasesTab.js';
import { useSecurityAction } from './use-security-action.js';

/**
 * The data keys: which are in the header, "Rotate the data key" (a new key for new data, at once) and "Rotate and
 * re-encrypt" (everything moved to a new key and the old ones removed, as a job in the jobs panel).
 */
export function DataKeyTab({
  vaultId,
  info,
  onChanged,
}: {
  vaultId: string;
  info: VaultInfo;
  onChanged: Changed;
}) {
  const rotation = useSecurityAction('rotate');
  const reencryption = useSecurityAction('reencrypt');
  const [jobId, setJobId] = useState<string | null>(null);
  const job = useCoffer((state) => state.jobs.find((found) => found.jobId === jobId));
  const running = job?.status === 'running';
  const keyIds = info.keyIds ?? [];

  // The finished job changed the header's keys: show them again.
  const ended = job !== undefined && job.status !== 'running';
  useEffect(() => {
    if (ended) onChanged('', []);
  }, [ended, onChanged]);

  const rotate = (): void => {
    void rotation.run(async () => {
      const { keyId, previousKeyId } = await call('vault.rotateKey', { vaultId });
      const logProblems = await call('security.logProblems', { vaultId });
      onChanged(
        `Data key rotated: new data is written with key ${keyId} (was key ${previousKeyId}).`,
        logProblems,
      );
    });
  };

  const reencrypt = (): void => {
    // aria-disabled rather than disabled while it runs, so the keyboard focus stays on the button.
    if (running) return;
    void reencryption.run(async () => {
      setJobId((await call('job.reencrypt', { vaultId })).jobId);
    });
  };

  return (
    <div className="security-section">
      <dl className="facts">
        <dt>Data keys in the vault</dt>
        <dd aria-label="Data key ids">
          {keyIds.length > 0 ? keyIds.map((id) => `key ${id}`).join(', ') : '—'}
        </dd>
        <dt>New data is written with</dt>
        <dd>{keyIds.length > 0 ? `key ${keyIds.at(-1) ?? ''}` : '—'}</dd>
      </dl>

      <section className="security-block" aria-labelledby="rotate-title">
        <h3 id="rotate-title">Rotate the data key</h3>
        <p className="muted">
          Adds a new data key that everything written from now on uses. What is already stored stays under the
          old key, which stays in the vault so it can still be read. Takes a moment, whatever the vault’s
          size.
        </p>
        <ErrorText message={rotation.error} />
        <div className="actions">
          <button type="button" disabled={rotation.busy} onClick={rotate}>
            {rotation.busy ? 'Rotating…' : 'Rotate data key'}
          </button>
        </div>
      </section>

      <section className="security-block" aria-labelledby="reencrypt-title">
        <h3 id="reencrypt-title">Rotate and re-encrypt</h3>
        <p className="muted">
          Re-encrypts every stored file under a new data key, then removes the older keys from the vault, so a
          copy of an old key no longer reads the vault as it is now. It reads and writes the whole vault: it
          runs in the background with its progress in the jobs panel, every file stays readable meanwhile, and
          a stopped run continues where it left off when started again.
        </p>
        <ErrorText message={reencryption.error} />
        {job?.status === 'failed' && <ErrorText message={job.summary ?? null} />}
        <div className="actions">
          <button type="button" aria-disabled={running} onClick={reencrypt}>
            Rotate and re-encrypt
          </button>
        </div>
        {running && <p className="muted hint">Re-encrypting… (progress in the jobs panel)</p>}
        {job?.status === 'done' && (
          <p className="hint" role="status">
            {job.summary}
          </p>
        )}
        {job?.status === 'cancelled' && (
          <p className="muted hint">Stopped. Start it again to continue where it stopped.</p>
        )}
      </section>
    </div>
  );
}
