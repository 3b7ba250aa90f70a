/**
 * The one store of the window's state. Everything decrypted from a vault (names in `entries`, the `selection`,
 * finished jobs' summaries, the folders jobs put files into) lives here and nowhere else, so {@link clearVaultContents} removes all of it when the
 * vault locks or closes.
 */
import { create } from 'zustand';

import type {
  JobEvent,
  JobKind,
  StoppedWork,
  Problem,
  Progress,
  VaultEntry,
  VaultSummary,
  VerifyReport,
} from '../shared/contract.js';
import { plural } from '../shared/plural.js';
import { isWithin, movedPath } from './browser/entries.js';
import { failedJobSummary, stoppedJobSummary } from './stopped-jobs.js';

/**
 * Where a job puts its files: an add into a vault folder (its path, followed when it moves), a restore to a folder
 * on disk (in words).
 */
export type JobPlace = { readonly into: string } | { readonly to: string };

export interface JobView {
  readonly jobId: string;
  readonly kind: JobKind;
  readonly progress?: Progress;
  readonly status: 'running' | 'done' | 'cancelled' | 'failed';
  /** What happened, in words, once the job ended. */
  readonly summary?: string;
  /** Every path skipped or damaged, as reported while the job ran. */
  readonly problems: readonly Problem[];
  /** When the window first heard of the job (ms since the epoch), for speed and time left. */
  readonly startedAt: number;
  /** When its latest progress arrived. */
  readonly progressAt?: number;
  /**
   * When its work began, after any wait for other work on the vault: when its latest progress with no bytes done yet arrived,
   * or when a wait before any byte ended (progress is sent at most every so often, so the first after a wait may
   * already count bytes). Speed is measured from then, not from {@link startedAt}.
   */
  readonly workStartedAt?: number;
  /** A finished check's report, for the vault details' report (unreferenced files too). */
  readonly verifyReport?: VerifyReport;
  /** Whether the engine holds it back for other work on the vault (a job, a delete, a read) before it starts. */
  readonly waiting?: boolean;
  /** When the window heard that it ended (ms since the epoch). */
  readonly endedAt?: number;
}

export interface CofferState {
  /** The vault shown, or null on the start screen. */
  readonly vault: VaultSummary | null;
  /** The folder shown inside the vault. */
  readonly folder: string;
  readonly entries: readonly VaultEntry[];
  /** Whether `entries` are `folder`'s; false before any folder was listed (the browser then asks for them). */
  readonly listed: boolean;
  readonly selection: ReadonlySet<string>;
  readonly jobs: readonly JobView[];
  /**
   * Where each job this window started puts its files, by job id: noted when the job's id comes back, which may be
   * before or after its first events.
   */
  readonly places: Readonly<Record<string, JobPlace>>;
  /**
   * How many of this vault's jobs have ended since it was unlocked (dismissing one does not lower it): what the
   * browser watches to show a changed folder again, so that a job's progress re-renders only the jobs panel.
   */
  readonly jobsEnded: number;
  /**
   * How many times a running add told that rows it added were committed since the vault was unlocked: the browser
   * shows the folder again on each, so files appear as they go in, not only when the add ends.
   */
  readonly addsCommitted: number;
  /** What unlocking found that the user must know (damage, a vault gone back to an older copy); until dismissed. */
  readonly notices: readonly string[];
  /**
   * Each job (or waiting delete) the vault's last lock stopped part-way, by kind and whether it had begun, for the
   * unlock screen to say so. No names: kept past the lock that clears the jobs' rows, until the vault is unlocked
   * or closed.
   */
  readonly stoppedByLock: readonly StoppedWork[];
  /**
   * The vault whose header backup the person locked it to restore (from the notice of a header older than the
   * data): its unlock screen asks for the backup file at once. Nothing decrypted: it outlives the lock it follows.
   */
  readonly headerRestoreAsked: string | null;
}

const EMPTY: Pick<
  CofferState,
  | 'folder'
  | 'entries'
  | 'listed'
  | 'selection'
  | 'jobs'
  | 'places'
  | 'jobsEnded'
  | 'addsCommitted'
  | 'notices'
> = {
  folder: '/',
  entries: [],
  listed: false,
  selection: new Set(),
  jobs: [],
  places: {},
  jobsEnded: 0,
  addsCommitted: 0,
  notices: [],
};

export const useCoffer = create<CofferState>()(() => ({
  vault: null,
  stoppedByLock: [],
  headerRestoreAsked: null,
  ...EMPTY,
}));

/**
 * Shows `vault` (null: the start screen). What its last lock stopped stays said only while the same vault is shown
 * locked: an unlock, another vault or the start screen forget it.
 */
export function showVault(vault: VaultSummary | null): void {
  useCoffer.setState(({ vault: shown, stoppedByLock }) => ({
    vault,
    stoppedByLock: vault !== null && vault.locked && vault.vaultId === shown?.vaultId ? stoppedByLock : [],
  }));
}

/** Shows what unlocking found (see {@link CofferState.notices}); cleared by lock like everything else. */
export function showNotices(notices: readonly string[]): void {
  useCoffer.setState({ notices });
}

/** Forgets every decrypted name and every job summary (on lock, on close). */
export function clearVaultContents(): void {
  useCoffer.setState({ ...EMPTY, selection: new Set() });
}

/**
 * The vault locked (by the user, idle, suspend…): its contents leave the window. `stoppedJobs` comes with the back
 * end's `locked` event; the window's own call after its lock request, which may come first, leaves it as it was.
 */
export function vaultLocked(vaultId: string, stoppedJobs?: readonly StoppedWork[]): void {
  const { vault } = useCoffer.getState();
  if (vault?.vaultId !== vaultId) return;
  clearVaultContents();
  useCoffer.setState(({ stoppedByLock }) => ({
    vault: { ...vault, locked: true, headerOlderThanData: false },
    stoppedByLock: stoppedJobs ?? stoppedByLock,
  }));
}

export function vaultClosed(vaultId: string): void {
  if (useCoffer.getState().vault?.vaultId !== vaultId) return;
  clearVaultContents();
  useCoffer.setState({ vault: null, stoppedByLock: [], headerRestoreAsked: null });
}

/** Notes that `vaultId`'s unlock screen is to ask for its header backup at once, or (null) that it has. */
export function askHeaderRestore(vaultId: string | null): void {
  useCoffer.setState({ headerRestoreAsked: vaultId });
}

export function showFolder(folder: string, entries: readonly VaultEntry[]): void {
  useCoffer.setState({ folder, entries, listed: true, selection: new Set() });
}

export function setSelection(selection: ReadonlySet<string>): void {
  useCoffer.setState({ selection });
}

function summarize(event: Extract<JobEvent, { type: 'ended' }>): string {
  if (event.status === 'cancelled') return stoppedJobSummary(event.kind, event.filesFinished);
  if (event.status === 'failed') return failedJobSummary(event.kind, event.message, event.filesFinished);
  const { result } = event;
  switch (result.kind) {
    case 'add': {
      const { filesAdded, replaced, skipped } = result.report;
      return (
        `Added ${plural(filesAdded, 'file')}` +
        (replaced > 0 ? ` (${replaced.toLocaleString()} replaced)` : '') +
        (skipped > 0 ? `; skipped ${plural(skipped, 'existing name')}` : '') +
        '.'
      );
    }
    case 'restore': {
      const kept = result.report.problems.filter((problem) => problem.kept === true).length;
      return (
        `Restored ${plural(result.report.filesRestored, 'file')}` +
        (kept > 0 ? `; kept ${plural(kept, 'file')} already there` : '') +
        '.'
      );
    }
    case 'verify':
      // As Vault details words its report.
      return result.report.ok
        ? `No damage found in ${plural(result.report.filesChecked, 'file')}.`
        : 'Damage found.';
    case 'reencrypt':
      return result.report.removedKeyIds.length > 0
        ? `Re-encrypted ${plural(result.report.filesReencrypted, 'file')} under key ${result.report.keyId}; older keys removed.`
        : `Re-encrypted ${plural(result.report.filesReencrypted, 'file')}; older keys kept because of damage.`;
  }
}

/** Folds one job event into the job list. */
export function jobEvent(event: JobEvent): void {
  if (event.vaultId !== useCoffer.getState().vault?.vaultId) return;
  if (event.type === 'committed') {
    // Not the job's row: its figures come with its progress.
    useCoffer.setState(({ addsCommitted }) => ({ addsCommitted: addsCommitted + 1 }));
    return;
  }
  useCoffer.setState(({ jobs, jobsEnded }) => {
    const current: JobView = jobs.find((job) => job.jobId === event.jobId) ?? {
      jobId: event.jobId,
      kind: event.kind,
      status: 'running',
      problems: [],
      startedAt: Date.now(),
    };
    let next: JobView = current;
    if (event.type === 'waiting') {
      next = { ...current, waiting: event.waiting };
      // Not a re-encryption's wait between batches: the bytes done before it took their time, and count.
      if (!event.waiting && (current.progress?.bytesDone ?? 0) === 0)
        next = { ...next, workStartedAt: Date.now() };
    } else if (event.type === 'progress') {
      const now = Date.now();
      next = { ...current, progress: event.progress, progressAt: now };
      if (event.progress.bytesDone === 0) next = { ...next, workStartedAt: now };
    } else if (event.type === 'problem')
      next = { ...current, problems: [...current.problems, event.problem] };
    else if (event.type === 'ended') {
      next = { ...current, status: event.status, summary: summarize(event), endedAt: Date.now() };
      if (event.status === 'done' && event.result.kind === 'verify')
        next = { ...next, verifyReport: event.result.report };
    }
    // Kept in the order the jobs started, so rows do not jump as events arrive.
    return {
      jobsEnded: event.type === 'ended' ? jobsEnded + 1 : jobsEnded,
      jobs: jobs.some((job) => job.jobId === event.jobId)
        ? jobs.map((job) => (job.jobId === event.jobId ? next : job))
        : [...jobs, next],
    };
  });
}

/** Notes where a job this window started puts its files ({@link CofferState.places}); nothing once the vault locked. */
export function placeJob(vaultId: string, jobId: string, place: JobPlace): void {
  useCoffer.setState(({ vault, places }) =>
    vault?.vaultId === vaultId && !vault.locked ? { places: { ...places, [jobId]: place } } : {},
  );
}

/**
 * Follows vault folders renamed or moved (with what is in them) in where the jobs put their files: an add goes on
 * into its folder wherever that went. Of a folder and one inside it moved together, each place follows the deepest
 * that held it.
 */
export function followMovedFolders(moves: readonly { readonly from: string; readonly to: string }[]): void {
  const deepestFirst = [...moves].sort((a, b) => b.from.length - a.from.length);
  const followed = (place: JobPlace): JobPlace => {
    if (!('into' in place)) return place;
    const move = deepestFirst.find(({ from }) => isWithin(place.into, from));
    return move ? { into: movedPath(place.into, move.from, move.to) } : place;
  };
  useCoffer.setState(({ places }) =>
    Object.values(places).some((place) => followed(place) !== place)
      ? {
          places: Object.fromEntries(
            Object.entries(places).map(([jobId, place]) => [jobId, followed(place)]),
          ),
        }
      : {},
  );
}

/** Takes `gone` off the panel, with where they put their files. */
function dismiss(gone: (job: JobView) => boolean): void {
  useCoffer.setState(({ jobs, places }) => {
    const goneIds = new Set(jobs.filter(gone).map((job) => job.jobId));
    return {
      jobs: jobs.filter((job) => !goneIds.has(job.jobId)),
      places: Object.fromEntries(Object.entries(places).filter(([jobId]) => !goneIds.has(jobId))),
    };
  });
}

export function dismissJob(jobId: string): void {
  dismiss((job) => job.jobId === jobId);
}

/** Takes every ended job off the panel, the running ones staying. */
export function dismissEndedJobs(): void {
  dismiss((job) => job.status !== 'running');
}
