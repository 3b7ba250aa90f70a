import type { CommandName } from '../args.js';
import type { Context } from '../context.js';
import { add } from './add.js';
import { info } from './info.js';
import { init } from './init.js';
import { header, keys, passwd, recoveryKey } from './keys.js';
import { log } from './log.js';
import { ls } from './ls.js';
import { mkdir, mv, rm } from './organize.js';
import { restore } from './restore.js';
import { rotate } from './rotate.js';
import { verify } from './verify.js';

/** The handler of each command; each returns the exit code. */
export const HANDLERS: Readonly<Record<CommandName, (ctx: Context) => Promise<number>>> = {
  init,
  add,
  ls,
  restore,
  mkdir,
  mv,
  rm,
  verify,
  info,
  passwd,
  keys,
  'recovery-key': recoveryKey,
  header,
  log,
  rotate,
};
