/**
 * Small real PDFs written byte by byte, so the specs and the screenshots need no PDF library: each page is a
 * content stream of PDF operators, text in standard fonts (`/F1` Helvetica, `/F2` Helvetica-Bold, `/F3` Courier;
 * not embedded, as in many real PDFs), and the cross-reference table has every object's exact offset.
 */
import type { Locator } from '@playwright/test';

/** The little of a canvas element that {@link inkPixels} uses: this module also compiles without the DOM's types. */
interface CanvasElement {
  readonly width: number;
  readonly height: number;
  getContext(kind: '2d'): {
    getImageData(x: number, y: number, width: number, height: number): { readonly data: Uint8ClampedArray };
  } | null;
}

export interface PdfOptions {
  /** Pads the file with a comment to exactly this many bytes (a listing's sizes stay as they were). */
  readonly padTo?: number;
  /**
   * Marks it encrypted with a user password (the standard security handler, 40-bit RC4), so a viewer must ask for
   * one. The streams are not really encrypted: no viewer gets past the password check to read them.
   */
  readonly passwordProtected?: boolean;
}

/** A PDF of US Letter pages, one for each content stream in `pages`. */
export function pdfBytes(
  pages: readonly string[],
  { padTo, passwordProtected = false }: PdfOptions = {},
): Buffer {
  // Objects 1–5 are the catalog, the page tree and the three fonts; then each page and its content stream.
  const pageIds = pages.map((_, index) => 6 + index * 2);
  const objects: string[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>',
  ];
  for (const [index, content] of pages.entries()) {
    objects.push(
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] ' +
        `/Resources << /Font << /F1 3 0 R /F2 4 0 R /F3 5 0 R >> >> /Contents ${7 + index * 2} 0 R >>`,
      `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`,
    );
  }
  const hex = (bytes: number) => `<${'5a'.repeat(bytes)}>`;
  if (passwordProtected) objects.push(`<< /Filter /Standard /V 1 /R 2 /O ${hex(32)} /U ${hex(32)} /P -4 >>`);

  let text = '%PDF-1.4\n';
  const offsets = objects.map((body, index) => {
    const offset = Buffer.byteLength(text, 'latin1');
    text += `${index + 1} 0 obj\n${body}\nendobj\n`;
    return offset;
  });
  const trailer = (xrefAt: number) =>
    'xref\n' +
    `0 ${objects.length + 1}\n` +
    '0000000000 65535 f \n' +
    offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('') +
    `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R` +
    (passwordProtected ? ` /Encrypt ${objects.length} 0 R /ID [${hex(16)} ${hex(16)}]` : '') +
    ` >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  if (padTo !== undefined) {
    // The trailer's length depends on where it starts only through the digits of that offset: measured with the
    // final offset's digit count, the padding comes out exact.
    const unpadded = Buffer.byteLength(text, 'latin1');
    const room = padTo - unpadded - Buffer.byteLength(trailer(padTo), 'latin1') - 2;
    if (room < 0) throw new Error(`The PDF is already larger than ${padTo} bytes.`);
    text += `%${' '.repeat(room)}\n`;
  }
  const bytes = Buffer.from(text + trailer(Buffer.byteLength(text, 'latin1')), 'latin1');
  if (padTo !== undefined && bytes.length !== padTo)
    throw new Error(`Padded to ${bytes.length}, not ${padTo}.`);
  return bytes;
}

/** PDF text-drawing operators for one line at (x, y), in font `/F1`, `/F2` or `/F3` at `size` points. */
export function textLine(x: number, y: number, line: string, { font = 'F1', size = 12 } = {}): string {
  const escaped = line.replace(/[\\()]/g, (character) => `\\${character}`);
  return `BT /${font} ${size} Tf ${x} ${y} Td (${escaped}) Tj ET`;
}

/**
 * How many of a canvas's pixels are dark ink: none while it is blank, white or emptied. A drawn page of the PDFs
 * above has hundreds.
 */
export function inkPixels(canvas: Locator): Promise<number> {
  return canvas.evaluate((element) => {
    const page = element as unknown as CanvasElement;
    const context = page.width > 0 && page.height > 0 ? page.getContext('2d') : null;
    if (context === null) return 0;
    const { data } = context.getImageData(0, 0, page.width, page.height);
    let ink = 0;
    for (let at = 0; at < data.length; at += 4) {
      if ((data[at + 3] ?? 0) > 0 && (data[at] ?? 255) < 128 && (data[at + 1] ?? 255) < 160) ink += 1;
    }
    return ink;
  });
}
