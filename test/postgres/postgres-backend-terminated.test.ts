/**
 * G257: a PostgreSQL connection that breaks while checked out of the pool (here: its backend
 * terminated with pg_terminate_backend, as an operator, a restart or a failover does) fails the
 * call under way with an error the store classifies as unavailable, and never ends the process:
 * an unheard `'error'` event of a checked-out client would be an uncaught exception, which vitest
 * reports as a failure of this file. The pool then makes new connections and works on.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/store/postgres/connect.js';
import { runAlone } from '../../src/store/postgres/jobs.js';
import { inTransaction } from '../../src/store/postgres/transaction.js';
import { isStoreUnavailable } from '../../src/store/faults.js';
import { postgresDatabase, postgresUnavailable, withClient } from '../helpers/postgres.js';

const unavailable = await postgresUnavailable();
const database = postgresDatabase();

describe.skipIf(unavailable)('a backend terminated under a checked-out connection (G257)', () => {
  let url: string;
  let pool: pg.Pool;
  const heard: Array<{ err: Error; checkedOut: boolean }> = [];
  beforeAll(async () => {
    url = await database.empty();
    pool = createPool({ url, poolSize: 4 }, 'terminate-test', (err, checkedOut) => heard.push({ err, checkedOut }));
  });
  afterAll(async () => {
    await pool?.end();
  });

  /** Terminates every backend of the test database but the caller's own. */
  const terminateAll = (): Promise<number> =>
    withClient(url, async (c) => {
      const { rows } = await c.query<{ n: string }>(
        `SELECT count(pg_terminate_backend(pid))::text AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      return Number(rows[0]!.n);
    });

  it('idle in a transaction: the transaction fails as unavailable, the process lives, the pool works on', async () => {
    const failed = await inTransaction(pool, async (client) => {
      await client.query('SELECT 1');
      expect(await terminateAll()).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 200)); // the client is idle, checked out: its error arrives now
      await client.query('SELECT 1');
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isStoreUnavailable(failed)).toBe(true);
    expect(heard.some((h) => h.checkedOut)).toBe(true);
    expect((await pool.query('SELECT 2 AS two')).rows[0].two).toBe(2);
  });

  it("holding a job's advisory lock (runAlone) through a long run: the run ends, the process lives, the lock is free again", async () => {
    heard.length = 0;
    await runAlone(pool, 'terminate-test', async () => {
      await terminateAll();
      await new Promise((r) => setTimeout(r, 200));
    }).catch(() => undefined);
    expect(heard.some((h) => h.checkedOut)).toBe(true);
    expect(await runAlone(pool, 'terminate-test', async () => undefined)).toBe(true);
  });

  it('idle in the pool: dropped and replaced', async () => {
    await Promise.all([pool.query('SELECT 1'), pool.query('SELECT 1')]);
    heard.length = 0;
    await terminateAll();
    await new Promise((r) => setTimeout(r, 200));
    expect(heard.length).toBeGreaterThan(0);
    expect((await pool.query('SELECT 3 AS three')).rows[0].three).toBe(3);
  });
});
