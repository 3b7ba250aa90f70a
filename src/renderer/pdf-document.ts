/**
 * Opens a PDF held in memory with Mozilla's pdf.js, for the preview. Only a dynamic import loads this module (and
 * pdf.js with it), so the window's first paint never waits for the viewer.
 *
 * pdf.js runs inside the window's CSP as it is:
 * - its parser runs in a module worker started from the app's own bundled file (`worker-src 'self'`), one worker
 *   per document, ended with it;
 * - nothing is evaluated: `isEvalSupported` is off (pdf.js would otherwise compile fonts and functions with
 *   `new Function`) and so is WebAssembly (`useWasm`), which the CSP would refuse anyway;
 * - nothing is fetched from outside the app: no URL is given for CMaps, standard fonts, ICC profiles or decoders
 *   (`connect-src` allows none). The cost, written in the README: fonts a PDF names without embedding them are
 *   drawn with the system's fonts; text in fonts that need a predefined CMap (some Chinese, Japanese and Korean
 *   PDFs) is missing; JPEG 2000 images are left blank and ICC colours fall back to their plain colour space. JBIG2
 *   and CCITT scans still render, by pdf.js's own script decoders;
 * - a PDF's scripts never run: the plain API has no scripting, and no annotation or form layer is built.
 */
import { getDocument, PDFWorker, VerbosityLevel, type PDFDocumentProxy } from 'pdfjs-dist';
import workerUrl from 'pdfjs-dist/build/pdf.worker.min.mjs?url';

/** How long closing waits for pdf.js to wind its worker down before ending it. */
const DESTROY_WAIT_MS = 500;

/** Most pixels pdf.js decodes for one image of a page (its own viewer's default); larger images are skipped. */
const MAX_IMAGE_PIXELS = 2 ** 25;

const delay = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms);
  });

/** Why a PDF could not be shown: it needs a password, pdf.js could not read it, or pdf.js could not start. */
export type PdfFailure = 'password' | 'damaged' | 'viewer';

/** A PDF that {@link openPdf} could not open, with the reason the window words. */
export class PdfOpenError extends Error {
  constructor(readonly failure: PdfFailure) {
    super(`The PDF could not be opened (${failure}).`);
    this.name = 'PdfOpenError';
  }
}

/** pdf.js's errors cross from its worker as new objects, so their names, not their classes, tell them apart. */
function failureOf(error: unknown): PdfFailure {
  return error instanceof Error && error.name === 'PasswordException' ? 'password' : 'damaged';
}

/**
 * Opens `bytes` (the whole file) in a worker of its own. The bytes move to the worker: `bytes` is empty after.
 * The document lasts until `signal` aborts, which destroys it (its pages, fonts and parsed data) and ends its
 * worker, whether it is still opening or open.
 * @throws {@link PdfOpenError} when the PDF needs a password, cannot be read, or the worker does not start;
 * `signal`'s reason once it is aborted.
 */
export async function openPdf(
  bytes: Uint8Array<ArrayBuffer>,
  signal: AbortSignal,
): Promise<PDFDocumentProxy> {
  signal.throwIfAborted();
  const worker = new Worker(workerUrl, { type: 'module', name: 'pdf.js' });
  // Given a port, pdf.js neither falls back to parsing on the window's own thread nor ends the worker itself.
  const port = PDFWorker.create({ port: worker, verbosity: VerbosityLevel.ERRORS });
  const task = getDocument({
    data: bytes,
    worker: port,
    isEvalSupported: false,
    maxImageSize: MAX_IMAGE_PIXELS,
    useWasm: false,
    useWorkerFetch: false,
    enableXfa: false,
    // Warnings may quote the document (font names, broken objects): the window's console gets errors only.
    verbosity: VerbosityLevel.ERRORS,
  });
  let closing: Promise<void> | undefined;
  // pdf.js's destroy waits for the worker to answer, which a worker busy with a long (or endless) decode does not:
  // after a short wait the worker is ended regardless, so a lock never leaves it holding the decrypted bytes.
  const close = (): Promise<void> =>
    (closing ??= Promise.race([task.destroy(), delay(DESTROY_WAIT_MS)]).finally(() => {
      port.destroy();
      worker.terminate();
    }));
  // A worker that never starts (its file refused or missing) would leave the document pending for good, and so
  // would a task destroyed mid-load: either ends the wait.
  const stopped = new Promise<never>((_resolve, reject) => {
    worker.addEventListener(
      'error',
      () => {
        reject(new PdfOpenError('viewer'));
      },
      { once: true },
    );
    signal.addEventListener(
      'abort',
      () => {
        reject(signal.reason as Error);
        void close();
      },
      { once: true },
    );
  });
  try {
    return await Promise.race([task.promise, stopped]);
  } catch (error) {
    await close().catch(() => undefined);
    if (signal.aborted) throw error;
    throw error instanceof PdfOpenError ? error : new PdfOpenError(failureOf(error));
  }
}
