import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useRef, useState } from 'react';

import type { ActivityLogView } from '../../shared/contract.js';
import { call } from '../api.js';
import { ErrorText } from '../components/ErrorText.js';
import { formatDate } from '../format.js';
import { OVERSCAN, ROW_HEIGHT } from '../virtual-rows.js';
import { describeActivity, droppedSentence, entriesCount } from './activity-words.js';
import { useSecurityAction } from './use-security-action.js';

/**
 * The vault's activity log, newest first: when and what (counts only: the log holds no names), how many older
 * entries were dropped, and what is wrong with the log. A long log is virtualised: only the rows in view exist.
 */
export function ActivityLogTab({ vaultId }: { vaultId: string }) {
  const [log, setLog] = useState<ActivityLogView | null>(null);
  const { busy, error, run } = useSecurityAction('log');
  const scroller = useRef<HTMLDivElement>(null);

  const load = useCallback(() => {
    void run(async () => {
      setLog(await call('security.activityLog', { vaultId }));
    });
  }, [run, vaultId]);

  useEffect(load, [load]);

  const entries = log ? [...log.entries].reverse() : [];
  const virtualizer = useVirtualizer({
    count: entries.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: OVERSCAN,
  });
  const dropped = log ? droppedSentence(log.dropped) : null;

  return (
    <div className="security-section">
      <div className="log-head">
        <p className="muted" role="status">
          {log === null
            ? 'Reading the activity log…'
            : `${entriesCount(log.entries.length)}, newest first. The log records what happened and how much, never names.`}
        </p>
        <button type="button" className="small" disabled={busy} onClick={load}>
          Refresh
        </button>
      </div>
      <ErrorText message={error} />
      {dropped && <p className="hint muted">{dropped}</p>}
      {log && log.problems.length > 0 && (
        <div className="warning" role="alert">
          <div>
            <p>
              <strong>The activity log has problems</strong> (the vault’s files are not affected):
            </p>
            <ul className="log-problems">
              {log.problems.map((problem, index) => (
                <li key={`${problem.kind}-${index}`}>{problem.message}</li>
              ))}
            </ul>
            <p>
              Run “Check vault” in the vault details; if the log was tampered with, its entries cannot be
              trusted.
            </p>
          </div>
        </div>
      )}
      <div
        ref={scroller}
        className="log-scroller"
        tabIndex={0}
        aria-label="Activity log entries"
        role="region"
      >
        <ol className="log-list" style={{ height: virtualizer.getTotalSize() }}>
          {virtualizer.getVirtualItems().map((item) => {
            const entry = entries[item.index];
            if (!entry) return null;
            return (
              <li
                key={entry.seq}
                className={`log-row log-${entry.outcome}`}
                aria-setsize={entries.length}
                aria-posinset={item.index + 1}
                style={{ transform: `translateY(${item.start}px)`, height: ROW_HEIGHT }}
              >
                <time dateTime={new Date(entry.time).toISOString()} className="log-time">
                  {formatDate(entry.time)}
                </time>
                <span className="log-what">{describeActivity(entry)}</span>
              </li>
            );
          })}
        </ol>
      </div>
    </div>
  );
}
