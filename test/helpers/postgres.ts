/**
 * PostgreSQL for tests: a fresh database per store, created through the `test` database of the
 * local server and dropped when the file's tests end (a harness's store is a copy of one database
 * migrated once per run, G279). When no server answers, the suites that need
 * one are skipped with the reason printed, except when `MEDIAGATE_TEST_REQUIRE_POSTGRES=1` (CI),
 * where that is a failure.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { migrate } from '../../src/store/postgres/migrations.js';
import type { Store } from '../../src/store/types.js';

import { POSTGRES_ADMIN_URL } from './postgres-url.js';

export { POSTGRES_ADMIN_URL };

/**
 * Why PostgreSQL cannot be used (undefined when it can). Throws instead when the environment
 * requires it, so CI cannot pass by skipping.
 */
export async function postgresUnavailable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3000 });
  let reason: string | undefined;
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (err) {
    reason = `PostgreSQL at ${POSTGRES_ADMIN_URL.replace(/:[^:@/]*@/, ':***@')} is unreachable (${(err as Error).message})`;
  } finally {
    await client.end().catch(() => undefined);
  }
  if (reason && process.env.MEDIAGATE_TEST_REQUIRE_POSTGRES === '1') throw new Error(`${reason}; MEDIAGATE_TEST_REQUIRE_POSTGRES=1 requires it`);
  if (reason) console.warn(`skipping the PostgreSQL tests: ${reason}`);
  return reason;
}

/** The URL of a database on the test server. */
function databaseUrl(name: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs `fn` on a new connection to `url`, closed afterwards. */
export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * This test file's own database, created at the first call and dropped after the file's tests
 * (`WITH (FORCE)`: a connection a failed test left open does not keep it alive). `empty()` answers
 * its URL with everything in it dropped, for the next store to migrate afresh (creating a database
 * per store would take a second per test). `migrated()` answers it with the schema current and
 * every table holding only what the migrations put there (G474): migrated once, then each table
 * emptied (`DELETE`, its identity restarted) and the migrations' own rows put back, in one batch,
 * instead of the ~450 ms of PostgreSQL's CPU that migrating afresh costs, for tests that need an
 * empty store, not a migration.
 */
export function postgresDatabase(): { empty(): Promise<string>; migrated(): Promise<string> } {
  const name = `mediagate_test_${randomBytes(6).toString('hex')}`;
  const url = databaseUrl(name);
  let created: Promise<unknown> | undefined;
  afterAll(async () => {
    if (!created) return;
    await withClient(POSTGRES_ADMIN_URL, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  });
  /** After `migrated()`'s first call: the statements that bring the migrated schema back to its rows of then. */
  let reset: Promise<string[]> | undefined;
  const create = (): Promise<unknown> => {
    created ??= withClient(POSTGRES_ADMIN_URL, (client) => client.query(`CREATE DATABASE ${name}`));
    return created;
  };
  return {
    async empty() {
      const first = !created;
      await create();
      reset = undefined;
      if (!first) await withClient(url, (client) => client.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public'));
      return url;
    },
    async migrated() {
      await create();
      if (!reset) {
        reset = migratedRows(url);
        await reset;
        return url;
      }
      const statements = await reset;
      await withClient(url, (client) => client.query(statements.join(';\n')));
      return url;
    },
  };
}

/**
 * Migrates the database at `url` from empty, then answers the statements that bring it back to
 * that state ({@link resetStatements}).
 */
async function migratedRows(url: string): Promise<string[]> {
  return withClient(url, async (client) => {
    await client.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      await migrate(pool);
    } finally {
      await pool.end();
    }
    return resetStatements(client);
  });
}

/**
 * The statements that bring the migrated database `client` is connected to back to its state of
 * now: every table emptied (identities restarted) but the migrations' record, and the rows the
 * migrations inserted (the fair-share clock's) inserted again. One batch, run as a replica.
 */
async function resetStatements(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    "SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations' ORDER BY tablename",
  );
  const tables = rows.map((r) => r.name);
  // the ledger's and the audit log's triggers refuse a TRUNCATE (they are append-only): the
  // session runs as a replica, whose triggers do not fire (the test server's user is a superuser)
  const statements = ['SET session_replication_role = replica', ...tables.map((t) => `DELETE FROM ${t}`)];
  const identities = await client.query<{ sequence: string }>(
    "SELECT pg_get_serial_sequence(quote_ident(table_name), column_name) AS sequence FROM information_schema.columns WHERE table_schema = 'public' AND is_identity = 'YES'",
  );
  for (const { sequence } of identities.rows) statements.push(`ALTER SEQUENCE ${sequence} RESTART`);
  for (const table of tables) {
    const seeded = await client.query<{ rows: unknown[] | null }>(`SELECT json_agg(t) AS rows FROM ${table} t`);
    const seed = seeded.rows[0]?.rows;
    if (seed)
      statements.push(
        `INSERT INTO ${table} OVERRIDING SYSTEM VALUE SELECT * FROM json_populate_recordset(NULL::${table}, ${client.escapeLiteral(JSON.stringify(seed))})`,
      );
  }
  statements.push('SET session_replication_role = DEFAULT');
  return statements;
}

/**
 * What a test could change of a database's schema, as one digest: the migrations applied, every
 * column (type, default, nullability), index, constraint, trigger, function, type, rule and table
 * (row security, options, owner) of `public`, every sequence, schema and policy, and the database's
 * own settings. A reused database must show the template's. Not reset: the planner's statistics
 * (a test that ran ANALYZE leaves them; no harness test depends on a plan).
 */
const SCHEMA_DIGEST_SQL = `SELECT md5(string_agg(x, E'\n' ORDER BY x)) AS digest FROM (
  SELECT 'migration ' || version FROM schema_migrations
  UNION ALL SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || COALESCE(column_default, '') || ' ' || is_identity
    FROM information_schema.columns WHERE table_schema = 'public'
  UNION ALL SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
  UNION ALL SELECT 'constraint ' || conrelid::regclass || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE connamespace = 'public'::regnamespace
  UNION ALL SELECT 'trigger ' || pg_get_triggerdef(oid) || ' ' || tgenabled::text FROM pg_trigger WHERE NOT tgisinternal
  UNION ALL SELECT 'function ' || proname || ' ' || md5(prosrc) FROM pg_proc WHERE pronamespace = 'public'::regnamespace
  UNION ALL SELECT 'sequence ' || sequencename || ' ' || increment_by || ' ' || start_value FROM pg_sequences WHERE schemaname = 'public'
  UNION ALL SELECT 'setting ' || array_to_string(setconfig, ',') FROM pg_db_role_setting WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
  UNION ALL SELECT 'schema ' || nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'
  UNION ALL SELECT 'type ' || typname || ' ' || typtype::text FROM pg_type WHERE typnamespace = 'public'::regnamespace AND typtype <> 'c'
  UNION ALL SELECT 'rule ' || rulename || ' ' || md5(pg_get_ruledef(oid)) FROM pg_rewrite WHERE ev_class IN (SELECT oid FROM pg_class WHERE relnamespace = 'public'::regnamespace)
  UNION ALL SELECT 'policy ' || polname FROM pg_policy
  UNION ALL SELECT 'table ' || relname || ' ' || relrowsecurity::text || ' ' || COALESCE(array_to_string(reloptions, ','), '') || ' ' || pg_get_userbyid(relowner)
    FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p', 'v', 'm')
) t (x)`;

/**
 * Whether the gateway tests' harness runs on PostgreSQL instead of an in-memory SQLite store
 * (`MEDIAGATE_TEST_STORE=postgres`): the e2e suites then run unchanged against it.
 */
export const harnessOnPostgres = process.env.MEDIAGATE_TEST_STORE === 'postgres';

/** Serializes the building of the run's migrated template between the workers (any value, the same in all). */
const TEMPLATE_LOCK = 0x6d67_7465_6d; // "mgtem"
let templateBuilt: Promise<string> | undefined;

/**
 * The run's migrated database `name` (G279), built once: by the first worker that asks, under an
 * advisory lock (the others wait and find it), under another name until it is whole, so a run
 * killed halfway never leaves a half-migrated template under the name. Nothing stays connected to
 * it: PostgreSQL copies a database only while no session uses it. The global setup
 * (postgres-template.ts) names the run and drops its databases after it.
 */
function migratedTemplate(name: string): Promise<string> {
  templateBuilt ??= withClient(POSTGRES_ADMIN_URL, async (client) => {
    await client.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    try {
      if ((await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 0) {
        const building = `${name}_building`;
        await client.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
        await client.query(`CREATE DATABASE ${building}`);
        const pool = new pg.Pool({ connectionString: databaseUrl(building), max: 1 });
        try {
          await migrate(pool);
        } finally {
          await pool.end();
        }
        await client.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
    }
    return name;
  });
  return templateBuilt;
}

/**
 * How to empty a database copied from the run's template, and the digest of its schema: read once
 * per process from its first copy, before its store opens (never from the template itself: a
 * session there would make the other workers' copies fail).
 */
let reuse: Promise<{ statements: string[]; digest: string }> | undefined;

/** Databases of this process whose stores were closed, emptied and checked for the next store (G482). */
const idle: string[] = [];
/** The emptying (or drop) of each database whose store closed, until it ends. */
const recycling = new Set<Promise<void>>();
/** Each store's database, for the tests of this helper. */
const databaseOf = new WeakMap<Store, string>();

/** The database a store of {@link openTestPostgresStore} uses. */
export const testDatabaseOf = (store: Store): string | undefined => databaseOf.get(store);

/** The databases waiting for the next store, once every emptying under way has ended. */
export async function idleTestDatabases(): Promise<readonly string[]> {
  await Promise.all(recycling);
  return [...idle];
}

/**
 * Empties the database `name` a closed store used and puts it on the idle list, when its schema is
 * still the template's; drops it otherwise, or when emptying it fails. Connections a test left
 * open to it are ended first: nothing of the last test reaches the next.
 */
async function recycle(name: string): Promise<void> {
  const { statements, digest } = await reuse!;
  const kept = await withClient(databaseUrl(name), async (client) => {
    await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    if ((await client.query<{ digest: string }>(SCHEMA_DIGEST_SQL)).rows[0]!.digest !== digest) return false;
    await client.query(statements.join(';\n'));
    return true;
  }).catch(() => false);
  if (kept) idle.push(name);
  else await withClient(POSTGRES_ADMIN_URL, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/**
 * A PostgreSQL store on a database of its own. Under vitest (G279, G482) the database is a copy of
 * the run's migrated template, or one such copy an earlier store of this process used, emptied
 * since and its schema checked against the template's (copying a database and dropping it cost
 * PostgreSQL ~0.4 s of CPU per store; emptying one ~30 ms): the store finds its schema current
 * instead of applying every migration again (the tests of migrating an empty database use
 * {@link postgresDatabase}). Closing the store starts the emptying (or the drop) without waiting
 * for it; the global teardown drops the run's databases. Outside a run (no
 * `MEDIAGATE_TEST_POSTGRES_RUN`), a database migrated by the store, dropped at its close.
 */
export async function openTestPostgresStore(): Promise<Store> {
  const reason = await postgresUnavailable();
  if (reason) throw new Error(`MEDIAGATE_TEST_STORE=postgres: ${reason}`);
  const run = process.env.MEDIAGATE_TEST_POSTGRES_RUN;
  const template = run ? await migratedTemplate(`${run}_template`) : undefined;
  let name = template ? idle.shift() : undefined;
  if (!name) {
    name = `${run ?? 'mediagate_test'}_${randomBytes(6).toString('hex')}`;
    await withClient(POSTGRES_ADMIN_URL, (client) => client.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`));
    if (template)
      reuse ??= withClient(databaseUrl(name), async (client) => ({
        statements: await resetStatements(client),
        digest: (await client.query<{ digest: string }>(SCHEMA_DIGEST_SQL)).rows[0]!.digest,
      }));
    await reuse;
  }
  const store = await openPostgresStore({ url: databaseUrl(name), poolSize: 4 });
  const close = store.close;
  const own = name;
  const wrapped: Store = {
    ...store,
    close: async () => {
      await close();
      if (!template) {
        await withClient(POSTGRES_ADMIN_URL, (client) => client.query(`DROP DATABASE IF EXISTS ${own} WITH (FORCE)`));
        return;
      }
      const done = recycle(own).catch(() => undefined); // the global teardown drops it if this did not
      recycling.add(done);
      void done.then(() => recycling.delete(done));
    },
  };
  databaseOf.set(wrapped, own);
  return wrapped;
}
