/**
 * A signal bounded in time that lets go of everything once the work it guards is over.
 * `AbortSignal.any([parent, AbortSignal.timeout(ms)])` keeps its timer, the composite signal and
 * every listener on it alive until the timeout fires, however early the work ended: at hundreds of
 * upstream checks a second that is tens of thousands of live objects (bench/relay.js, G127).
 * Here `release()` clears the timer and the listener on the parent at once.
 */
export interface Deadline {
  signal: AbortSignal;
  /** Clears the timer and the link to the parent; call it when the work is over. */
  release(): void;
}

/** A signal that aborts with the parent's reason, or with `onTimeout()` after `ms`. */
export function deadline(
  parent: AbortSignal,
  ms: number,
  onTimeout: () => unknown = () => new DOMException('The operation timed out.', 'TimeoutError'),
): Deadline {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(parent.reason);
  if (parent.aborted) onAbort();
  else parent.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => controller.abort(onTimeout()), ms);
  return {
    signal: controller.signal,
    release: () => {
      clearTimeout(timer);
      parent.removeEventListener('abort', onAbort);
    },
  };
}

/** A promise that rejects with the signal's reason when it aborts; `release()` drops its listener. */
export function abortRace(signal: AbortSignal): { promise: Promise<never>; release(): void } {
  let onAbort: (() => void) | undefined;
  const promise = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else {
      onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    }
  });
  promise.catch(() => undefined);
  return {
    promise,
    release: () => {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * `work`, or a rejection with `onTimeout()` once `ms` passed without its answer (the work itself
 * goes on; its outcome is then ignored). The timer is cleared as soon as either comes first.
 */
export function within<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  work.catch(() => undefined);
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
