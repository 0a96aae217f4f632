// A fresh PostgreSQL database for one benchmark run: created on the server of BENCH_POSTGRES_URL
// (default postgres://postgres@127.0.0.1:5432/test, the administrative database the tests use too)
// and dropped again by drop() or, however the run ends, by the harness's cleanUp() (also on SIGINT/SIGTERM).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { onCleanUp } from './harness.js';

/** The server's administrative database (any database the user may connect to and create others from). */
export const ADMIN_URL = process.env.BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Runs `fn` on a new connection to `url`, closed afterwards.
 * @template T
 * @param {string} url
 * @param {(client: pg.Client) => Promise<T>} fn
 * @returns {Promise<T>}
 */
export async function withClient(url, fn) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates `mediagate_bench_<random>`; `drop()` removes it (`WITH (FORCE)`: connections a crashed
 * gateway left open do not keep it alive) and may be called more than once.
 * @returns {Promise<{ name: string, url: string, drop: () => Promise<void> }>}
 */
export async function createBenchDatabase() {
  const name = `mediagate_bench_${randomBytes(6).toString('hex')}`;
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  await withClient(ADMIN_URL, (client) => client.query(`CREATE DATABASE ${name}`));
  /** @type {Promise<void> | undefined} */
  let dropping;
  const drop = () => {
    dropping ??= withClient(ADMIN_URL, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {
      forget();
    });
    return dropping;
  };
  const forget = onCleanUp(drop);
  return { name, url: url.toString(), drop };
}
