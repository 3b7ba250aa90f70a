import { describe, expect, it } from 'vitest';

import {
  applyContentProtection,
  canProtectContent,
  type ProtectableWindow,
} from '../../electron/main/content-protection.js';

function window(destroyed = false): ProtectableWindow & { readonly calls: boolean[] } {
  const calls: boolean[] = [];
  return {
    calls,
    isDestroyed: () => destroyed,
    setContentProtection(enable) {
      calls.push(enable);
    },
  };
}

describe('content protection in Electron', () => {
  it('is offered on macOS and Windows only (Electron ignores it on Linux)', () => {
    expect(canProtectContent('darwin')).toBe(true);
    expect(canProtectContent('win32')).toBe(true);
    expect(canProtectContent('linux')).toBe(false);
  });

  it('applies the setting to every live window, both ways', () => {
    const open = window();
    const gone = window(true);
    applyContentProtection([open, gone], { contentProtection: true });
    applyContentProtection([open, gone], { contentProtection: false });
    expect(open.calls).toEqual([true, false]);
    expect(gone.calls).toEqual([]);
  });
});
