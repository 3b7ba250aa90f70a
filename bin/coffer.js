#!/usr/bin/env node
// The installed `coffer` command. The CLI is compiled to dist/ by `npm run build` (which `npm ci` runs through
// `prepare`); importing dist/cli/run.js runs main() on this process and sets process.exitCode. The wiring lives
// in TypeScript, not here, so it is type-checked: this file is JavaScript, and TypeScript cannot see the types
// of a compiled module through a relative import of dist/.
import '../dist/cli/run.js';
