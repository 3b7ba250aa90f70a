// @vitest-environment jsdom
import './dom.js';

import { act, render, screen } from '@testing-library/react';
import type { PDFDocumentProxy } from 'pdfjs-dist';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { PdfPages } from '../../src/renderer/components/PdfPages.js';

/*
 * The pages without pdf.js: the component only asks a document for its pages, their sizes and a drawing onto a
 * canvas, which a fake document answers. jsdom has neither ResizeObserver nor IntersectionObserver (it lays nothing
 * out); the tests stand in for the browser's, and say themselves how wide the pages are and which are in view.
 */

type Observed = (entries: unknown[]) => void;
let resizeListeners: Observed[] = [];
let visibilityListeners: { element: Element; listener: Observed }[] = [];

class TestResizeObserver {
  constructor(private readonly listener: Observed) {}
  observe(): void {
    resizeListeners.push(this.listener);
  }
  disconnect(): void {
    resizeListeners = resizeListeners.filter((listener) => listener !== this.listener);
  }
}
class TestIntersectionObserver {
  constructor(private readonly listener: Observed) {}
  observe(element: Element): void {
    visibilityListeners.push({ element, listener: this.listener });
  }
  disconnect(): void {
    visibilityListeners = visibilityListeners.filter(({ listener }) => listener !== this.listener);
  }
}

const originalPixelRatio = window.devicePixelRatio;
beforeEach(() => {
  Object.assign(window, {
    ResizeObserver: TestResizeObserver,
    IntersectionObserver: TestIntersectionObserver,
  });
});
afterEach(() => {
  Object.assign(window, { ResizeObserver: undefined, IntersectionObserver: undefined });
  window.devicePixelRatio = originalPixelRatio;
  resizeListeners = [];
  visibilityListeners = [];
});

/** The scroll area is laid out `width` CSS pixels wide. */
function layOut(width: number): void {
  act(() => {
    for (const listener of resizeListeners) listener([{ contentRect: { width } }]);
  });
}
/** Page `pageNumber`'s place comes within (or leaves) a screenful of the part in view. */
function scrollNear(pageNumber: number, near = true): void {
  const frame = screen.getByRole('img', { name: new RegExp(`^Page ${String(pageNumber)} of`) }).parentElement;
  act(() => {
    for (const { element, listener } of visibilityListeners)
      if (element === frame) listener([{ isIntersecting: near }]);
  });
}

interface Drawing {
  readonly pageNumber: number;
  readonly canvas: HTMLCanvasElement;
  cancelled: boolean;
  fail(error: Error): void;
}

/** A document of `pageCount` US Letter pages (612 × 792 points); `damaged` pages cannot be read. */
function fakeDocument(pageCount: number, damaged: readonly number[] = []) {
  const drawings: Drawing[] = [];
  const document = {
    numPages: pageCount,
    getPage(pageNumber: number) {
      if (damaged.includes(pageNumber)) return Promise.reject(new Error('bad page'));
      return Promise.resolve({
        getViewport: ({ scale }: { scale: number }) => ({ width: 612 * scale, height: 792 * scale }),
        render({ canvas }: { canvas: HTMLCanvasElement }) {
          let fail: (error: Error) => void = () => undefined;
          const promise = new Promise<void>((_resolve, reject) => {
            fail = reject;
          });
          const drawing: Drawing = { pageNumber, canvas, cancelled: false, fail };
          drawings.push(drawing);
          return {
            promise,
            cancel: () => {
              drawing.cancelled = true;
            },
          };
        },
        cleanup: () => true,
      });
    },
  };
  return { document: document as unknown as PDFDocumentProxy, drawings };
}

const ELSEWHERE = 'Restore it to open it in another app.';

async function showPdf(pageCount: number, damaged: readonly number[] = []) {
  const pdf = fakeDocument(pageCount, damaged);
  render(<PdfPages document={pdf.document} elsewhere={ELSEWHERE} />);
  // The pages' sizes come from the document a moment later.
  await act(() => Promise.resolve());
  return pdf;
}

const pageNames = () => screen.getAllByRole('img').map((page) => page.getAttribute('aria-label'));

describe('the pages of a PDF', () => {
  it('says how many pages there are and shows each in a scrollable region', async () => {
    await showPdf(3);
    expect(screen.getByText('3 pages')).toBeTruthy();
    expect(pageNames()).toEqual(['Page 1 of 3', 'Page 2 of 3', 'Page 3 of 3']);
    // Focusable, so the keyboard scrolls it.
    expect(screen.getByRole('region', { name: 'Pages' }).tabIndex).toBe(0);
  });

  it('shows the first 50 pages of a longer document, and says where to see the rest', async () => {
    await showPdf(120);
    expect(screen.getByText(`120 pages: the first 50 are shown here. ${ELSEWHERE}`)).toBeTruthy();
    expect(pageNames()).toHaveLength(50);
    expect(pageNames().at(-1)).toBe('Page 50 of 120');
  });

  it('says which page could not be read, and shows the others', async () => {
    await showPdf(3, [2]);
    expect(screen.getByText('Page 2 could not be shown: part of it may be damaged.')).toBeTruthy();
    expect(pageNames()).toEqual(['Page 1 of 3', 'Page 3 of 3']);
  });

  it('draws a page once it comes near, as wide as the area at the screen’s density up to 2×, and lets it go when it leaves', async () => {
    window.devicePixelRatio = 3;
    const { drawings } = await showPdf(3);
    layOut(500);
    expect(drawings).toEqual([]);
    scrollNear(2);
    expect(drawings.map((drawing) => drawing.pageNumber)).toEqual([2]);
    const [drawing] = drawings;
    // 500 CSS pixels at a pixel ratio of 3, drawn at 2: 1,000 pixels wide, the page's shape kept.
    expect([drawing?.canvas.width, drawing?.canvas.height]).toEqual([1000, Math.floor((1000 * 792) / 612)]);

    scrollNear(2, false);
    expect(drawing?.cancelled).toBe(true);
    // The bitmap is freed at once.
    expect([drawing?.canvas.width, drawing?.canvas.height]).toEqual([0, 0]);
  });

  it('says a page could not be drawn when drawing fails, but not when it was cancelled', async () => {
    const { drawings } = await showPdf(2);
    layOut(400);
    scrollNear(1);
    scrollNear(2);
    const cancelled = new Error('Rendering cancelled, page 2');
    cancelled.name = 'RenderingCancelledException';
    await act(async () => {
      drawings[0]?.fail(new Error('bad drawing'));
      drawings[1]?.fail(cancelled);
      await Promise.resolve();
    });
    expect(screen.getByText('Page 1 could not be shown: part of it may be damaged.')).toBeTruthy();
    expect(screen.queryByText(/^Page 2 could not be shown/)).toBeNull();
    expect(pageNames()).toEqual(['Page 2 of 2']);
  });
});
