import type { Logger } from 'pino';
import type { TaskStore } from '../store/types.js';
import { expiryOf } from './expiry.js';
import { expireQueuedTask } from './states.js';

const BATCH = 200;

/** The error a task expired in the queue carries (G249). */
export const queueExpiredError = (ttlHours: number): string => `expired: the task was still waiting for a worker ${ttlHours} h after its submission`;

/**
 * The queue TTL (G249): every task still queued `ttlHours` after its submission fails, its hold
 * released, exactly once (a conditional update: a worker that claims it first runs it instead).
 * Returns how many expired.
 */
export async function expireQueuedTasks(store: TaskStore, log: Logger, ttlHours: number, videosResultTtlHours: number, now = Date.now()): Promise<number> {
  if (ttlHours <= 0) return 0;
  const error = queueExpiredError(ttlHours);
  let expired = 0;
  for (;;) {
    const batch = await store.listQueuedBefore(now - ttlHours * 3_600_000, BATCH);
    let changed = 0;
    for (const task of batch) {
      if (await expireQueuedTask(store, task, error, expiryOf(task.family, 'failed', now, videosResultTtlHours), now)) changed++;
    }
    expired += changed;
    // a short page was the last; a page where nothing changed (every task taken meanwhile) ends it too
    if (batch.length < BATCH || changed === 0) break;
  }
  if (expired > 0) log.warn({ count: expired, ttlHours }, 'queue TTL: failed tasks no worker started in time (their holds released)');
  return expired;
}
