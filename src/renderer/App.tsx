import { useEffect } from 'react';

import { onEvent } from './api.js';
import { useAppearance } from './appearance.js';
import { Browser } from './components/Browser.js';
import { StartScreen } from './components/StartScreen.js';
import { UnlockScreen } from './components/UnlockScreen.js';
import { useJobNotifications } from './job-notifications.js';
import { jobEvent, useCoffer, vaultClosed, vaultLocked } from './store.js';

/** Chooses the screen from the store: no vault, a locked vault, or an unlocked one. */
export function App() {
  const vault = useCoffer((state) => state.vault);
  useAppearance();
  useJobNotifications();

  useEffect(() => {
    const stops = [
      onEvent('locked', ({ vaultId, stoppedJobs }) => {
        vaultLocked(vaultId, stoppedJobs);
      }),
      onEvent('closed', ({ vaultId }) => {
        vaultClosed(vaultId);
      }),
      onEvent('job', jobEvent),
    ];
    return () => {
      for (const stop of stops) stop();
    };
  }, []);

  if (vault === null) return <StartScreen />;
  if (vault.locked) return <UnlockScreen key={vault.vaultId} vault={vault} />;
  return <Browser key={vault.vaultId} vault={vault} />;
}
