import './security.css';

import { useCallback, useEffect, useRef, useState } from 'react';
import { Tab, TabList, TabPanel, Tabs } from 'react-aria-components';

import type { Problem, VaultInfo, VaultSummary } from '../../shared/contract.js';
import { call, describeError } from '../api.js';
import { ErrorText } from '../components/ErrorText.js';
import { PanelDialog } from '../components/PanelDialog.js';
import { ActivityLogTab } from './ActivityLogTab.js';
import { logProblemNotice } from './activity-words.js';
import { DataKeyTab } from './DataKeyTab.js';
import { reportLogProblems } from './log-problem-notices.js';
import { PassphrasesTab } from './PassphrasesTab.js';
import { RecoveryKeyTab } from './RecoveryKeyTab.js';

/**
 * The vault's Security page: its passphrases, the recovery key, the data keys and the activity log, as tabs. What
 * the log could not record about a change goes to the vault's notices (the change itself is done).
 */
export function SecurityDialog({ vault, onClose }: { vault: VaultSummary; onClose: () => void }) {
  const { vaultId } = vault;
  const [info, setInfo] = useState<VaultInfo | null>(null);
  const [status, setStatus] = useState({ said: '', count: 0 });
  const [error, setError] = useState<string | null>(null);
  const [problems, setProblems] = useState<readonly Problem[]>([]);
  const statusLine = useRef<HTMLParagraphElement>(null);

  // The form or dialog that made the change is gone, and the focus with it: it goes to what the change did, inside
  // this dialog, so Esc and Tab go on working from there.
  useEffect(() => {
    if (status.said !== '') statusLine.current?.focus();
  }, [status]);

  const reload = useCallback(() => {
    call('vault.info', { vaultId }).then(
      (details) => {
        setInfo(details.info);
      },
      (cause: unknown) => {
        setError(describeError(cause));
      },
    );
  }, [vaultId]);

  useEffect(reload, [reload]);

  const changed = useCallback(
    (said: string, logProblems: readonly Problem[]) => {
      if (said !== '') setStatus(({ count }) => ({ said, count: count + 1 }));
      setProblems(logProblems);
      reportLogProblems(logProblems);
      reload();
    },
    [reload],
  );

  return (
    <PanelDialog title="Security" label={`Security of ${vault.name}`} wide onClose={onClose}>
      <ErrorText message={error} />
      {problems.length > 0 && (
        <div className="warning" role="alert">
          <div>
            {problems.map((problem, index) => (
              <p key={index}>{logProblemNotice(problem)}</p>
            ))}
          </div>
        </div>
      )}
      <p className="security-status" role="status" tabIndex={-1} ref={statusLine}>
        {status.said}
      </p>
      {info && (
        <Tabs className="security-tabs">
          <TabList aria-label="Security" className="tab-list">
            <Tab id="passphrases" className="tab">
              Passphrases
            </Tab>
            <Tab id="recovery" className="tab">
              Recovery key
            </Tab>
            <Tab id="data-key" className="tab">
              Data key
            </Tab>
            <Tab id="activity" className="tab">
              Activity log
            </Tab>
          </TabList>
          <TabPanel id="passphrases" className="tab-panel">
            <PassphrasesTab vaultId={vaultId} vaultName={vault.name} info={info} onChanged={changed} />
          </TabPanel>
          <TabPanel id="recovery" className="tab-panel">
            <RecoveryKeyTab vaultId={vaultId} vaultName={vault.name} info={info} onChanged={changed} />
          </TabPanel>
          <TabPanel id="data-key" className="tab-panel">
            <DataKeyTab vaultId={vaultId} info={info} onChanged={changed} />
          </TabPanel>
          <TabPanel id="activity" className="tab-panel">
            <ActivityLogTab vaultId={vaultId} />
          </TabPanel>
        </Tabs>
      )}
    </PanelDialog>
  );
}
