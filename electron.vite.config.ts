/**
 * Builds the three bundles of the desktop app into out/: main (ESM, with the crypto worker beside it), preload
 * (CommonJS, self-contained: a sandboxed preload can only require 'electron') and the React renderer.
 *
 * electron-vite rather than three plain Vite configs: it knows the three targets (Node for main, the sandboxed
 * preload, Chromium for the renderer), externalises main's dependencies so the native addons load from
 * node_modules, and the renderer is still ordinary Vite, so the preview server serves the very same out/renderer.
 */
import { resolve } from 'node:path';

import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';

const root = import.meta.dirname;

export default defineConfig({
  main: {
    build: {
      outDir: resolve(root, 'out/main'),
      sourcemap: true,
      rolldownOptions: {
        // The crypto pool starts its worker from beside the module that holds the pool (src/core/worker-spawn.ts),
        // so the worker is an entry of its own in out/main/. A test checks the pool landed in out/main/index.js.
        input: {
          index: resolve(root, 'electron/main/index.ts'),
          'crypto-worker': resolve(root, 'src/core/crypto/crypto-worker.ts'),
        },
      },
    },
  },
  preload: {
    build: {
      outDir: resolve(root, 'out/preload'),
      externalizeDeps: false,
      rolldownOptions: {
        input: { index: resolve(root, 'electron/preload/index.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(root, 'src/renderer'),
    base: './',
    plugins: [react()],
    build: {
      outDir: resolve(root, 'out/renderer'),
      // Served from app://coffer/ and the preview server alike; no inline scripts or styles, for the CSP.
      assetsInlineLimit: 0,
      minify: true,
      rolldownOptions: { input: resolve(root, 'src/renderer/index.html') },
    },
  },
});
