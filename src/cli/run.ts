/**
 * The installed command's entry point (imported by bin/coffer.js): runs {@link main} on the real process.
 */
import { main, processIo } from './main.js';

const code = await main(process.argv.slice(2), processIo());
process.exitCode = code;
