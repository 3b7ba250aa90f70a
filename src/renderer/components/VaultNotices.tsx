import { TriangleAlert } from 'lucide-react';

import { showNotices, useCoffer } from '../store.js';

/**
 * Above the browser, in one alert (two at once are not all read out): for as long as the vault refuses every
 * change because its header is older than its data, that and how to end it, with a button that starts it
 * (`onRestoreHeader`, disabled while `restoring`; not dismissable: it stays true until the newer header is back);
 * then what unlocking found (damage, a vault gone back to an older copy), until dismissed.
 */
export function VaultNotices({
  restoring,
  onRestoreHeader,
}: {
  restoring: boolean;
  onRestoreHeader: () => void;
}) {
  const notices = useCoffer((state) => state.notices);
  const headerOlderThanData = useCoffer((state) => state.vault?.headerOlderThanData === true);
  if (!headerOlderThanData && notices.length === 0) return null;
  return (
    <div role="alert">
      {headerOlderThanData && (
        <div className="warning vault-notices">
          <TriangleAlert size={16} aria-hidden="true" />
          <div className="vault-notices-text">
            <p>
              <strong>Nothing in this vault can be changed for now.</strong> Its header (coffer.header) is
              older than its data: an older copy was put back. Any files under the newer key are left out of
              the list, and every change is refused, so that the newer header, kept as coffer.header.bak,
              stays as it is.
            </p>
            <p>
              To put it back, lock the vault and restore “coffer.header.bak” from the vault folder (show all
              files) with a passphrase it holds.
            </p>
          </div>
          <button type="button" disabled={restoring} onClick={onRestoreHeader}>
            Lock and restore the header…
          </button>
        </div>
      )}
      {notices.length > 0 && (
        <div className="warning vault-notices">
          <TriangleAlert size={16} aria-hidden="true" />
          <div className="vault-notices-text">
            {notices.map((notice) => (
              <p key={notice}>{notice}</p>
            ))}
          </div>
          <button
            type="button"
            onClick={() => {
              showNotices([]);
            }}
          >
            Dismiss
          </button>
        </div>
      )}
    </div>
  );
}
