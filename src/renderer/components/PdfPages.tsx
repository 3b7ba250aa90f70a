import { useEffect, useRef, useState, type RefObject } from 'react';
import type { PDFDocumentProxy, PDFPageProxy } from 'pdfjs-dist';

import { plural } from '../../shared/plural.js';

/** Pages past this many are not rendered: a long document is for another app, and each page is a bitmap. */
const PDF_PAGE_LIMIT = 50;

/** Sharper than 1 on high-density screens, but no more than 2: a page's bitmap grows with its square. */
const MAX_PIXEL_RATIO = 2;

/** Most pixels one page's canvas gets (as pdf.js's own viewer): about 128 MB of bitmap. */
const MAX_CANVAS_PIXELS = 2 ** 25;

/** A4's shape, for the space a page takes before pdf.js has said its real size. */
const A4_ASPECT_RATIO = 210 / 297;

/**
 * One page, as a canvas the width of the scroll area. Drawn only while it is within a screenful of the visible part,
 * and emptied when it leaves, so a long document holds a few bitmaps, not fifty.
 */
function PdfPage({
  document,
  pageNumber,
  pageCount,
  width,
  scrollArea,
}: {
  document: PDFDocumentProxy;
  pageNumber: number;
  pageCount: number;
  /** In CSS pixels; 0 until the scroll area is measured. */
  width: number;
  scrollArea: RefObject<HTMLDivElement | null>;
}) {
  const frame = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [page, setPage] = useState<PDFPageProxy | null>(null);
  const [near, setNear] = useState(false);
  const [failed, setFailed] = useState(false);

  useEffect(() => {
    let current = true;
    document.getPage(pageNumber).then(
      (loaded) => {
        if (current) setPage(loaded);
      },
      () => {
        if (current) setFailed(true);
      },
    );
    return () => {
      current = false;
    };
  }, [document, pageNumber]);

  useEffect(() => {
    const element = frame.current;
    if (element === null) return undefined;
    const observer = new IntersectionObserver(
      ([entry]) => {
        setNear(entry?.isIntersecting ?? false);
      },
      { root: scrollArea.current, rootMargin: '100% 0px' },
    );
    observer.observe(element);
    return () => {
      observer.disconnect();
    };
  }, [scrollArea]);

  useEffect(() => {
    const target = canvas.current;
    if (page === null || !near || width <= 0 || target === null) return undefined;
    const pixelRatio = Math.min(window.devicePixelRatio || 1, MAX_PIXEL_RATIO);
    const natural = page.getViewport({ scale: 1 });
    const scale = (width / natural.width) * pixelRatio;
    // A page of an odd shape (very tall, say) is drawn with fewer pixels, which the page's box then stretches.
    const capped = Math.min(scale, Math.sqrt(MAX_CANVAS_PIXELS / (natural.width * natural.height)));
    const viewport = page.getViewport({ scale: capped });
    target.width = Math.floor(viewport.width);
    target.height = Math.floor(viewport.height);
    const rendering = page.render({ canvas: target, viewport });
    rendering.promise.catch((error: unknown) => {
      // Cancelled because the page left the screen, was resized or the preview closed: not a failure.
      if (!(error instanceof Error && error.name === 'RenderingCancelledException')) setFailed(true);
    });
    return () => {
      rendering.cancel();
      // What pdf.js decoded for the page (images, drawing commands) goes too, once the cancel has taken.
      page.cleanup();
      // A canvas's bitmap lives until the canvas shrinks or is collected; emptied now, it goes at once.
      target.width = 0;
      target.height = 0;
    };
  }, [page, near, width]);

  const { width: pageWidth, height: pageHeight } = page?.getViewport({ scale: 1 }) ?? {
    width: A4_ASPECT_RATIO,
    height: 1,
  };
  return (
    <div
      ref={frame}
      className={failed ? 'pdf-page failed' : 'pdf-page'}
      style={{ aspectRatio: `${pageWidth} / ${pageHeight}` }}
    >
      {failed ? (
        <p className="muted">Page {pageNumber} could not be shown: part of it may be damaged.</p>
      ) : (
        <canvas ref={canvas} role="img" aria-label={`Page ${pageNumber} of ${pageCount}`} />
      )}
    </div>
  );
}

/**
 * The pages of an open PDF one after another, at the width of the scroll area, with how many there are; at most
 * {@link PDF_PAGE_LIMIT}, saying so when there are more.
 */
export function PdfPages({
  document,
  elsewhere,
}: {
  document: PDFDocumentProxy;
  /** Where to see what the preview does not show (the default app, or a restore), as a sentence. */
  elsewhere: string;
}) {
  const scrollArea = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  const pageCount = document.numPages;
  const shownCount = Math.min(pageCount, PDF_PAGE_LIMIT);

  useEffect(() => {
    const element = scrollArea.current;
    if (element === null) return undefined;
    const observer = new ResizeObserver(([entry]) => {
      setWidth(Math.floor(entry?.contentRect.width ?? 0));
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
    };
  }, []);

  return (
    <>
      <p className="muted">
        {pageCount > shownCount
          ? `${plural(pageCount, 'page')}: the first ${shownCount.toLocaleString()} are shown here. ${elsewhere}`
          : plural(pageCount, 'page')}
      </p>
      <div ref={scrollArea} className="preview-pdf" role="region" aria-label="Pages" tabIndex={0}>
        {Array.from({ length: shownCount }, (_, index) => (
          <PdfPage
            key={index + 1}
            document={document}
            pageNumber={index + 1}
            pageCount={pageCount}
            width={width}
            scrollArea={scrollArea}
          />
        ))}
      </div>
    </>
  );
}
