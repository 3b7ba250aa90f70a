/**
 * A stand-in for `window.coffer` (the preload's bridge, or the preview's) that answers from the test's handlers,
 * so a component test drives the real `api.ts` and error words without a back end.
 */
import type {
  Channel,
  CofferApi,
  EventName,
  EventPayloads,
  RequestOf,
  ResponseOf,
  Result,
  ResultErrorCode,
} from '../../src/shared/contract.js';

/** Makes a handler answer with an error, as the back end sends one. */
export class Refusal {
  constructor(
    readonly code: ResultErrorCode,
    readonly message = `refused: ${code}`,
  ) {}
}

export type Handlers = {
  readonly [C in Channel]?: (
    request: RequestOf<C>,
  ) => ResponseOf<C> | Refusal | Promise<ResponseOf<C> | Refusal>;
};

export interface FakeApi extends CofferApi {
  /** Every request the window sent, in order. */
  readonly calls: { readonly channel: Channel; readonly request: unknown }[];
  /** Pushes a back-end event to the window's listeners. */
  emit<E extends EventName>(event: E, payload: EventPayloads[E]): void;
}

/**
 * A fake API. A channel without a handler fails the test's request loudly (INTERNAL), so a component that asks
 * for something the test did not expect shows the window's words for a bug rather than passing quietly.
 */
export function fakeApi(handlers: Handlers): FakeApi {
  const calls: { channel: Channel; request: unknown }[] = [];
  const listeners = new Map<EventName, Set<(payload: never) => void>>();
  return {
    calls,
    async invoke<C extends Channel>(channel: C, request: RequestOf<C>): Promise<Result<ResponseOf<C>>> {
      calls.push({ channel, request });
      const handler = handlers[channel];
      if (handler === undefined) return { ok: false, code: 'INTERNAL', message: `no handler for ${channel}` };
      const answer = await handler(request);
      return answer instanceof Refusal
        ? { ok: false, code: answer.code, message: answer.message }
        : { ok: true, value: answer };
    },
    on(event, listener) {
      const set = listeners.get(event) ?? new Set();
      listeners.set(event, set);
      set.add(listener);
      return () => set.delete(listener);
    },
    emit(event, payload) {
      for (const listener of listeners.get(event) ?? []) (listener as (payload: unknown) => void)(payload);
    },
    registerDroppedFiles(files) {
      return Promise.resolve({ ok: true, value: { handle: 'dropped-1', count: files.length } });
    },
  };
}
