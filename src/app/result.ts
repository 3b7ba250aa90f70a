import { CofferError } from '../core/errors.js';
import type { Result, ResultErrorCode } from '../shared/contract.js';

/** An error of the app layer whose code the engine does not have (NOT_SUPPORTED). */
export class AppError extends Error {
  readonly code: ResultErrorCode;

  constructor(code: ResultErrorCode, message: string) {
    super(message);
    this.name = 'AppError';
    this.code = code;
  }
}

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export type Failure = Extract<Result<never>, { ok: false }>;

export function fail(code: ResultErrorCode, message: string): Failure {
  return { ok: false, code, message };
}

/**
 * What an error thrown by a handler becomes on the wire: the engine's code and message (written for the user), or
 * INTERNAL for anything else, which is a bug. Its details go to the host's log, never a request's payload.
 */
export function errorResult(error: unknown): Failure {
  if (error instanceof CofferError || error instanceof AppError) return fail(error.code, error.message);
  console.error('coffer: unexpected error in a request handler:', error);
  return fail(
    'INTERNAL',
    'Something unexpected went wrong inside Coffer (a bug). Nothing was changed by this request; try again, and report it if it keeps happening.',
  );
}
