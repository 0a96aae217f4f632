import type { Config } from '../config.js';
import { openSqliteStore, type SqliteOptions } from './sqlite/open.js';
import type { Store } from './types.js';

/** What picks and opens the store: the SQLite file, or a PostgreSQL database when its URL is set. */
export type StoreConfig = Pick<Config, 'databaseFile' | 'databaseUrl' | 'sqliteSync'>;

/**
 * Opens the configured store (G177): PostgreSQL when `MEDIAGATE_DATABASE_URL` is set (its module is
 * loaded only then), else the embedded SQLite file under the data directory. `options` holds the
 * embedded store's own options (background checkpoints, the deferred-write logger, which a
 * PostgreSQL store takes too) and a gateway process's bound on one PostgreSQL statement
 * (`queryTimeoutMs`, G451; the operator commands give none).
 */
export async function createStore(config: StoreConfig, options: StoreOptions = {}): Promise<Store> {
  const { queryTimeoutMs, ...sqlite } = options;
  if (config.databaseUrl !== undefined) {
    const { openPostgresStore } = await import('./postgres/index.js');
    return openPostgresStore({ url: config.databaseUrl, logger: sqlite.logger, ...(queryTimeoutMs !== undefined && { queryTimeoutMs }) });
  }
  return openSqliteStore(config.databaseFile, { ...sqlite, synchronous: config.sqliteSync });
}

export type StoreOptions = Omit<SqliteOptions, 'synchronous'> & { queryTimeoutMs?: number };
