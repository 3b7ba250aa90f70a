import { ArrowUp, File, Folder } from 'lucide-react';
import { useEffect, useState } from 'react';

import type { ChooserListing, ChooserRequest, PreviewChooser as Chooser } from '../../preview/bridge.js';
import { plural } from '../../shared/plural.js';
import { ErrorText } from './ErrorText.js';

/**
 * The preview's stand-in for native file dialogs (only in `npm run preview`; Electron has real ones): lists the
 * server's folders below the allowed roots and answers the waiting `dialog.*` request with the choice.
 */
export function PreviewChooser({ chooser }: { chooser: Chooser }) {
  const [request, setRequest] = useState<ChooserRequest | null>(null);
  const [listing, setListing] = useState<ChooserListing | null>(null);
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const stop = chooser.onRequest(setRequest);
    void chooser.pending().then((result) => {
      if (result.ok && result.value !== null) setRequest(result.value);
    });
    return stop;
  }, [chooser]);

  /** Shows `path`'s entries; false (with the reason shown) when it cannot be listed. */
  const open = async (path: string): Promise<boolean> => {
    const result = await chooser.list(path);
    if (result.ok) {
      setListing(result.value);
      setPicked(new Set());
      setError(null);
    } else setError(result.message);
    return result.ok;
  };
  useEffect(() => {
    const showFirst = async (): Promise<void> => {
      const root = request?.roots[0];
      // A start folder that cannot be listed (reached through a link, say) leaves the first root, not nothing.
      if (request?.startIn !== undefined && (await open(request.startIn))) return;
      if (root !== undefined) await open(root);
    };
    void showFirst();
  }, [request]);

  if (request === null) return null;
  const finish = async (paths: readonly string[] | null): Promise<void> => {
    await chooser.answer(request.chooserId, paths);
    setRequest(null);
    setListing(null);
  };
  const join = (name: string): string => `${listing?.path.replace(/\/$/, '') ?? ''}/${name}`;
  const choosingFiles = request.kind === 'files';

  return (
    <div className="modal-backdrop">
      <section className="card chooser" role="dialog" aria-modal="true" aria-labelledby="chooser-title">
        <h1 id="chooser-title">{choosingFiles ? 'Choose files' : 'Choose a folder'}</h1>
        <div className="chooser-path">
          <button
            type="button"
            className="icon-button"
            aria-label="Up"
            disabled={listing?.parent == null}
            onClick={() => {
              if (listing?.parent != null) void open(listing.parent);
            }}
          >
            <ArrowUp size={16} aria-hidden="true" />
          </button>
          <span className="folder-label">{listing?.path ?? ''}</span>
        </div>
        <ul className="chooser-list">
          {listing?.entries.map((entry) => (
            <li key={entry.name}>
              <button
                type="button"
                className={picked.has(join(entry.name)) ? 'chooser-item selected' : 'chooser-item'}
                disabled={entry.type === 'file' && !choosingFiles}
                onClick={() => {
                  if (entry.type === 'folder') void open(join(entry.name));
                  else setPicked(new Set([...picked, join(entry.name)]));
                }}
              >
                {entry.type === 'folder' ? (
                  <Folder size={16} aria-hidden="true" />
                ) : (
                  <File size={16} aria-hidden="true" />
                )}
                {entry.name}
              </button>
            </li>
          ))}
        </ul>
        {listing !== null && listing.omitted > 0 && (
          <p className="muted">
            {plural(listing.omitted, 'more item')} in this folder {listing.omitted === 1 ? 'is' : 'are'} not
            listed (a folder shows its first {listing.entries.length.toLocaleString('en-US')} here).
          </p>
        )}
        <ErrorText message={error} />
        <div className="actions">
          <button type="button" onClick={() => void finish(null)}>
            Cancel
          </button>
          <button
            type="button"
            className="primary"
            disabled={listing === null || (choosingFiles && picked.size === 0)}
            onClick={() => void finish(choosingFiles ? [...picked] : [listing?.path ?? ''])}
          >
            {choosingFiles ? 'Choose files' : 'Choose this folder'}
          </button>
        </div>
      </section>
    </div>
  );
}
