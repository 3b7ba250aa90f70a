/** Applies the appearance settings (theme, reduced motion) to the document, for every screen. */
import { useEffect } from 'react';

import type { Settings } from '../shared/contract.js';
import { call } from './api.js';

/** Sets `data-theme` (absent = follow the system) and `data-reduce-motion` on <html>; the CSS does the rest. */
export function applyAppearance(settings: Pick<Settings, 'theme' | 'reduceMotion'>): void {
  const root = document.documentElement;
  if (settings.theme === 'system') delete root.dataset.theme;
  else root.dataset.theme = settings.theme;
  root.dataset.reduceMotion = String(settings.reduceMotion);
}

/** Reads the settings once at start and applies them; until then the system's appearance shows. */
export function useAppearance(): void {
  useEffect(() => {
    call('settings.get', {}).then(applyAppearance, () => {
      // Unreadable settings leave the system's appearance, which is what the defaults would show anyway.
    });
  }, []);
}
