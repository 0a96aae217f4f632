import pg from 'pg';

/** Settings of a PostgreSQL store. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` (libpq's URL form). */
  url: string;
  /** Connections in the pool (default 10); the LISTEN connection comes on top. */
  poolSize?: number;
}

/**
 * Column types as the store reads them: `bigint` (timestamps in Unix ms, counts) as a JS number
 * instead of pg's default string; every timestamp and count fits well inside 2^53. Set per
 * connection, not through pg's global `types`, so other pg users in the process are unaffected.
 */
const BIGINT_OID = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === BIGINT_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** Longest a new connection may take to be ready (TCP, TLS, authentication); then it is an error. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** Silence on a connection after which TCP keepalive probes start. */
const KEEPALIVE_DELAY_MS = 10_000;

/**
 * A client whose connecting is bounded by {@link CONNECT_TIMEOUT_MS}. Set on the pool itself,
 * `connectionTimeoutMillis` would also bound a caller's wait for a busy pool's next free
 * connection, turning a burst into errors; on the client it bounds only a connection that a dead
 * or silent host never completes.
 */
class BoundedClient extends pg.Client {
  constructor(config: pg.ClientConfig = {}) {
    super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  }
}

/**
 * Connection settings shared by the pool and the LISTEN connection. `mediagate.instance` names the
 * store instance in every session: the task triggers put it in each notification, so an instance
 * recognises (and skips) the echoes of its own writes. Options the URL itself gives (`?options=`)
 * are kept: pg lets the URL's parameters override the configuration, so they are merged here.
 * `application_name` is `mediagate/<pid>`, so `pg_stat_activity` shows which process holds a
 * connection (a URL's own `application_name` wins).
 */
export function clientConfig(url: string, instanceId: string): pg.ClientConfig {
  const parsed = new URL(url);
  const own = parsed.searchParams.get('options');
  parsed.searchParams.delete('options');
  return {
    connectionString: parsed.toString(),
    types,
    application_name: `mediagate/${process.pid}`,
    // a database host that stops answering is noticed on an idle connection too (after 10 s of
    // silence, then the system's probes), not only by the next query's failure
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
    options: `${own ? `${own} ` : ''}-c mediagate.instance=${instanceId}`,
  };
}

export function createPool(options: PostgresStoreOptions, instanceId: string): pg.Pool {
  return new pg.Pool({ ...clientConfig(options.url, instanceId), Client: BoundedClient, max: options.poolSize ?? 10, idleTimeoutMillis: 30_000 });
}

/** Runs `fn` in one transaction on one pooled connection: committed when it resolves, rolled back when it throws. */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    // a failed ROLLBACK means the connection itself is gone: it is dropped, not reused
    await client.query('ROLLBACK').catch((e: unknown) => { broken = e instanceof Error ? e : new Error(String(e)); });
    throw err;
  } finally {
    client.release(broken);
  }
}
