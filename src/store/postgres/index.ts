/**
 * The PostgreSQL store (G180): the whole store contract on one database shared by any number of
 * gateway processes. Loaded by `create-store.ts` only when `MEDIAGATE_DATABASE_URL` is set.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { redactedUrl } from '../../redacted-url.js';
import type { Store } from '../types.js';
import { PostgresAdminStore } from './admin-store.js';
import { PostgresAssetStore } from './asset-store.js';
import { PostgresAuditStore } from './audit-store.js';
import { PostgresSessionStore } from './session-store.js';
import { PostgresCreditStore } from './credit-store.js';
import { createPool, type PostgresStoreOptions } from './connect.js';
import { PostgresIdempotencyStore } from './idempotency-store.js';
import { PostgresWebhookStore } from './webhook-store.js';
import { PostgresKeyStore } from './key-store.js';
import { runAlone } from './jobs.js';
import { ChangeListener } from './listener.js';
import { migrate } from './migrations.js';
import { postgresRateLimits, PostgresWaitSlots } from './cluster-limits.js';
import { PostgresTaskStore } from './task-store.js';
import { PostgresUsageStore } from './usage-store.js';
import { PostgresWorkerStore } from './worker-store.js';

export type { PostgresStoreOptions } from './connect.js';
export { PostgresTaskStore } from './task-store.js';

/** A PostgreSQL-backed store, with the task store's cross-process capabilities visible. */
export interface PostgresStore extends Store {
  tasks: PostgresTaskStore;
}

/**
 * Connects, migrates (once across processes started together) and starts listening for other
 * processes' task writes. Rejects when the database cannot be reached or migrated.
 */
export async function openPostgresStore(options: PostgresStoreOptions & { logger?: Logger }): Promise<PostgresStore> {
  const instanceId = randomBytes(8).toString('hex');
  // a pooled connection that breaks (idle or in use) is logged and dropped, never the end of the process (G257)
  let faultAt = 0;
  const pool = createPool(options, instanceId, (err, checkedOut) => {
    faultAt = Date.now();
    options.logger?.warn({ err: err.message, checkedOut }, 'PostgreSQL: a pooled connection failed; it is dropped');
  });
  const tasks = new PostgresTaskStore(pool);
  const listener = new ChangeListener(
    options.url,
    instanceId,
    {
      taskChanged: (id) => tasks.changedByOther(id),
      queueChanged: (provider) => tasks.queueChanged(provider),
      cancelled: (id) => tasks.cancelled(id),
      resumed: () => tasks.resumed(),
    },
    options.logger,
  );
  try {
    // migrations (an index built over a large table, the wait for another process's migration)
    // never have the query bound: on a pool of their own, ended once they are done (G451)
    const migrations = createPool({ ...options, queryTimeoutMs: undefined, poolSize: 1 }, instanceId);
    try {
      await migrate(migrations);
    } finally {
      await migrations.end().catch(() => undefined);
    }
    await listener.start();
  } catch (err) {
    await listener.close();
    await pool.end().catch(() => undefined);
    throw new Error(`could not open the PostgreSQL store at ${redactedUrl(options.url, 'MEDIAGATE_DATABASE_URL')}: ${(err as Error).message}`, { cause: err });
  }
  let closing: Promise<void> | undefined;
  return {
    tasks,
    keys: new PostgresKeyStore(pool),
    usage: new PostgresUsageStore(pool),
    assets: new PostgresAssetStore(pool),
    credits: new PostgresCreditStore(pool),
    idempotency: new PostgresIdempotencyStore(pool),
    webhooks: new PostgresWebhookStore(pool),
    audit: new PostgresAuditStore(pool),
    workers: new PostgresWorkerStore(pool),
    admin: new PostgresAdminStore(pool),
    sessions: new PostgresSessionStore(pool),
    runAlone: (name, fn) => runAlone(pool, name, fn),
    rateLimits: (logger) => postgresRateLimits(pool, logger),
    waitSlots: new PostgresWaitSlots(pool, options.logger),
    lastFaultAt: () => faultAt,
    ping: async () => {
      await pool.query('SELECT 1');
    },
    close: () => {
      closing ??= (async () => {
        await listener.close();
        await pool.end();
      })();
      return closing;
    },
  };
}
