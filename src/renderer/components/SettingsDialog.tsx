import { useEffect, useId, useState } from 'react';

import { AUTO_LOCK_MAX_MINUTES, THEMES, type Settings } from '../../shared/contract.js';
import { call, describeError } from '../api.js';
import { applyAppearance } from '../appearance.js';
import { useCapabilities } from '../host.js';
import { ErrorText } from './ErrorText.js';
import { PanelDialog } from './PanelDialog.js';

const THEME_LABELS = { system: 'Same as the system', light: 'Light', dark: 'Dark' } as const;

/** The on/off settings shown as plain checkboxes, in order. */
const TOGGLES = [['reduceMotion', 'Reduce motion']] as const;

/** What locks besides idle minutes; `system`: the system reports it (to the desktop app; a browser is not told). */
const LOCK_TRIGGERS = [
  ['lockOnClose', 'Lock when the window closes', false],
  ['lockOnSuspend', 'Lock when the computer goes to sleep', true],
  ['lockOnScreenLock', 'Lock when the screen locks', true],
] as const;

/**
 * Auto-lock minutes and triggers (window close, sleep, screen lock), theme and reduced motion, and hiding the window from screen capture (where
 * the host can); each change is saved and applied at once.
 */
export function SettingsDialog({ onClose }: { onClose: () => void }) {
  const [settings, setSettings] = useState<Settings | null>(null);
  const [minutes, setMinutes] = useState('');
  const [error, setError] = useState<string | null>(null);
  const minutesField = useId();
  const minutesHint = useId();
  const protectionHint = useId();
  const triggersHint = useId();
  const capabilities = useCapabilities();

  useEffect(() => {
    call('settings.get', {}).then(
      (loaded) => {
        setSettings(loaded);
        setMinutes(String(loaded.autoLockMinutes));
      },
      (cause: unknown) => {
        setError(describeError(cause));
      },
    );
  }, []);

  const save = (change: Partial<Settings>): void => {
    if (settings === null) return;
    setError(null);
    const before = settings;
    // Shown at once (a checkbox must tick when clicked); put back if the back end refuses it.
    setSettings({ ...settings, ...change });
    call('settings.set', change).then(
      (saved) => {
        setSettings(saved);
        applyAppearance(saved);
      },
      (cause: unknown) => {
        setSettings(before);
        setError(describeError(cause));
      },
    );
  };

  const saveMinutes = (): void => {
    const value = Number(minutes);
    if (minutes.trim() === '' || !Number.isFinite(value) || value < 0 || value > AUTO_LOCK_MAX_MINUTES) {
      setError(
        `Auto-lock takes a number of minutes from 0 (never) to ${AUTO_LOCK_MAX_MINUTES.toLocaleString()}.`,
      );
      return;
    }
    if (value !== settings?.autoLockMinutes) save({ autoLockMinutes: value });
  };

  return (
    <PanelDialog title="Settings" onClose={onClose}>
      <ErrorText message={error} />
      {settings && (
        <form
          className="settings-form"
          onSubmit={(event) => {
            event.preventDefault();
            saveMinutes();
          }}
        >
          {/* The hint outside the label: inside, it was read as part of the field's name and again as its
              description. */}
          <div className="field">
            <label className="label" htmlFor={minutesField}>
              Lock after this many idle minutes
            </label>
            <input
              id={minutesField}
              type="number"
              min={0}
              max={AUTO_LOCK_MAX_MINUTES}
              step="any"
              value={minutes}
              aria-describedby={minutesHint}
              onChange={(event) => {
                setMinutes(event.target.value);
              }}
              onBlur={saveMinutes}
            />
            <span className="hint" id={minutesHint}>
              0 never locks on its own.
            </span>
          </div>
          <label className="field">
            <span className="label">Theme</span>
            <select
              value={settings.theme}
              onChange={(event) => {
                save({ theme: event.target.value as Settings['theme'] });
              }}
            >
              {THEMES.map((theme) => (
                <option key={theme} value={theme}>
                  {THEME_LABELS[theme]}
                </option>
              ))}
            </select>
          </label>
          <fieldset className="field">
            <legend className="label">Also lock</legend>
            {LOCK_TRIGGERS.map(([key, label, system]) => (
              <label key={key} className="checkbox">
                <input
                  type="checkbox"
                  checked={settings[key]}
                  aria-describedby={system ? triggersHint : undefined}
                  onChange={(event) => {
                    save({ [key]: event.target.checked });
                  }}
                />
                {label}
              </label>
            ))}
            <span className="hint" id={triggersHint}>
              Sleep and screen lock: the desktop app hears of these from the system; the preview in a browser
              does not.
            </span>
          </fieldset>
          {TOGGLES.map(([key, label]) => (
            <label key={key} className="checkbox">
              <input
                type="checkbox"
                checked={settings[key]}
                onChange={(event) => {
                  save({ [key]: event.target.checked });
                }}
              />
              {label}
            </label>
          ))}
          <div className="field">
            <label className="checkbox">
              <input
                type="checkbox"
                checked={capabilities.contentProtection && settings.contentProtection}
                disabled={!capabilities.contentProtection}
                aria-describedby={protectionHint}
                onChange={(event) => {
                  save({ contentProtection: event.target.checked });
                }}
              />
              Hide the window from screen capture and screen sharing
            </label>
            <span className="hint" id={protectionHint}>
              {capabilities.contentProtection
                ? 'Screenshots and shared screens show the window blank. Some capture tools on macOS still see it.'
                : 'Not available here: only the desktop app on macOS and Windows can keep its window out of a capture.'}
            </span>
          </div>
        </form>
      )}
    </PanelDialog>
  );
}
