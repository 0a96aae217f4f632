import { ConnectionError, MediagateError, TaskCancelledError, TaskFailedError, TimeoutError } from './errors.js';
import { call, type HttpOptions } from './http.js';
import type { AnyTask } from './types.js';

export interface WaitOptions {
  signal?: AbortSignal;
  /** Called with the task whenever its status, progress or `queue_reason` differs from the last reply seen. */
  onProgress?: (task: AnyTask) => void;
  /**
   * How long one long-poll may wait (`?wait=`, whole seconds, 1-60), and the least time between
   * two queries. Default: the family's recommended polling interval (its lower end).
   */
  pollIntervalMs?: number;
  /** Give up (TimeoutError) after this long; default: never. */
  timeoutMs?: number;
}

/** The interval before the first reply, when the default depends on it: the shortest family's (pic, 2 s). */
const UNTIL_FIRST_REPLY_MS = 2_000;

/** Consecutive failures to reach the gateway tolerated while waiting. */
const MAX_CONNECTION_FAILURES = 5;

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const isTerminal = (status: string): boolean => status === 'completed' || status === 'failed' || status === 'cancelled';

/**
 * Follows a task to its end with long-polls: each query is `?wait=N` (N = the interval in
 * seconds), which the gateway answers as soon as the status changes, else after N seconds. A reply
 * that came back sooner without a change (the gateway's waiter bounds) is followed by a pause
 * for the rest of the interval. 429 and 503 are retried after `Retry-After` (else the interval);
 * up to 5 consecutive connection failures too. Completed: the task; failed: TaskFailedError;
 * cancelled: TaskCancelledError.
 */
export async function waitForTask<T extends AnyTask>(
  http: HttpOptions,
  url: string,
  defaultIntervalMs: number | ((first: T) => number),
  options: WaitOptions = {},
): Promise<T & { status: 'completed' }> {
  // A default that depends on the task (tasks.waitFor: an image's 2 s, a video's 30 s) is read off
  // the first reply, the first query of the loop below (under `timeoutMs` like every other); until
  // then (a 429 or 503 without Retry-After before it) the shortest family interval applies.
  const timing = (first: T | undefined): { intervalMs: number; waitSeconds: number } => {
    const chosen =
      options.pollIntervalMs ?? (typeof defaultIntervalMs === 'number' ? defaultIntervalMs : first ? defaultIntervalMs(first) : UNTIL_FIRST_REPLY_MS);
    const intervalMs = Math.max(1000, chosen);
    return { intervalMs, waitSeconds: Math.min(60, Math.round(intervalMs / 1000)) };
  };
  let { intervalMs, waitSeconds } = timing(undefined);
  const deadline = options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeoutMs;
  const controller = new AbortController();
  const stop = (): void => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', stop, { once: true });
  if (options.signal?.aborted) stop();
  const timer = Number.isFinite(deadline)
    ? setTimeout(() => controller.abort(new TimeoutError(`the task did not finish within ${options.timeoutMs} ms`)), options.timeoutMs)
    : undefined;
  let last: AnyTask | undefined;
  let failures = 0;
  try {
    for (let first = true; ; first = false) {
      const started = Date.now();
      let task: T;
      try {
        const wait = first ? 0 : Math.min(waitSeconds, Math.max(0, Math.floor((deadline - started) / 1000)));
        task = await call<T>(http, `${url}${wait > 0 ? `?wait=${wait}` : ''}`, { signal: controller.signal, extraTimeoutMs: wait * 1000 });
        failures = 0;
      } catch (err) {
        if (controller.signal.aborted) throw controller.signal.reason;
        const retryable =
          (err instanceof MediagateError && (err.status === 429 || err.status === 503)) ||
          (err instanceof ConnectionError && ++failures < MAX_CONNECTION_FAILURES);
        if (!retryable) throw err;
        const after = err instanceof MediagateError && err.retryAfterSeconds !== null ? err.retryAfterSeconds * 1000 : intervalMs;
        await sleep(after, controller.signal);
        continue;
      }
      if (last === undefined) ({ intervalMs, waitSeconds } = timing(task));
      const changed = last === undefined || task.status !== last.status || task.progress !== last.progress || task.queue_reason !== last.queue_reason;
      const statusChanged = last === undefined || task.status !== last.status;
      last = task;
      if (changed) options.onProgress?.(task);
      if (task.status === 'completed') return task as T & { status: 'completed' };
      if (task.status === 'failed') throw new TaskFailedError(task);
      if (task.status === 'cancelled') throw new TaskCancelledError(task);
      if (!isTerminal(task.status) && !first && !statusChanged) {
        const rest = intervalMs - (Date.now() - started);
        if (rest > 0) await sleep(rest, controller.signal);
      }
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', stop);
  }
}
