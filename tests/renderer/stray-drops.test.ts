import { describe, expect, it } from 'vitest';

import { refuseStrayDrops } from '../../src/renderer/stray-drops.js';

/** A drag event as Chromium hands it to the page, with the drop effect the page may set. */
function dragEvent(type: string, types = ['Files']): Event & { dataTransfer: { dropEffect: string } } {
  const event = new Event(type, { cancelable: true }) as Event & { dataTransfer: { dropEffect: string } };
  Object.defineProperty(event, 'dataTransfer', { value: { dropEffect: 'copy', types } });
  return event;
}

describe('files dragged where nothing in the window takes them', () => {
  const window = new EventTarget();
  refuseStrayDrops(window);

  it('are refused with the "not allowed" effect, the drag cancelled so the browser does not open the file', () => {
    const over = dragEvent('dragover');
    window.dispatchEvent(over);
    expect(over.defaultPrevented).toBe(true);
    expect(over.dataTransfer.dropEffect).toBe('none');
    const drop = dragEvent('drop');
    window.dispatchEvent(drop);
    expect(drop.defaultPrevented).toBe(true);
  });

  it('leave text dragged into a field to the page', () => {
    const over = dragEvent('dragover', ['text/plain']);
    window.dispatchEvent(over);
    expect(over.defaultPrevented).toBe(false);
    const drop = dragEvent('drop', ['text/plain']);
    window.dispatchEvent(drop);
    expect(drop.defaultPrevented).toBe(false);
  });

  it('are left alone where a drop target took them', () => {
    const over = dragEvent('dragover');
    over.preventDefault();
    window.dispatchEvent(over);
    expect(over.dataTransfer.dropEffect).toBe('copy');
  });
});
