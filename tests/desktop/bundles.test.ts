/**
 * Builds the desktop bundles (electron-vite, into out/) and checks what each may contain: the renderer and the
 * preload nothing of Node's file system, better-sqlite3 or libsodium; the preload nothing but 'electron'; and
 * main with the crypto worker beside the module that starts it.
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

/** Every module a bundle loads: static and dynamic imports, re-exports and require() calls. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\bimport\s*(?:[\w*{}\s,$]+from\s*)?["']([^"']+)["']/g,
    /\bexport\s*[\w*{}\s,$]+from\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
    /\brequire\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.push(match[1] ?? '');
  return found;
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
