import { checkName, MAX_NAME_BYTES } from '../names.js';

/** " (2)" at the end of a stem: a name that is itself a numbered copy counts on from its number. */
const NUMBER_SUFFIX = / \((\d+)\)$/;

/** Longer "extensions" are part of the name ("notes.from the meeting"), so the number goes at the end. */
const MAX_EXTENSION_LENGTH = 16;

function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function split(name: string): { stem: string; extension: string } {
  const dot = name.lastIndexOf('.');
  if (dot <= 0 || name.length - dot > MAX_EXTENSION_LENGTH) return { stem: name, extension: '' };
  return { stem: name.slice(0, dot), extension: name.slice(dot) };
}

/**
 * The name of copy `n` of `name`, as file managers number them: "report.pdf" → "report (2).pdf", ".bashrc" →
 * ".bashrc (2)", "Photos" → "Photos (2)". The stem is shortened (by whole code points) when the result would
 * exceed the 255-byte limit.
 * @throws {@link InvalidNameError} only if the result breaks a name rule, which a valid `name` cannot produce.
 */
export function numberedName(name: string, n: number): string {
  const { stem: own, extension } = split(name);
  let stem = own.replace(NUMBER_SUFFIX, '');
  const tail = ` (${n})${extension}`;
  const room = MAX_NAME_BYTES - utf8Length(tail);
  if (utf8Length(stem) > room) {
    const points = Array.from(stem);
    while (points.length > 0 && utf8Length(points.join('')) > room) points.pop();
    stem = points.join('');
  }
  return checkName(stem + tail);
}

/**
 * The first numbered name of `name`, from its own number on (or 2), that `isTaken` (compares ignoring case)
 * does not refuse.
 */
export function freeNumberedName(name: string, isTaken: (candidate: string) => boolean): string {
  const own = NUMBER_SUFFIX.exec(split(name).stem);
  for (let n = own ? Number(own[1]) + 1 : 2; ; n++) {
    const candidate = numberedName(name, n);
    if (!isTaken(candidate)) return candidate;
  }
}
