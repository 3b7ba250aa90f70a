import { Fragment, useEffect, useState } from 'react';

import type { ResponseOf, VerifyReport } from '../../shared/contract.js';
import { call, describeError } from '../api.js';
import { formatSize } from '../format.js';
import { plural } from '../../shared/plural.js';
import { useCoffer } from '../store.js';
import { ErrorText } from './ErrorText.js';
import { PanelDialog } from './PanelDialog.js';

type Details = ResponseOf<'vault.info'>;

/**
 * What a check looked at: "Check all data" read every file (its bytes count the files that read back intact), "Check
 * vault" only each file's size and last chunk.
 */
function checkedWords(report: VerifyReport, readData: boolean): string {
  const files = plural(report.filesChecked, 'file');
  if (!readData)
    return `Checked the structure of ${files} (each one’s size and last chunk); “Check all data” reads every byte.`;
  return `Checked ${files} (${formatSize(report.bytesChecked)}${report.ok ? '' : ' read back intact'}).`;
}

function CheckReport({ report, readData }: { report: VerifyReport; readData: boolean }) {
  return (
    <section aria-label="Check report" className="check-report">
      <p role="status">
        {report.ok ? 'No damage found.' : `Damage found: ${plural(report.problems.length, 'problem')}.`}{' '}
        {checkedWords(report, readData)}
      </p>
      {report.problems.length > 0 && (
        <ul className="job-problems" aria-label="Damaged">
          {report.problems.map((problem, index) => (
            <li key={`${problem.path}-${index}`}>
              <span>
                <span className="problem-path">{problem.path}</span>: {problem.message}
              </span>
            </li>
          ))}
        </ul>
      )}
      {report.unreferenced.length > 0 && (
        <>
          <p>
            {report.unreferenced.length === 1
              ? '1 stored file in the vault folder belongs to no file in the vault (left by an interrupted job, or synced ahead of the index). It is kept.'
              : `${plural(report.unreferenced.length, 'stored file')} in the vault folder belong to no file in the vault (left by interrupted jobs, or synced ahead of the index). They are kept.`}
          </p>
          <ul className="job-problems" aria-label="Unreferenced">
            {report.unreferenced.map((stored) => (
              <li key={stored.path}>
                <span className="problem-path">{stored.path}</span> ({formatSize(stored.size)})
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

/**
 * The vault's facts (counts, sizes, format version, key derivation, key ids) and its checks: "Check vault" reads
 * the structure, "Check all data" authenticates every stored byte; the report of the latest check shows here, its
 * progress in the jobs panel.
 */
export function VaultDetails({ vaultId, onClose }: { vaultId: string; onClose: () => void }) {
  const [details, setDetails] = useState<Details | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [checkId, setCheckId] = useState<string | null>(null);
  const [checkReadsData, setCheckReadsData] = useState(false);
  const check = useCoffer((state) => state.jobs.find((job) => job.jobId === checkId));

  useEffect(() => {
    call('vault.info', { vaultId }).then(setDetails, (cause: unknown) => {
      setError(describeError(cause));
    });
  }, [vaultId]);

  const checking = check?.status === 'running';

  const startCheck = (readData: boolean): void => {
    // aria-disabled rather than disabled while a check runs: a disabled button would drop the keyboard focus.
    if (checking) return;
    setError(null);
    call('job.verify', { vaultId, readData }).then(
      ({ jobId }) => {
        setCheckId(jobId);
        setCheckReadsData(readData);
      },
      (cause: unknown) => {
        setError(describeError(cause));
      },
    );
  };

  return (
    <PanelDialog title="Vault details" onClose={onClose}>
      <ErrorText message={error} />
      {details && (
        <dl className="facts">
          <dt>Name</dt>
          <dd>{details.name}</dd>
          <dt>Folder</dt>
          <dd>{details.location}</dd>
          <dt>Files</dt>
          <dd>{(details.info.files ?? 0).toLocaleString()}</dd>
          <dt>Folders</dt>
          <dd>{(details.info.folders ?? 0).toLocaleString()}</dd>
          <dt>Size of the files</dt>
          <dd>{formatSize(details.info.totalBytes ?? 0)}</dd>
          <dt>Size on disk</dt>
          <dd>{formatSize(details.info.storedBytes)}</dd>
          <dt>Format version</dt>
          <dd>{details.info.format}</dd>
          <dt>Key derivation</dt>
          <dd>
            {details.info.kdf
              .map(
                (kdf) =>
                  `Argon2id, ${kdf.opslimit} passes, ${(kdf.memlimitKiB / 1024).toLocaleString()} MiB memory`,
              )
              .join('; ')}
          </dd>
          <dt>Size padding</dt>
          <dd>
            {details.info.contentPadding === 'padme'
              ? 'On: each file’s size shows only roughly (to within about 12 %)'
              : 'Off'}
          </dd>
          {/* In the Security page's words. */}
          <dt>Data keys in the vault</dt>
          <dd>{(details.info.keyIds ?? []).map((id) => `key ${id}`).join(', ') || '—'}</dd>
          {(details.info.readOnly || details.info.headerOlderThanData) && (
            <>
              <dt>Access</dt>
              <dd>
                {details.info.readOnly
                  ? 'Read only'
                  : 'Read only until the newer header is restored (the header in use is older than the data)'}
              </dd>
            </>
          )}
          {details.info.warnings.map((warning) => (
            <Fragment key={warning}>
              <dt>Warning</dt>
              <dd>{warning}</dd>
            </Fragment>
          ))}
        </dl>
      )}
      {/* Once the facts are in (or failed): before, the buttons moved down as the facts appeared above them, and a
          click aimed at one could land on the facts instead. */}
      {(details !== null || error !== null) && (
        <div className="dialog-actions">
          <button
            type="button"
            aria-disabled={checking}
            onClick={() => {
              startCheck(false);
            }}
          >
            Check vault
          </button>
          <button
            type="button"
            aria-disabled={checking}
            onClick={() => {
              startCheck(true);
            }}
          >
            Check all data
          </button>
        </div>
      )}
      {checking && (
        <p className="muted">
          {check.waiting === true
            ? 'The check waits until other work on this vault ends: a job in the jobs panel, a preview, or a file being opened in another app.'
            : 'Checking… (progress in the jobs panel)'}
        </p>
      )}
      {check?.status === 'failed' && <ErrorText message={check.summary ?? null} />}
      {check?.status === 'cancelled' && <p className="muted">The check was stopped.</p>}
      {check?.verifyReport && <CheckReport report={check.verifyReport} readData={checkReadsData} />}
    </PanelDialog>
  );
}
