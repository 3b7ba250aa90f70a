/**
 * Builds the desktop bundles (electron-vite, into out/) and checks what each may contain: the renderer and the
 * preload nothing of Node's file system, better-sqlite3 or libsodium; the renderer's first script nothing of pdf.js,
 * which loads only with a PDF preview; the preload nothing but 'electron'; and main with the crypto worker beside
 * the module that starts it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

const OUT = join(process.cwd(), 'out');

function filesUnder(dir: string, extension: RegExp): { path: string; text: string }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && extension.test(entry.name))
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      return { path, text: readFileSync(path, 'utf8') };
    });
}

/**
 * Every module a bundle loads: static and dynamic imports, re-exports and require() calls. Two look-alikes are not:
 * the word in a string (`["import","remerge"]` in pdf.js's worker), and a template's placeholder
 * (`import("${url}")` in pdf.js's wrapper for a worker of another origin, which the app never uses: its worker is
 * its own file).
 */
function specifiers(text: string): string[] {
  const found: string[] = [];
  // Not after a word, a dot or a quote: a keyword, not part of a name or of a string.
  const patterns = [
    /(?<![\w$."'`])import\s*(?:[\w*{}\s,$]+from\s*)?["']([^"']+)["']/g,
    /(?<![\w$."'`])export\s*[\w*{}\s,$]+from\s*["']([^"']+)["']/g,
    /(?<![\w$."'`])import\s*\(\s*["']([^"']+)["']\s*\)/g,
    /(?<![\w$."'`])require\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.push(match[1] ?? '');
  return found.filter((specifier) => !/^\$\{\w+\}$/.test(specifier));
}

/** Code that would only be there if the engine or a native binding were bundled. */
const ENGINE_MARKERS = [
  'better_sqlite3',
  'better-sqlite3',
  'sodium_malloc',
  'sodium-native',
  'crypto_aead_',
  'node:fs',
];

beforeAll(() => {
  execFileSync(
    process.execPath,
    [join('node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'],
    {
      stdio: 'pipe',
    },
  );
}, 300_000);

describe('the built bundles', () => {
  it('renderer: only its own relative modules, and nothing of the engine or Node', () => {
    const scripts = filesUnder(join(OUT, 'renderer'), /\.m?js$/);
    expect(scripts.length).toBeGreaterThan(0);
    for (const { path, text } of scripts) {
      for (const specifier of specifiers(text)) expect(specifier, path).toMatch(/^\.{1,2}\//);
      for (const marker of ENGINE_MARKERS) expect(text.includes(marker), `${marker} in ${path}`).toBe(false);
    }
  });

  it('renderer: pdf.js and its worker are files of their own, not in the script the page starts with', () => {
    const index = readFileSync(join(OUT, 'renderer', 'index.html'), 'utf8');
    const entry = /<script type="module"[^>]*src="\.\/(assets\/[^"]+\.js)"/.exec(index)?.[1];
    expect(entry).toBeDefined();
    const first = readFileSync(join(OUT, 'renderer', entry ?? ''), 'utf8');
    expect(first).not.toContain('PDFWorker');
    expect(first).not.toContain('pdf.worker');
    const assets = readdirSync(join(OUT, 'renderer', 'assets'));
    expect(assets.filter((name) => /^pdf\.worker\.min-[\w-]+\.mjs$/.test(name))).toHaveLength(1);
  });

  it('preload: one self-contained file that requires only electron', () => {
    const files = filesUnder(join(OUT, 'preload'), /\.c?js$/);
    expect(files.map(({ path }) => path)).toEqual([join(OUT, 'preload', 'index.cjs')]);
    const [preload] = files;
    expect(new Set(specifiers(preload?.text ?? ''))).toEqual(new Set(['electron']));
    for (const marker of ENGINE_MARKERS) expect(preload?.text.includes(marker), marker).toBe(false);
  });

  it('main: the crypto worker sits beside the module that holds the pool', () => {
    const main = readFileSync(join(OUT, 'main', 'index.js'), 'utf8');
    expect(existsSync(join(OUT, 'main', 'crypto-worker.js'))).toBe(true);
    expect(main).toContain('crypto-worker');
    // The window's hardening is in what ships, not only in the source.
    expect(main).toMatch(/sandbox:\s*true/);
    expect(main).toMatch(/contextIsolation:\s*true/);
    expect(main).toMatch(/nodeIntegration:\s*false/);
  });
});
