/**
 * A FIFO concurrency limiter: `run(fn)` starts `fn` once fewer than `limit` calls are running. A call
 * whose signal aborts while it waits leaves the queue and rejects with the signal's reason.
 */
export interface Limiter {
  run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Waits for a slot and holds it until the returned release is called (once; later calls do nothing). */
  acquire(signal?: AbortSignal): Promise<() => void>;
  /** Raising the limit starts queued calls at once; lowering it lets running ones finish. */
  setLimit(limit: number): void;
  readonly limit: number;
  readonly active: number;
  readonly queued: number;
}

function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
}

export function createLimiter(initialLimit: number): Limiter {
  checkLimit(initialLimit);
  let limit = initialLimit;
  let active = 0;
  const waiters: Array<() => void> = [];
  const pump = (): void => {
    while (active < limit && waiters.length > 0) waiters.shift()!();
  };

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
        pump();
      }
    },
    async acquire(signal?: AbortSignal): Promise<() => void> {
      await acquire(signal);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        active--;
        pump();
      };
    },
    setLimit(n: number): void {
      checkLimit(n);
      limit = n;
      pump();
    },
    get limit() {
      return limit;
    },
    get active() {
      return active;
    },
    get queued() {
      return waiters.length;
    },
  };
}
