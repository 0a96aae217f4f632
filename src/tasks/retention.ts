import type { Logger } from 'pino';
import { retentionFor } from '../contract/catalog.js';
import type { BlobStore } from '../media/blob-store.js';
import type { TaskStore } from '../store/types.js';
import { expireQueuedTasks } from './queue-ttl.js';

/**
 * Carries out retention: deletes the result files of tasks whose retention ended, and the tasks
 * themselves where the family says so (motion). Returns how many tasks it handled.
 */
export async function sweepExpiredResults(
  store: TaskStore,
  blobs: BlobStore,
  log: Logger,
  videosResultTtlHours: number,
  now = Date.now(),
  inputs?: BlobStore,
): Promise<number> {
  let handled = 0;
  for (;;) {
    const batch = await store.listExpired(now, 200);
    if (batch.length === 0) return handled;
    for (const task of batch) {
      await blobs.removeFolder(task.id);
      await inputs?.removeFolder(task.id); // normally gone when the task finished; a backstop
      if (retentionFor(task.family, videosResultTtlHours).deleteTask) await store.delete(task.id);
      else await store.clearExpiry(task.id);
      handled++;
    }
    log.info({ count: batch.length }, 'retention: removed expired results');
  }
}

/** A chat request's hold not settled after this long belongs to a process that died mid-request (G206). */
export const CHAT_HOLD_LIFETIME_MS = 3_600_000;

/** What else retention sweeps: caller media copies of expired tasks, expired assets, old Idempotency-Keys, queued tasks past the queue TTL. */
export interface MediaRetention {
  /** `MEDIAGATE_QUEUE_TTL_HOURS` (G249): queued tasks older than this fail; 0 or absent: never. */
  queueTtlHours?: number;
  inputs: BlobStore;
  assets: { sweepExpired(log: Logger, now?: number): Promise<number> };
  idempotency?: { purgeExpired(): Promise<number> };
  /** Releases the credit holds of chat requests whose process died before settling them (G206). */
  credits?: { releaseStaleRequests(before: number, now: number): Promise<number> };
  /** Runs a sweep unless another process is sweeping (a store shared by several processes, G184). */
  runAlone?: (name: string, fn: () => Promise<void>) => Promise<boolean>;
}

/** Runs the sweep now and then every `everyMs`; returns a stop function. */
export function startRetentionSweeper(
  store: TaskStore,
  blobs: BlobStore,
  log: Logger,
  videosResultTtlHours: number,
  media?: MediaRetention,
  everyMs = 60_000,
): () => void {
  let running = false;
  const tick = (): void => {
    if (running) return;
    running = true;
    const sweep = async (): Promise<void> => {
      // a failure here must not keep the other sweeps from running
      await expireQueuedTasks(store, log, media?.queueTtlHours ?? 0, videosResultTtlHours).catch((err: unknown) =>
        log.error({ err }, 'queue TTL sweep failed'),
      );
      await sweepExpiredResults(store, blobs, log, videosResultTtlHours, Date.now(), media?.inputs);
      await media?.assets.sweepExpired(log);
      await media?.idempotency?.purgeExpired();
      const now = Date.now();
      const released = await media?.credits?.releaseStaleRequests(now - CHAT_HOLD_LIFETIME_MS, now);
      if (released) log.warn({ count: released }, 'credits: released the holds of chat requests that were never settled (their process stopped mid-request)');
    };
    (media?.runAlone ? media.runAlone('retention', sweep) : sweep())
      .catch((err: unknown) => log.error({ err }, 'retention sweep failed'))
      .finally(() => {
        running = false;
      });
  };
  tick();
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
