/**
 * A FIFO concurrency limiter: `run(fn)` starts `fn` once fewer than `limit` calls are running. A call
 * whose signal aborts while it waits leaves the queue and rejects with the signal's reason.
 */
export interface Limiter {
  run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  readonly active: number;
  readonly queued: number;
}

export function createLimiter(limit: number): Limiter {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  let active = 0;
  const waiters: Array<() => void> = [];

  const acquire = (signal: AbortSignal | undefined): Promise<void> => {
    signal?.throwIfAborted();
    if (active < limit && waiters.length === 0) {
      active++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        active++;
        resolve();
      };
      const onAbort = (): void => {
        const i = waiters.indexOf(grant);
        if (i >= 0) waiters.splice(i, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      waiters.push(grant);
    });
  };

  return {
    async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      await acquire(signal);
      try {
        return await fn();
      } finally {
        active--;
        if (active < limit) waiters.shift()?.();
      }
    },
    get active() { return active; },
    get queued() { return waiters.length; },
  };
}
