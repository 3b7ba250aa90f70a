import { call } from '../api.js';
import { ErrorText } from '../components/ErrorText.js';
import type { Changed } from './PassphrasesTab.js';
import { useSecurityAction } from './use-security-action.js';

/**
 * "Save a header backup…": the vault header (its key slots) as a file in a folder the user picks through the
 * host's dialog, for when the header in the vault is damaged. Says what such a copy keeps working with.
 */
export function HeaderBackup({ vaultId, onChanged }: { vaultId: string; onChanged: Changed }) {
  const { busy, error, run } = useSecurityAction('header-backup');
  const save = (): void => {
    void run(async () => {
      const picked = await call('dialog.pickFolder', { purpose: 'header-backup', vaultId });
      if (picked === null) return;
      const saved = await call('security.exportHeader', { vaultId, folder: picked.handle });
      onChanged(`Header backup saved as “${saved.fileName}” in ${saved.folder}.`, []);
    });
  };
  return (
    <section className="security-block" aria-labelledby="header-backup-title">
      <h3 id="header-backup-title">Header backup</h3>
      <p className="muted">
        The vault header holds the passphrases’ key slots; if it is damaged, a backup opens the vault again. A
        backup keeps working with the passphrases and recovery key the vault has today, even after they are
        changed or removed here: keep it as safe as the passphrases, and delete old ones after a change.
      </p>
      <ErrorText message={error} />
      <div className="actions">
        <button type="button" disabled={busy} onClick={save}>
          Save a header backup…
        </button>
      </div>
    </section>
  );
}
