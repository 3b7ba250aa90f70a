import { TriangleAlert } from 'lucide-react';

import { showNotices, useCoffer } from '../store.js';

/** What unlocking found (damage, a vault gone back to an older copy), above the browser until dismissed. */
export function VaultNotices() {
  const notices = useCoffer((state) => state.notices);
  if (notices.length === 0) return null;
  return (
    <div className="warning vault-notices" role="alert">
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
  );
}
