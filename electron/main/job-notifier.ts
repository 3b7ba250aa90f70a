import type { Backend } from '../../src/app/backend.js';
import type { JobEvent } from '../../src/shared/contract.js';
import { JobNoticeTracker, type JobNotice } from '../../src/shared/job-notice.js';

export interface JobNotifierHost {
  /** The window is hidden, minimised or not focused (or there is none). */
  readonly inBackground: () => boolean;
  /** Shows a system notification (Electron's Notification). */
  readonly show: (notice: JobNotice) => void;
  /** For tests: the clock. */
  readonly now?: () => number;
}

/**
 * Shows a system notification when a long job ends while the window is in the background (the rule and the words
 * are JobNoticeTracker's, shared with the preview). Main does it rather than the window, whose permission
 * requests, notifications included, are refused. Returns a function that stops it.
 */
export function startJobNotifier(backend: Pick<Backend, 'onEvent'>, host: JobNotifierHost): () => void {
  const tracker = new JobNoticeTracker();
  const now = host.now ?? (() => performance.now());
  return backend.onEvent((event, payload) => {
    if (event !== 'job') return;
    const notice = tracker.observe(payload as JobEvent, now(), host.inBackground);
    if (notice !== null) host.show(notice);
  });
}
