/**
 * The installed command's entry point (imported by bin/coffer.js): runs {@link main} on the real process. Only the
 * exit code is set, never `process.exit()`, so output still being written to a pipe is not cut off.
 */
import { main, processIo } from './main.js';

process.exitCode = await main(process.argv.slice(2), processIo());
