/** Which files the window can preview, and how, by their name's extension. */

/** How much of a text file is shown: the first MiB. */
export const TEXT_PREVIEW_BYTES = 1024 * 1024;

const IMAGE_TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  bmp: 'image/bmp',
  avif: 'image/avif',
  ico: 'image/x-icon',
};

const AUDIO_TYPES: Readonly<Record<string, string>> = {
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  aac: 'audio/aac',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  opus: 'audio/ogg',
  flac: 'audio/flac',
};

const VIDEO_TYPES: Readonly<Record<string, string>> = {
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  webm: 'video/webm',
  ogv: 'video/ogg',
  mov: 'video/quicktime',
};

const TEXT_EXTENSIONS = new Set(
  (
    'txt md markdown csv tsv log json jsonc yaml yml toml ini cfg conf xml html htm css scss js mjs cjs ts tsx ' +
    'jsx py rb go rs java kt c h cc cpp hpp cs php sh bash zsh fish ps1 sql swift lua pl r tex rst srt vtt ' +
    'env gitignore dockerfile makefile'
  ).split(' '),
);

export type PreviewKind =
  { readonly kind: 'image' | 'audio' | 'video' | 'pdf'; readonly type: string } | { readonly kind: 'text' };

/** How to preview a file named `name`, or undefined when the window cannot show it. */
export function previewKind(name: string): PreviewKind | undefined {
  const dot = name.lastIndexOf('.');
  const extension = (dot < 0 ? name : name.slice(dot + 1)).toLowerCase();
  const image = IMAGE_TYPES[extension];
  if (image !== undefined) return { kind: 'image', type: image };
  const audio = AUDIO_TYPES[extension];
  if (audio !== undefined) return { kind: 'audio', type: audio };
  const video = VIDEO_TYPES[extension];
  if (video !== undefined) return { kind: 'video', type: video };
  if (extension === 'pdf') return { kind: 'pdf', type: 'application/pdf' };
  if (TEXT_EXTENSIONS.has(extension)) return { kind: 'text' };
  return undefined;
}
