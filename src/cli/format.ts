const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'] as const;

/** A byte count for people: "0 B", "512 B", "1.5 KiB", "23 MiB" (binary units, at most three digits). */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const text =
    unit === 0 || value >= 100 ? Math.round(value).toString() : value.toFixed(1).replace(/\.0$/u, '');
  // Rounding 1023.96 KiB up prints "1024 KiB"; say "1 MiB" instead.
  if (text === '1024' && unit < UNITS.length - 1) return `1 ${UNITS[unit + 1] ?? ''}`;
  return `${text} ${UNITS[unit] ?? ''}`;
}

/** A duration for an ETA: "0:07", "12:30", "3:04:05". */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const seconds = total % 60;
  const minutes = Math.floor(total / 60) % 60;
  const hours = Math.floor(total / 3600);
  const ss = seconds.toString().padStart(2, '0');
  return hours > 0 ? `${hours}:${minutes.toString().padStart(2, '0')}:${ss}` : `${minutes}:${ss}`;
}

/** A local date and time to the minute, sortable: "2024-05-01 13:45". */
export function formatDate(ms: number): string {
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return '????-??-?? ??:??';
  const pad = (n: number): string => n.toString().padStart(2, '0');
  return (
    `${date.getFullYear().toString().padStart(4, '0')}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}`
  );
}

// C0/C1 controls, format characters (bidi overrides, zero-width) and line separators. Names in a vault may
// contain some of them (C1 and format characters are legal in names); printed raw they could move the cursor,
// recolour the terminal or disguise a name.
const UNSAFE_FOR_TERMINAL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/** Text as it can safely be written to a terminal: invisible and control characters spelled out as `<U+XXXX>`. */
export function terminalSafe(text: string): string {
  return text.replace(
    UNSAFE_FOR_TERMINAL,
    (ch) => `<U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}>`,
  );
}

/**
 * JSON text with the same characters as {@link terminalSafe} written as `\\uXXXX` escapes: a script parses the
 * same values, and a terminal shows no raw control or bidi character. (JSON.stringify escapes only C0 controls.)
 */
export function terminalSafeJson(value: unknown): string {
  // Raw line feeds are the indentation's own; inside strings JSON.stringify has already escaped them.
  return JSON.stringify(value, null, 2).replace(UNSAFE_FOR_TERMINAL, (ch) =>
    ch === '\n'
      ? ch
      : Array.from(
          { length: ch.length },
          (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`,
        ).join(''),
  );
}

/** One line for an error or warning: engine messages are single sentences, but a cause's text may not be. */
export function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/gu, ' ').trim();
}

/** Shortens text to `width` columns, keeping its end (the file name) and marking the cut with "…". */
export function truncateStart(text: string, width: number): string {
  const chars = Array.from(text);
  if (chars.length <= width) return text;
  if (width <= 1) return '…'.slice(0, width);
  return `…${chars.slice(chars.length - (width - 1)).join('')}`;
}
