import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts', 'tests/**/*.test.tsx'],
    // Argon2id at the format's floor needs 64 MiB and ~0.1-0.3 s per derivation; keep the suite single-file-parallel.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Builds dist/ once per run for the CLI tests, which run bin/coffer.js; see tests/cli/global-setup.ts.
    globalSetup: ['tests/cli/global-setup.ts'],
  },
});
