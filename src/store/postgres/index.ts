/**
 * The PostgreSQL store (G180): the whole store contract on one database shared by any number of
 * gateway processes. Loaded by `create-store.ts` only when `MEDIAGATE_DATABASE_URL` is set.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { redactedUrl } from '../../redacted-url.js';
import type { Store } from '../types.js';
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
  const pool = createPool(options, instanceId);
  // an idle pooled connection that breaks is dropped by the pool; without a listener its error would end the process
  pool.on('error', (err) => options.logger?.warn({ err }, 'PostgreSQL: an idle pooled connection failed'));
  const tasks = new PostgresTaskStore(pool);
  const listener = new ChangeListener(options.url, instanceId, {
    taskChanged: (id) => tasks.changedByOther(id),
    queueChanged: (provider) => tasks.queueChanged(provider),
    cancelled: (id) => tasks.cancelled(id),
    resumed: () => tasks.resumed(),
  }, options.logger);
  try {
    await migrate(pool);
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
    sessions: new PostgresSessionStore(pool),
    runAlone: (name, fn) => runAlone(pool, name, fn),
    rateLimits: (logger) => postgresRateLimits(pool, logger),
    waitSlots: new PostgresWaitSlots(pool, options.logger),
    ping: async () => { await pool.query('SELECT 1'); },
    close: () => {
      closing ??= (async () => {
        await listener.close();
        await pool.end();
      })();
      return closing;
    },
  };
}
