import { getRandomValues } from 'node:crypto';

import { isAscii, nameKey } from '../../shared/name-key.js';

/**
 * Odd multipliers drawn once per process: hashes that whoever writes a snapshot cannot predict, so no set of ids or
 * names can be chosen to make every lookup collide (a table that degrades to a list would make an unlock quadratic).
 */
const MULTIPLIERS = Array.from(getRandomValues(new Uint32Array(5)), (word) => word | 1);
/** Where a name's hash starts, with the folder mixed in: random too, so no folder (position 0 gave 0) starts known. */
const NAME_SEED = getRandomValues(new Uint32Array(1))[0] as number;

function nameHashStart(parent: number): number {
  return finish(Math.imul(parent, MULTIPLIERS[4] as number) ^ NAME_SEED);
}

/** Spreads a 32-bit value's bits over the whole word (murmur3's finaliser). */
function finish(hash: number): number {
  let h = hash ^ (hash >>> 16);
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** A hash of the 16 bytes at `at`. */
export function hashId(view: DataView, at: number): number {
  let h = 0;
  for (let word = 0; word < 4; word++)
    h = (h + Math.imul(view.getUint32(at + word * 4, true), MULTIPLIERS[word] as number)) | 0;
  return finish(h);
}

/**
 * A hash of `parent` and the key under which `name` clashes in a folder ({@link nameKey}); equal keys hash alike.
 * An ASCII name's key is its lower case, hashed from the name itself with A-Z lowered on the way rather than built
 * (an unlock hashes every name); lowering changes nothing in any other key, which {@link nameKey} made lower case.
 */
export function hashNameKey(parent: number, name: string): number {
  const key = isAscii(name) ? name : nameKey(name);
  let h = nameHashStart(parent);
  for (let i = 0; i < key.length; i++) {
    const unit = key.charCodeAt(i);
    h = Math.imul(h ^ (unit >= 0x41 && unit <= 0x5a ? unit + 0x20 : unit), 0x01000193);
  }
  return finish(h);
}

/**
 * Whether two of items 0 … count-1 are the same, by a 32-bit `hash` of each and `same` for those whose hashes are
 * equal: an open-addressing table of item numbers in a typed array, which for 100,000 items costs a few
 * milliseconds where a `Set` of strings built for the purpose costs tens.
 */
export function hasDuplicate(
  count: number,
  hash: (item: number) => number,
  same: (a: number, b: number) => boolean,
): boolean {
  const mask = 2 ** Math.ceil(Math.log2(2 * count + 2)) - 1;
  const slots = new Int32Array(mask + 1).fill(-1);
  const hashes = new Int32Array(count);
  for (let item = 0; item < count; item++) {
    const h = hash(item);
    hashes[item] = h;
    let slot = h & mask;
    for (let other = slots[slot] as number; other !== -1; other = slots[slot] as number) {
      if (hashes[other] === h && same(item, other)) return true;
      slot = (slot + 1) & mask;
    }
    slots[slot] = item;
  }
  return false;
}
