import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/**
 * The contract and the browser bridge run in the renderer (and the preload): they must pull in nothing of Node,
 * the index database or libsodium, directly or through another module.
 */
const BROWSER_MODULES = ['src/shared/contract.ts', 'src/preview/bridge.ts'];

describe('browser-side modules', () => {
  for (const entry of BROWSER_MODULES) {
    it(`${entry} imports nothing of node:*, better-sqlite3 or sodium`, async () => {
      const result = await build({
        entryPoints: [entry],
        bundle: true,
        write: false,
        platform: 'browser',
        format: 'esm',
        metafile: true,
        logLevel: 'silent',
      });
      const inputs = Object.keys(result.metafile.inputs);
      const imports = Object.values(result.metafile.inputs).flatMap((input) =>
        input.imports.map((each) => each.path),
      );
      expect(inputs.some((path) => path.endsWith(entry))).toBe(true);
      for (const path of [...inputs, ...imports]) {
        expect(path).not.toMatch(/^node:|better-sqlite3|sodium/);
        // Engine modules hold Node code; only erased type imports may point there.
        expect(path).not.toMatch(/src\/core\/(?!types\.ts$)/);
      }
    });
  }

  it('would notice a Node import (the check is not vacuous)', async () => {
    await expect(
      build({
        stdin: {
          contents: "import { readFileSync } from 'node:fs'; console.log(readFileSync);",
          loader: 'ts',
        },
        bundle: true,
        write: false,
        platform: 'browser',
        logLevel: 'silent',
      }),
    ).rejects.toThrow();
  });
});
