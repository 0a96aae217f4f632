/**
 * The harness's PostgreSQL databases are reused within a test process (G482): a closed store's
 * database is emptied and checked, then given to the next store, which finds it as a fresh copy of
 * the run's template (no rows but the migrations' own, identities from 1, no session of the last
 * test left); a database whose schema a test changed is dropped instead of reused.
 */
import { describe, expect, it } from 'vitest';
import { insertTask } from '../helpers/task-rows.js';
import { newTask } from '../cases/store-contract-helpers.js';
import { idleTestDatabases, openTestPostgresStore, postgresUnavailable, testDatabaseOf, withClient, POSTGRES_ADMIN_URL } from '../helpers/postgres.js';

const unavailable = await postgresUnavailable();

/** The URL of the test server's database `name`. */
function urlOf(name: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Rows per table of the database `name` (the migrations' record left out). */
async function rowsOf(name: string): Promise<Record<string, number>> {
  return withClient(urlOf(name), async (client) => {
    const { rows } = await client.query<{ t: string }>(
      "SELECT quote_ident(tablename) AS t FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations' ORDER BY 1",
    );
    const counts: Record<string, number> = {};
    for (const { t } of rows) counts[t] = Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${t}`)).rows[0]!.n);
    return counts;
  });
}

describe.skipIf(unavailable || !process.env.MEDIAGATE_TEST_POSTGRES_RUN)('the harness reuses its PostgreSQL databases (G482)', () => {
  it("a closed store's database comes back to the next store as a fresh copy; a changed schema is dropped, not reused", async () => {
    const first = await openTestPostgresStore();
    const name = testDatabaseOf(first)!;
    const fresh = await rowsOf(name);
    expect(fresh.fair_clock).toBe(1); // a migration's own row
    await first.keys.insert(
      { id: 'key_a', name: 'a', accountId: 'acct_a', prefix: 'mg_xxxxx', createdAt: 1, revokedAt: null, hash: 'hash-a' },
      { id: 'acct_a', name: 'a', createdAt: 1, startingMicro: 5_000_000 },
    );
    const task = newTask({ ownerKeyId: 'key_a' });
    await insertTask(first.tasks, task);
    await first.tasks.claimNext(['sandbox'], 'w1', Date.now(), Date.now() + 60_000);
    // a session the test leaves open, in a transaction holding a row lock
    const { Client } = (await import('pg')).default;
    const lingering = new Client({ connectionString: urlOf(name) });
    await lingering.connect();
    lingering.on('error', () => undefined); // ended by the recycling
    await lingering.query('BEGIN; SELECT * FROM tasks FOR UPDATE');
    expect((await rowsOf(name)).tasks).toBe(1);
    await first.close();
    expect(await idleTestDatabases()).toContain(name);
    await expect(lingering.query('SELECT 1')).rejects.toThrow();

    const second = await openTestPostgresStore();
    expect(testDatabaseOf(second)).toBe(name);
    expect(await rowsOf(name)).toEqual(fresh);
    expect(await second.tasks.get(task.id)).toBeUndefined();
    // identities start again from 1: the first event of a task is numbered as in a new copy
    await second.keys.insert(
      { id: 'key_b', name: 'b', accountId: 'acct_b', prefix: 'mg_yyyyy', createdAt: 1, revokedAt: null, hash: 'hash-b' },
      { id: 'acct_b', name: 'b', createdAt: 1, startingMicro: 1_000_000 },
    );
    const ledgerIds = await withClient(urlOf(name), async (client) =>
      (await client.query<{ id: string }>('SELECT id FROM ledger ORDER BY id')).rows.map((r) => Number(r.id)),
    );
    expect(ledgerIds).toEqual([1]);

    // a test that changes the schema: its database is not given to another store
    await withClient(urlOf(name), (client) => client.query('ALTER TABLE tasks ADD COLUMN left_by_a_test integer'));
    await second.close();
    expect(await idleTestDatabases()).not.toContain(name);
    const exists = await withClient(POSTGRES_ADMIN_URL, (client) => client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]));
    expect(exists.rowCount).toBe(0);
    const third = await openTestPostgresStore();
    expect(testDatabaseOf(third)).not.toBe(name);
    await third.close();
  });
});
