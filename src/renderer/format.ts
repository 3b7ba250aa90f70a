/** Human sizes with one decimal (3.1 MB), decimal units as file managers show them. */
export function formatSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 999.95 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit] ?? 'TB'}`;
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** A date in the user's locale. */
export function formatDate(milliseconds: number): string {
  return dateFormat.format(new Date(milliseconds));
}

/** The parent of a vault path ("/a/b" → "/a"). */
export function parentOf(path: string): string {
  const cut = path.lastIndexOf('/');
  return cut <= 0 ? '/' : path.slice(0, cut);
}

/** The last name of `path` ("/Reports/q1.pdf" → "q1.pdf"); "" for the root. */
export function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The folders from the root to `path`, for a breadcrumb. */
export function crumbs(path: string): { name: string; path: string }[] {
  const parts = path.split('/').filter((part) => part !== '');
  return parts.map((name, index) => ({ name, path: `/${parts.slice(0, index + 1).join('/')}` }));
}

/** A short duration for people: "0.4 s", "3 s", "2 min". */
export function formatDuration(milliseconds: number): string {
  if (milliseconds < 950) return `${(Math.max(milliseconds, 100) / 1000).toFixed(1)} s`;
  const seconds = Math.round(milliseconds / 1000);
  if (seconds < 60) return `${seconds} s`;
  return `${Math.round(seconds / 60)} min`;
}
