import { useEffect, useState, type MediaHTMLAttributes } from 'react';

import { PREVIEW_MAX_BYTES, type VaultEntry } from '../../shared/contract.js';
import { call, describeError } from '../api.js';
import { formatSize } from '../format.js';
import { previewKind, TEXT_PREVIEW_BYTES } from '../../shared/preview-kind.js';
import { PanelDialog } from './PanelDialog.js';

/** Larger images are not decrypted into memory for a preview (audio and video play by range reads instead). */
const IMAGE_PREVIEW_MAX_BYTES = 64 * 1024 * 1024;

type Shown =
  | { readonly state: 'loading' }
  | { readonly state: 'error'; readonly message: string }
  | { readonly state: 'image' | 'audio' | 'video'; readonly url: string }
  | { readonly state: 'text'; readonly text: string; readonly cut: boolean }
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
  'Run "Check all data" in Vault details, or restore it and open it with another app.';

/** Ends a media URL; a failure only means it ends at the vault's lock instead. */
function releaseMedia(url: string): Promise<unknown> {
  return call('preview.releaseMedia', { url }).catch(() => undefined);
}

/** Reads `[0, length)` of a file by bounded ranges (each at most PREVIEW_MAX_BYTES), into memory only. */
async function readStart(
  vaultId: string,
  path: string,
  length: number,
  signal: AbortSignal,
): Promise<Uint8Array> {
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
 * or the vault locks, which unmounts it), text and code as the first MiB. Nothing is written to disk.
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
  const showPlaybackError = () => {
    setShown({ state: 'error', message: PLAYBACK_FAILED });
  };

  useEffect(() => {
    const kind = previewKind(entry.name);
    if (kind === undefined) {
      setShown({ state: 'unsupported' });
      return undefined;
    }
    if (kind.kind === 'image' && entry.size > IMAGE_PREVIEW_MAX_BYTES) {
      setShown({ state: 'unsupported' });
      return undefined;
    }
    const abort = new AbortController();
    if (kind.kind === 'audio' || kind.kind === 'video') {
      // Played by range reads from a URL the back end grants for this file; released when the preview closes.
      let granted: string | undefined;
      call('preview.mediaUrl', { vaultId, path: entry.path })
        .then(({ url }) => {
          granted = url;
          if (abort.signal.aborted) void releaseMedia(url);
          else setShown({ state: kind.kind, url });
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
          url = URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type: kind.type }));
          setShown({ state: kind.kind, url });
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
        {shown.state === 'unsupported' && (
          <p className="muted">
            This file cannot be previewed here (its kind, or its size). Restore it to open it.
          </p>
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
      </div>
    </PanelDialog>
  );
}
