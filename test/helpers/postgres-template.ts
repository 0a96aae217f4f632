/**
 * Part of the run's global setup (run-setup.ts, G279): names this run's PostgreSQL databases
 * (`<run>_template`, the migrated template the harness's stores are copied from, which test/helpers/postgres.ts builds when the
 * first store needs it, and `<run>_<random>`, the stores), and drops whatever of them is left when
 * the run ends: the template, and stores whose drop had not finished. A run that uses no
 * PostgreSQL creates none; the teardown then finds nothing (or no server). Test-only.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { POSTGRES_ADMIN_URL } from './postgres-url.js';

export function setUpPostgresRun(): () => Promise<void> {
  const run = `mediagate_test_${randomBytes(6).toString('hex')}`;
  process.env.MEDIAGATE_TEST_POSTGRES_RUN = run; // the test processes, started after this, inherit it
  return async () => {
    // the server of test/helpers/postgres.ts (not imported: it loads the store, which this process never needs)
    const client = new pg.Client({
      connectionString: POSTGRES_ADMIN_URL,
      connectionTimeoutMillis: 2000,
    });
    try {
      await client.connect();
    } catch {
      return; // no server (a run on SQLite only): nothing was created
    }
    try {
      const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [`${run}_`]);
      for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    } finally {
      await client.end().catch(() => undefined);
    }
  };
}
