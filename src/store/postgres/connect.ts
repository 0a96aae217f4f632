import pg from 'pg';

/** Settings of a PostgreSQL store. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` (libpq's URL form). */
  url: string;
  /** Connections in the pool (default 10); the LISTEN connection comes on top. */
  poolSize?: number;
  /** Longest a new connection may take to be ready (default {@link CONNECT_TIMEOUT_MS}); tests shorten it (G288). */
  connectTimeoutMs?: number;
  /**
   * Longest one statement's answer may take (pg's `query_timeout`), then it fails with
   * {@link QUERY_TIMEOUT_MESSAGE} and its connection is dropped (G451). Unset or 0: no bound (the
   * operator commands; migrations never have one).
   */
  queryTimeoutMs?: number;
}

/** pg's error when a statement's answer did not come within `query_timeout` (G451). */
export const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/** Whether `err` is a statement that went past the pool's bound: its connection is in an unknown state (still waiting on that answer). */
export const isQueryTimeout = (err: unknown): boolean => err instanceof Error && err.message === QUERY_TIMEOUT_MESSAGE;

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
 * A client class whose connecting is bounded by `timeoutMs` ({@link CONNECT_TIMEOUT_MS} unless the
 * options say otherwise). Set on the pool itself, `connectionTimeoutMillis` would also bound a
 * caller's wait for a busy pool's next free connection, turning a burst into errors; on the client
 * it bounds only a connection that a dead or silent host never completes.
 */
function boundedClient(timeoutMs: number): typeof pg.Client {
  return class BoundedClient extends pg.Client {
    constructor(config: pg.ClientConfig = {}) {
      super({ ...config, connectionTimeoutMillis: timeoutMs });
    }
  };
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

/**
 * The store's pool. Every connection it makes gets an `'error'` listener for its whole life (G257):
 * pg-pool listens only on idle connections, and a connection that breaks while checked out (a
 * terminated backend, a restart, a failover, `idle_session_timeout`) emits `'error'` whether or
 * not a query is running on it; unheard, that event would end the process. The query under way
 * rejects on its own; the connection is dropped when handed back with the error (transaction.ts,
 * jobs.ts). `onError` hears both kinds (idle and checked out), for the log.
 */
export function createPool(options: PostgresStoreOptions, instanceId: string, onError: (err: Error, checkedOut: boolean) => void = () => undefined): pg.Pool {
  const pool = new pg.Pool({
    ...clientConfig(options.url, instanceId),
    Client: boundedClient(options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS),
    ...(options.queryTimeoutMs !== undefined && options.queryTimeoutMs > 0 && { query_timeout: options.queryTimeoutMs }),
    max: options.poolSize ?? 10,
    idleTimeoutMillis: 30_000,
  });
  const idle = new WeakSet<pg.PoolClient>();
  pool.on('connect', (client) => {
    client.on('error', (err) => {
      if (!idle.has(client)) onError(err, true);
    });
  });
  pool.on('acquire', (client) => idle.delete(client));
  pool.on('release', (_err, client) => idle.add(client));
  // an idle connection's error reaches the pool (pg-pool then drops it): heard here
  pool.on('error', (err) => onError(err, false));
  return pool;
}
