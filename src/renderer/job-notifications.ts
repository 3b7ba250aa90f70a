/**
 * In the preview the window itself shows the notification when a long job ends while the page is in the
 * background, with the web Notification API. In Electron main does (JobNoticeTracker in electron/main), and the
 * window shows none: the host says which through `app.capabilities`.
 */
import { useEffect } from 'react';

import { JobNoticeTracker } from '../shared/job-notice.js';
import { onEvent } from './api.js';
import { useCapabilities } from './host.js';

/** The page is hidden (another tab, minimised) or another window has the focus. */
function inBackground(): boolean {
  return document.visibilityState === 'hidden' || !document.hasFocus();
}

export function useJobNotifications(): void {
  const { notifications } = useCapabilities();
  useEffect(() => {
    if (notifications !== 'window' || !('Notification' in window)) return undefined;
    const tracker = new JobNoticeTracker();
    return onEvent('job', (event) => {
      // Asked when a job starts: the user just did something, and most jobs end long after.
      if (event.type === 'started' && Notification.permission === 'default')
        void Notification.requestPermission();
      const notice = tracker.observe(event, Date.now(), inBackground);
      if (notice !== null && Notification.permission === 'granted')
        new Notification(notice.title, { body: notice.body });
    });
  }, [notifications]);
}
