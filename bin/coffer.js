#!/usr/bin/env node
// The installed `coffer` command. `npm run build` (which `npm ci` runs through `prepare`) bundles the CLI into
// dist/bundle/ (scripts/bundle.ts); importing it runs main() on this process and sets process.exitCode. The
// wiring lives in TypeScript, not here, so it is type-checked: this file is JavaScript, and TypeScript cannot see
// the types of a compiled module through a relative import of dist/.
import '../dist/bundle/coffer.js';
