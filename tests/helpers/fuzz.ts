import { fc } from '@fast-check/vitest';
import { expect } from 'vitest';

import { CofferError } from '../../src/core/errors.js';

/** The fast-check parameters these tests set. */
export interface FuzzOptions {
  readonly numRuns: number;
  readonly seed?: number;
  readonly path?: string;
}

/**
 * Runs per property: `default` in CI, or COFFER_FUZZ_RUNS for a longer hunt. COFFER_FUZZ_SEED (and
 * COFFER_FUZZ_PATH) replay the seed (and shrink path) a failure printed.
 */
export function fuzzOptions(defaultRuns: number): FuzzOptions {
  const runs = Number(process.env.COFFER_FUZZ_RUNS);
  const seed = Number(process.env.COFFER_FUZZ_SEED);
  const path = process.env.COFFER_FUZZ_PATH;
  return {
    numRuns: Number.isInteger(runs) && runs > 0 ? runs : defaultRuns,
    ...(Number.isInteger(seed) ? { seed } : {}),
    ...(path ? { path } : {}),
  };
}

/**
 * A test timeout for a property of `defaultRuns` that takes up to `msPerRun` a run, scaled to COFFER_FUZZ_RUNS,
 * with room for shrinking a failure.
 */
export function fuzzTimeout(defaultRuns: number, msPerRun: number): number {
  return Math.max(60_000, 3 * fuzzOptions(defaultRuns).numRuns * msPerRun);
}

/** Values a hostile writer puts in a length, count or id field: empty, one, signed and unsigned limits. */
export const EXTREME_U32 = [0, 1, 0x7f, 0x80, 0xff, 0xffff, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 2, 2 ** 32 - 1];

/**
 * One edit of a byte string. Offsets are drawn as naturals and taken modulo the input's length, so one arbitrary
 * fits inputs of any size.
 */
export type Mutation =
  | { readonly kind: 'flip'; readonly at: number; readonly mask: number }
  | { readonly kind: 'set'; readonly at: number; readonly value: number }
  | { readonly kind: 'truncate'; readonly at: number }
  | { readonly kind: 'append'; readonly bytes: Uint8Array }
  | { readonly kind: 'splice'; readonly at: number; readonly remove: number; readonly bytes: Uint8Array }
  | { readonly kind: 'u32'; readonly at: number; readonly value: number }
  | { readonly kind: 'u16'; readonly at: number; readonly value: number };

/** Mostly anywhere; often in the first 256 bytes, where headers, counts and lengths are. */
const offset = fc.oneof(fc.nat(), fc.nat({ max: 255 }));

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip'), at: offset, mask: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant('set'), at: offset, value: fc.constantFrom(0, 0x7f, 0x80, 0xff) }),
  fc.record({ kind: fc.constant('truncate'), at: offset }),
  fc.record({ kind: fc.constant('append'), bytes: fc.uint8Array({ minLength: 1, maxLength: 64 }) }),
  fc.record({
    kind: fc.constant('splice'),
    at: offset,
    remove: fc.nat({ max: 64 }),
    bytes: fc.uint8Array({ maxLength: 64 }),
  }),
  fc.record({ kind: fc.constant('u32'), at: offset, value: fc.constantFrom(...EXTREME_U32) }),
  fc.record({ kind: fc.constant('u16'), at: offset, value: fc.constantFrom(0, 1, 0x7fff, 0xffff) }),
);

/** One to three edits, applied in order. */
export const mutations: fc.Arbitrary<Mutation[]> = fc.array(mutation, { minLength: 1, maxLength: 3 });

/** A copy of `input` with `edits` applied; `input` is left alone. */
export function mutate(input: Uint8Array, edits: readonly Mutation[]): Buffer {
  let out = Buffer.from(input);
  for (const edit of edits) {
    const at = 'at' in edit ? edit.at % (out.length + 1) : 0;
    switch (edit.kind) {
      case 'flip':
      case 'set':
        if (at < out.length) out[at] = edit.kind === 'flip' ? (out[at] ?? 0) ^ edit.mask : edit.value;
        break;
      case 'truncate':
        out = out.subarray(0, at);
        break;
      case 'append':
        out = Buffer.concat([out, edit.bytes]);
        break;
      case 'splice':
        out = Buffer.concat([out.subarray(0, at), edit.bytes, out.subarray(at + edit.remove)]);
        break;
      case 'u32':
      case 'u16': {
        const width = edit.kind === 'u32' ? 4 : 2;
        if (at + width <= out.length) out.writeUIntLE(edit.value, at, width);
        break;
      }
    }
  }
  return Buffer.from(out);
}

/** An engine error class a parser may throw for damaged input. */
export type TypedError = abstract new (...args: never[]) => CofferError;

/**
 * What a parser did with damaged input: returned a value, or threw. Throwing anything but one of `allowed` (a
 * TypeError, a RangeError, an engine error of another kind) fails the test with what was thrown.
 */
export function outcomeOf<T>(parse: () => T, allowed: readonly TypedError[]): { value: T } | undefined {
  try {
    return { value: parse() };
  } catch (error) {
    expectTyped(error, allowed);
    return undefined;
  }
}

/** The same as {@link outcomeOf} for a parser that returns a promise. */
export async function asyncOutcomeOf<T>(
  parse: () => Promise<T>,
  allowed: readonly TypedError[],
): Promise<{ value: T } | undefined> {
  try {
    return { value: await parse() };
  } catch (error) {
    expectTyped(error, allowed);
    return undefined;
  }
}

function expectTyped(error: unknown, allowed: readonly TypedError[]): void {
  if (!allowed.some((type) => error instanceof type)) {
    expect.fail(
      `untyped or unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
  }
}
