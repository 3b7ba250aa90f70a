import { useEffect, useId, useState } from 'react';

import { KDF_PRESET_NAMES, type ResponseOf } from '../../shared/contract.js';
import { call } from '../api.js';
import { formatDuration } from '../format.js';

export type KdfPresetName = (typeof KDF_PRESET_NAMES)[number];
type KdfEstimate = ResponseOf<'app.kdfEstimate'>;

const KDF_LABELS: Readonly<Record<KdfPresetName, string>> = {
  interactive: 'Fast (64 MiB) — for older computers',
  moderate: 'Standard (256 MiB) — recommended',
  sensitive: 'Strong (1 GiB) — slower to unlock',
};

/** A preset's name in words ("Standard (256 MiB)…"); the raw name for parameters that match no preset. */
export function kdfPresetLabel(preset: string | undefined): string {
  return preset !== undefined && Object.hasOwn(KDF_LABELS, preset)
    ? KDF_LABELS[preset as KdfPresetName]
    : 'Custom settings';
}

/** The back end's figures, or why there are none yet: the choice works either way. */
type Measured = KdfEstimate | 'measuring' | 'failed';

function presetLabel(preset: KdfPresetName, measured: Measured): string {
  if (typeof measured === 'string') return KDF_LABELS[preset];
  return `${KDF_LABELS[preset]} · about ${formatDuration(measured[preset])}`;
}

/**
 * The key-derivation preset of a passphrase (create a vault, change or add a passphrase): a choice with how long
 * each takes on this computer, measured by the back end; usable before the figure arrives.
 */
export function KdfPresetField({
  value,
  onValue,
  disabled = false,
}: {
  value: KdfPresetName;
  onValue: (preset: KdfPresetName) => void;
  disabled?: boolean;
}) {
  const [measured, setMeasured] = useState<Measured>('measuring');
  const ids = useId();
  const hintId = `${ids}-hint`;

  useEffect(() => {
    let live = true;
    call('app.kdfEstimate', {}).then(
      (estimate) => {
        if (live) setMeasured(estimate);
      },
      () => {
        if (live) setMeasured('failed');
      },
    );
    return () => {
      live = false;
    };
  }, []);

  return (
    <div className="field">
      <label className="label" htmlFor={`${ids}-kdf`}>
        Key strength
      </label>
      <select
        id={`${ids}-kdf`}
        value={value}
        disabled={disabled}
        aria-describedby={hintId}
        onChange={(event) => {
          onValue(event.target.value as KdfPresetName);
        }}
      >
        {KDF_PRESET_NAMES.map((preset) => (
          <option key={preset} value={preset}>
            {presetLabel(preset, measured)}
          </option>
        ))}
      </select>
      <p className="hint muted steady-hint" id={hintId}>
        {measured === 'failed'
          ? 'Stronger settings make unlocking, and guessing the passphrase, slower.'
          : measured === 'measuring'
            ? 'Measuring how long unlocking takes on this computer…'
            : `Unlocking will take about ${formatDuration(measured[value])} on this computer. Stronger settings make guessing the passphrase slower too.`}
      </p>
    </div>
  );
}
