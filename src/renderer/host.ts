/** What the host (Electron or the preview) can do beyond the core contract, asked once per window. */
import { useEffect, useState } from 'react';

import type { HostCapabilities } from '../shared/contract.js';
import { call } from './api.js';

const NONE: HostCapabilities = {
  openWithApp: false,
  showInFolder: false,
  contentProtection: false,
  // 'host' makes the window show nothing itself until it knows.
  notifications: 'host',
  folderDrops: false,
};

let asked: Promise<HostCapabilities> | undefined;

/** The host's capabilities; none until they are known (or when asking failed: nothing is offered then). */
export function useCapabilities(): HostCapabilities {
  const [capabilities, setCapabilities] = useState<HostCapabilities>(NONE);
  useEffect(() => {
    let current = true;
    asked ??= call('app.capabilities', {}).catch(() => NONE);
    void asked.then((known) => {
      if (current) setCapabilities(known);
    });
    return () => {
      current = false;
    };
  }, []);
  return capabilities;
}
