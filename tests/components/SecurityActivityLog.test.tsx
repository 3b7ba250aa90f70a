// @vitest-environment jsdom
import './dom.js';

import { act, fireEvent, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { formatDate } from '../../src/renderer/format.js';
import { ROW_HEIGHT } from '../../src/renderer/virtual-rows.js';
import type { ActivityLogEntry, ActivityLogView } from '../../src/shared/contract.js';
import { Refusal } from './fake-api.js';
import { openSecurity, openTab, passphraseSlot, vaultInfo } from './security-page.js';
import { requests, settle } from './fixtures.js';

const INFO = vaultInfo([passphraseSlot(0, 'moderate', true)]);

/** The log view's height: ten rows. */
const VIEW_HEIGHT = 10 * ROW_HEIGHT;

const entry = (seq: number, kind: string, more: Partial<ActivityLogEntry> = {}): ActivityLogEntry => ({
  seq,
  time: Date.UTC(2025, 0, 1, 12, seq),
  kind,
  outcome: 'done',
  counts: {},
  flags: [],
  ...more,
});

const log = (entries: readonly ActivityLogEntry[], more: Partial<ActivityLogView> = {}): ActivityLogView => ({
  entries,
  dropped: 0,
  problems: [],
  ...more,
});

/** The rows of the log as the user reads them: when, and what. */
function rows(): [string, string][] {
  const list = within(screen.getByRole('region', { name: 'Activity log entries' }));
  return list.getAllByRole('listitem').map((row) => {
    const when = row.querySelector('time')?.textContent ?? '';
    return [when, row.textContent.slice(when.length)];
  });
}

beforeEach(() => {
  // jsdom lays nothing out, so every element is 0 px tall and the log's virtual list would show no row: the log
  // view is given the height a window gives it, ten rows.
  vi.spyOn(Element.prototype, 'clientHeight', 'get').mockReturnValue(VIEW_HEIGHT);
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the activity log', () => {
  it('says it is reading the log, then how many entries it has, newest first, each when and what', async () => {
    let answer: (view: ActivityLogView) => void = () => undefined;
    const page = await openSecurity(INFO, {
      'security.activityLog': () => new Promise<ActivityLogView>((resolve) => (answer = resolve)),
    });
    await openTab('Activity log');
    expect(screen.getByText('Reading the activity log…')).toBeTruthy();
    await act(async () => {
      answer(
        log([
          entry(1, 'unlock'),
          entry(2, 'rename'),
          entry(3, 'delete', { counts: { entries: 2 }, outcome: 'failed' }),
        ]),
      );
      await Promise.resolve();
    });
    expect(requests(page.api, 'security.activityLog')).toEqual([{ vaultId: 'v1' }]);
    expect(
      screen.getByText('3 entries, newest first. The log records what happened and how much, never names.'),
    ).toBeTruthy();
    expect(rows()).toEqual([
      [formatDate(entry(3, '').time), 'Deleted 2 items — failed'],
      [formatDate(entry(2, '').time), 'Renamed an item'],
      [formatDate(entry(1, '').time), 'Unlocked'],
    ]);
    // The time is machine-readable too, for assistive technology.
    const newest = within(screen.getByRole('region', { name: 'Activity log entries' })).getAllByRole(
      'listitem',
    )[0];
    expect(newest?.querySelector('time')?.getAttribute('datetime')).toBe('2025-01-01T12:03:00.000Z');
  });

  it('tells a screen reader where each row of a long log is, and shows more as it scrolls', async () => {
    const entries = Array.from({ length: 1000 }, (_, index) => entry(index + 1, 'unlock'));
    await openSecurity(INFO, { 'security.activityLog': () => log(entries) });
    await openTab('Activity log');
    await screen.findByText(/^1,000 entries, newest first/);
    const region = screen.getByRole('region', { name: 'Activity log entries' });
    const shown = () => within(region).getAllByRole('listitem');
    expect(shown()[0]?.getAttribute('aria-posinset')).toBe('1');
    expect(shown()[0]?.getAttribute('aria-setsize')).toBe('1000');
    expect(shown()[0]?.querySelector('time')?.getAttribute('datetime')).toBe(
      new Date(entries[999]?.time ?? 0).toISOString(),
    );
    // Only the rows in view (and a few either side) are made: a long log opens as fast as a short one.
    expect(shown().length).toBeLessThan(30);
    region.scrollTop = 500 * ROW_HEIGHT;
    fireEvent.scroll(region);
    expect(shown().map((row) => row.getAttribute('aria-posinset'))).toContain('505');
  });

  it('says how many older entries were dropped, and what is wrong with the log', async () => {
    await openSecurity(INFO, {
      'security.activityLog': () =>
        log([entry(13, 'unlock')], {
          dropped: 12,
          problems: [
            { kind: 'torn', message: 'The last entry was cut short.' },
            { kind: 'order', message: 'Entry 9 is out of order.' },
          ],
        }),
    });
    await openTab('Activity log');
    expect(
      await screen.findByText(
        '12 older entries were dropped to keep the log small (it keeps the most recent ones).',
      ),
    ).toBeTruthy();
    const problems = screen.getByRole('alert');
    expect(
      within(problems)
        .getAllByRole('listitem')
        .map((item) => item.textContent),
    ).toEqual(['The last entry was cut short.', 'Entry 9 is out of order.']);
    expect(problems.textContent).toContain(
      'The activity log has problems (the vault’s files are not affected)',
    );
    expect(problems.textContent).toContain('if the log was tampered with, its entries cannot be trusted.');
  });

  it('says in words for the log when it cannot be read, and reads it again with Refresh', async () => {
    let refusal: Refusal | null = new Refusal('INTEGRITY');
    const page = await openSecurity(INFO, {
      'security.activityLog': () => refusal ?? log([entry(1, 'unlock')]),
    });
    await openTab('Activity log');
    expect((await screen.findByRole('alert')).textContent).toBe(
      'The activity log file is not this vault\'s log, or not a file. Move "activity.log" out of the vault ' +
        'folder (a new log starts), or put back its own copy from a backup.',
    );
    refusal = null;
    await userEvent.click(screen.getByRole('button', { name: 'Refresh' }));
    await settle();
    expect(requests(page.api, 'security.activityLog')).toHaveLength(2);
    expect(screen.queryByRole('alert')).toBeNull();
    expect(rows()).toEqual([[formatDate(entry(1, '').time), 'Unlocked']]);
  });
});
