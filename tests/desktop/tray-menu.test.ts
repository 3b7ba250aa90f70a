import { describe, expect, it } from 'vitest';

import { closeKeepsRunning, countVaults, trayMenuTemplate } from '../../electron/main/tray-menu.js';

const calls: string[] = [];
const actions = {
  lockAll: () => calls.push('lock'),
  showWindow: () => calls.push('show'),
  quit: () => calls.push('quit'),
};

/** The items a user sees: label and whether it can be chosen (separators as '—'). */
function seen(template: ReturnType<typeof trayMenuTemplate>) {
  return template.map((item) =>
    item.type === 'separator' ? '—' : `${item.label ?? ''}${item.enabled === false ? ' (off)' : ''}`,
  );
}

describe('the tray and dock menus', () => {
  it('offer Lock only while a vault is unlocked, and Unlock… only while one is locked', () => {
    expect(seen(trayMenuTemplate({ unlocked: 0, locked: 0 }, actions, { withQuit: true }))).toEqual([
      'No vault open (off)',
      '—',
      'Lock All Vaults (off)',
      'Show Coffer',
      '—',
      'Quit Coffer',
    ]);
    expect(seen(trayMenuTemplate({ unlocked: 2, locked: 0 }, actions, { withQuit: true }))).toEqual([
      '2 vaults unlocked (off)',
      '—',
      'Lock All Vaults',
      'Show Coffer',
      '—',
      'Quit Coffer',
    ]);
    expect(seen(trayMenuTemplate({ unlocked: 0, locked: 1 }, actions, { withQuit: false }))).toEqual([
      'All vaults locked (off)',
      '—',
      'Lock All Vaults (off)',
      'Unlock…',
      'Show Coffer',
    ]);
  });

  it('runs the action of each item: Unlock… shows the window (at its unlock screen)', () => {
    calls.length = 0;
    const template = trayMenuTemplate({ unlocked: 1, locked: 1 }, actions, { withQuit: true });
    for (const label of ['Lock All Vaults', 'Unlock…', 'Show Coffer', 'Quit Coffer']) {
      const item = template.find((each) => each.label === label);
      (item?.click as (() => void) | undefined)?.();
    }
    expect(calls).toEqual(['lock', 'show', 'show', 'quit']);
  });

  it('count the true state of the open vaults', () => {
    expect(countVaults([{ locked: true }, { locked: false }, { locked: false }])).toEqual({
      locked: 1,
      unlocked: 2,
    });
    expect(countVaults([])).toEqual({ locked: 0, unlocked: 0 });
  });

  it('keep Coffer running when the window closes on macOS and Windows, not on Linux', () => {
    expect(closeKeepsRunning('darwin')).toBe(true);
    expect(closeKeepsRunning('win32')).toBe(true);
    expect(closeKeepsRunning('linux')).toBe(false);
  });
});
