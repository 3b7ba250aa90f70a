import { useEffect, useState, type MediaHTMLAttributes } from 'react';
import type { PDFDocumentProxy } from 'pdfjs-dist';

import { PREVIEW_MAX_BYTES, type VaultEntry } from '../../shared/contract.js';
import { call, describeError } from '../api.js';
import { formatSize } from '../format.js';
import { previewKind, TEXT_PREVIEW_BYTES } from '../../shared/preview-kind.js';
import type { PdfFailure } from '../pdf-document.js';
import { PanelDialog } from './PanelDialog.js';
import { PdfPages } from './PdfPages.js';

/**
 * Larger images and PDFs are not decrypted into memory for a preview (audio and video play by range reads
 * instead). pdf.js needs the whole file: a PDF this size is already a long scan.
 */
const IN_MEMORY_PREVIEW_MAX_BYTES = 64 * 1024 * 1024;

type Shown =
  | { readonly state: 'loading' }
  | { readonly state: 'error'; readonly message: string }
  | { readonly state: 'image' | 'audio' | 'video'; readonly url: string }
  | { readonly state: 'text'; readonly text: string; readonly cut: boolean }
  | { readonly state: 'pdf'; readonly document: PDFDocumentProxy }
  | { readonly state: 'pdf-failed'; readonly failure: PdfFailure }
  | { readonly state: 'too-large'; readonly kind: 'image' | 'PDF' }
  | { readonly state: 'unsupported' };

/** An `<audio>` or `<video>` element with its controls. */
function MediaPlayer({
  kind,
  ...props
}: { kind: 'audio' | 'video' } & MediaHTMLAttributes<HTMLMediaElement>) {
  return kind === 'audio' ? <audio controls {...props} /> : <video controls {...props} />;
}

/** What a media element that stopped (damage found mid-file, a format it cannot play) says. */
const PLAYBACK_FAILED =
  'This file could not be played: part of it may be damaged, or this window cannot play its format. ' +
  'Run “Check all data” in Vault details, or restore it and open it with another app.';

/** Ends a media URL; a failure only means it ends at the vault's lock instead. */
function releaseMedia(url: string): Promise<unknown> {
  return call('preview.releaseMedia', { url }).catch(() => undefined);
}

/** What the window says of a PDF it could not open, and what to do instead ({@link elsewhere}'s sentence). */
const PDF_FAILED: Readonly<Record<PdfFailure, string>> = {
  password: 'This PDF is protected by a password, which the preview cannot ask for.',
  damaged:
    'This PDF could not be read: it may be damaged, or not a PDF, though another app may still open it.',
  viewer: 'The PDF viewer could not start in this window.',
};

/** Where to see a file the preview cannot show (in full), as a sentence. */
function elsewhere(canOpenWith: boolean): string {
  return canOpenWith
    ? 'Use “Open with default app” to open it in another app.'
    : 'Restore it to open it in another app.';
}

/** Reads `[0, length)` of a file by bounded ranges (each at most PREVIEW_MAX_BYTES), into memory only. */
async function readStart(
  vaultId: string,
  path: string,
  length: number,
  signal: AbortSignal,
): Promise<Uint8Array<ArrayBuffer>> {
  const parts: Uint8Array[] = [];
  let offset = 0;
  while (offset < length && !signal.aborted) {
    const { bytes } = await call('preview.read', {
      vaultId,
      path,
      offset,
      length: Math.min(PREVIEW_MAX_BYTES, length - offset),
    });
    if (bytes.length === 0) break;
    parts.push(bytes);
    offset += bytes.length;
  }
  const whole = new Uint8Array(offset);
  let at = 0;
  for (const part of parts) {
    whole.set(part, at);
    at += part.length;
  }
  return whole;
}

/**
 * Shows one file decrypted in memory only: an image through a Blob's object URL (revoked when the preview closes
 * or the vault locks, which unmounts it), text and code as the first MiB, a PDF's pages drawn by pdf.js into
 * canvases (its document destroyed and its worker ended likewise). Nothing is written to disk.
 */
export function PreviewDialog({
  vaultId,
  entry,
  onOpenWith,
  onClose,
}: {
  vaultId: string;
  entry: VaultEntry;
  /** Opens the file with the default app; absent where the host cannot. */
  onOpenWith?: (() => void) | undefined;
  onClose: () => void;
}) {
  const [shown, setShown] = useState<Shown>({ state: 'loading' });
  const canOpenWith = onOpenWith !== undefined;
  const showPlaybackError = () => {
    setShown({ state: 'error', message: PLAYBACK_FAILED });
  };

  useEffect(() => {
    const kind = previewKind(entry.name);
    if (kind === undefined) {
      setShown({ state: 'unsupported' });
      return undefined;
    }
    if ((kind.kind === 'image' || kind.kind === 'pdf') && entry.size > IN_MEMORY_PREVIEW_MAX_BYTES) {
      setShown({ state: 'too-large', kind: kind.kind === 'pdf' ? 'PDF' : 'image' });
      return undefined;
    }
    const abort = new AbortController();
    if (kind.kind === 'pdf') {
      // pdf.js loads while the file decrypts; aborting (the preview closes, the vault locks) destroys the document
      // and ends its worker, whether it is still opening or already shown.
      Promise.all([import('../pdf-document.js'), readStart(vaultId, entry.path, entry.size, abort.signal)])
        .then(async ([{ openPdf, PdfOpenError }, bytes]) => {
          try {
            const pdf = await openPdf(bytes, abort.signal);
            if (!abort.signal.aborted) setShown({ state: 'pdf', document: pdf });
          } catch (cause) {
            if (!(cause instanceof PdfOpenError)) throw cause;
            setShown({ state: 'pdf-failed', failure: cause.failure });
          }
        })
        .catch((cause: unknown) => {
          if (!abort.signal.aborted) setShown({ state: 'error', message: describeError(cause) });
        });
      return () => {
        abort.abort();
      };
    }
    if (kind.kind === 'audio' || kind.kind === 'video') {
      // Played by range reads from a URL the back end grants for this file; released when the preview closes.
      const media = kind.kind;
      let granted: string | undefined;
      call('preview.mediaUrl', { vaultId, path: entry.path })
        .then(({ url }) => {
          granted = url;
          if (abort.signal.aborted) void releaseMedia(url);
          else setShown({ state: media, url });
        })
        .catch((cause: unknown) => {
          if (!abort.signal.aborted) setShown({ state: 'error', message: describeError(cause) });
        });
      return () => {
        abort.abort();
        if (granted !== undefined) void releaseMedia(granted);
      };
    }
    let url: string | undefined;
    const length = kind.kind === 'text' ? Math.min(entry.size, TEXT_PREVIEW_BYTES) : entry.size;
    readStart(vaultId, entry.path, length, abort.signal)
      .then((bytes) => {
        if (abort.signal.aborted) return;
        if (kind.kind === 'text') {
          const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
          setShown({ state: 'text', text, cut: entry.size > length });
        } else {
          url = URL.createObjectURL(new Blob([bytes], { type: kind.type }));
          setShown({ state: 'image', url });
        }
      })
      .catch((cause: unknown) => {
        if (!abort.signal.aborted) setShown({ state: 'error', message: describeError(cause) });
      });
    return () => {
      abort.abort();
      if (url !== undefined) URL.revokeObjectURL(url);
    };
  }, [vaultId, entry]);

  return (
    <PanelDialog
      title={entry.name}
      label={`Preview of ${entry.name}`}
      aside={
        <>
          <span className="muted">{formatSize(entry.size)}</span>
          {onOpenWith && (
            <button type="button" className="small" onClick={onOpenWith}>
              Open with default app
            </button>
          )}
        </>
      }
      wide
      onClose={onClose}
    >
      <div className="preview-body" data-testid="preview">
        {shown.state === 'loading' && <p className="muted">Decrypting…</p>}
        {shown.state === 'error' && <p role="alert">{shown.message}</p>}
        {shown.state === 'pdf-failed' && (
          <p role="alert">
            {PDF_FAILED[shown.failure]} {elsewhere(canOpenWith)}
          </p>
        )}
        {shown.state === 'too-large' && (
          <p className="muted">
            This {shown.kind} is {formatSize(entry.size)}, more than the{' '}
            {formatSize(IN_MEMORY_PREVIEW_MAX_BYTES)} a preview decrypts into memory. {elsewhere(canOpenWith)}
          </p>
        )}
        {shown.state === 'unsupported' && (
          <p className="muted">This kind of file cannot be previewed here. {elsewhere(canOpenWith)}</p>
        )}
        {shown.state === 'image' && <img src={shown.url} alt={entry.name} className="preview-image" />}
        {(shown.state === 'audio' || shown.state === 'video') && (
          <MediaPlayer
            kind={shown.state}
            src={shown.url}
            aria-label={entry.name}
            className="preview-media"
            onError={showPlaybackError}
          />
        )}
        {shown.state === 'text' && (
          <>
            <pre className="preview-text" tabIndex={0}>
              {shown.text}
            </pre>
            {shown.cut && <p className="muted">Only the first MiB is shown.</p>}
          </>
        )}
        {shown.state === 'pdf' && <PdfPages document={shown.document} elsewhere={elsewhere(canOpenWith)} />}
      </div>
    </PanelDialog>
  );
}
