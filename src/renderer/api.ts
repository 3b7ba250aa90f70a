/**
 * The renderer's one way to the back end: `window.coffer` (the preload's in Electron, the HTTP bridge in the
 * preview). Every call either returns the value or throws an {@link ApiError} whose message is written for people.
 */
import type { Channel, CofferApi, RequestOf, ResponseOf, ResultErrorCode } from '../shared/contract.js';
import { errorSentence, type SpecificErrorWords } from './error-messages.js';

declare global {
  interface Window {
    coffer?: CofferApi;
  }
}

let installed: CofferApi | undefined;

/** Sets the API the app talks to (at start-up, from the host). */
export function installApi(api: CofferApi): void {
  installed = api;
}

function api(): CofferApi {
  if (installed === undefined) throw new Error('The Coffer API is not installed.');
  return installed;
}

/** A failed request: `message` is meant for the user, `code` for the program. */
export class ApiError extends Error {
  readonly code: ResultErrorCode;
  constructor(code: ResultErrorCode, message: string) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
  }
}

/**
 * Sends one request.
 * @throws {@link ApiError} when the back end answers with an error.
 */
export async function call<C extends Channel>(channel: C, request: RequestOf<C>): Promise<ResponseOf<C>> {
  const result = await api().invoke(channel, request);
  if (!result.ok) throw new ApiError(result.code, result.message);
  return result.value;
}

/**
 * Registers dropped files with the back end and returns the handle an add job takes.
 * @throws {@link ApiError} when the files cannot be registered.
 */
export async function registerDroppedFiles(
  files: readonly File[],
): Promise<{ handle: string; count: number }> {
  const result = await api().registerDroppedFiles(files);
  if (!result.ok) throw new ApiError(result.code, result.message);
  return result.value;
}

/** Subscribes to a back-end event; returns the unsubscribe function. */
export const onEvent: CofferApi['on'] = (event, listener) => api().on(event, listener);

/**
 * The words to show for any error: what happened and what to do, chosen by its code (error-messages.ts), from
 * `specific` where the request gives the code a more specific meaning. Never a stack or an exception's own text:
 * anything that is not an ApiError is a bug of the window, said as such.
 */
export function describeError(error: unknown, specific?: SpecificErrorWords): string {
  return errorSentence(error instanceof ApiError ? error.code : 'INTERNAL', specific);
}
