/**
 * PostgreSQL for tests: a fresh database per store, created through the `test` database of the
 * local server and dropped when the file's tests end. When no server answers, the suites that need
 * one are skipped with the reason printed, except when `MEDIAGATE_TEST_REQUIRE_POSTGRES=1` (CI),
 * where that is a failure.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import type { Store } from '../../src/store/types.js';

/** The server's administrative database; override with MEDIAGATE_TEST_POSTGRES_URL. */
export const POSTGRES_ADMIN_URL = process.env.MEDIAGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

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
 * This test file's own database, created at the first `empty()` and dropped after the file's
 * tests (`WITH (FORCE)`: a connection a failed test left open does not keep it alive). `empty()`
 * answers its URL with everything in it dropped, for the next store to migrate afresh (creating a
 * database per store would take a second per test).
 */
export function postgresDatabase(): { empty(): Promise<string> } {
  const name = `mediagate_test_${randomBytes(6).toString('hex')}`;
  const url = databaseUrl(name);
  let created: Promise<unknown> | undefined;
  afterAll(async () => {
    if (!created) return;
    await withClient(POSTGRES_ADMIN_URL, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  });
  return {
    async empty() {
      if (!created) {
        created = withClient(POSTGRES_ADMIN_URL, (client) => client.query(`CREATE DATABASE ${name}`));
        await created;
        return url;
      }
      await created;
      await withClient(url, (client) => client.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public'));
      return url;
    },
  };
}

/**
 * Whether the gateway tests' harness runs on PostgreSQL instead of an in-memory SQLite store
 * (`MEDIAGATE_TEST_STORE=postgres`): the e2e suites then run unchanged against it.
 */
export const harnessOnPostgres = process.env.MEDIAGATE_TEST_STORE === 'postgres';

/** A PostgreSQL store on a database of its own, dropped when the store is closed. */
export async function openTestPostgresStore(): Promise<Store> {
  const reason = await postgresUnavailable();
  if (reason) throw new Error(`MEDIAGATE_TEST_STORE=postgres: ${reason}`);
  const name = `mediagate_test_${randomBytes(6).toString('hex')}`;
  await withClient(POSTGRES_ADMIN_URL, (client) => client.query(`CREATE DATABASE ${name}`));
  const store = await openPostgresStore({ url: databaseUrl(name), poolSize: 4 });
  const close = store.close;
  return {
    ...store,
    close: async () => {
      await close();
      await withClient(POSTGRES_ADMIN_URL, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
