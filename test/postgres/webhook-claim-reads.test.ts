/**
 * G480: the PostgreSQL claim of due webhook deliveries follows its rule on random tables (both of
 * its ways, test/cases/webhook-claim-rule.case.ts), and reads few rows whatever the table holds:
 * the plan as executed (`EXPLAIN ANALYZE`, rows counted, no timing) beside one key's backlog of
 * 3,000 due deliveries, beside 5,000 keys waiting with deliveries not yet due (a few due among
 * them), and with those keys and nothing due.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dueInTurnCtes } from '../../src/store/delivery-rows.js';
import { CLAIM_SQL } from '../../src/store/postgres/webhook-store.js';
import { postgresDatabase, postgresUnavailable } from '../helpers/postgres.js';
import { deliveryCases, expectClaimsFollowTheRule, ruleSql } from '../cases/webhook-claim-rule.case.js';

const unavailable = await postgresUnavailable();
const database = postgresDatabase();

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/** Rows of `table` the executed plan returned from its scans (rows x loops of every node reading it). */
function rowsRead(node: PlanNode, table: string): number {
  const own = node['Relation Name'] === table ? (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1) : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + rowsRead(child, table), 0);
}

describe.skipIf(unavailable)('PostgreSQL webhook claims (G480)', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: await database.migrated() });
    await client.connect();
    // deliveries without their tasks: only the claim's table matters here (the test server's user is a superuser)
    await client.query('SET session_replication_role = replica');
  });
  afterAll(async () => {
    await client?.end();
  });

  /** Fills the table with `n` pending deliveries, each one's owner and time made by SQL over generate_series(1, n) as g. */
  async function fill(n: number, owner: string, time: string): Promise<void> {
    await client.query('DELETE FROM webhook_deliveries');
    await client.query(`INSERT INTO webhook_deliveries (id, task_id, owner_key_id, url, status, next_attempt_at, created_at)
      SELECT 'msg_' || g, 'task_' || g, ${owner}, 'https://hooks.example.com/', 'pending', ${time}, 0 FROM generate_series(1, ${n}) g`);
    await client.query('ANALYZE webhook_deliveries');
  }

  /** Runs `sql` in a transaction rolled back after it: nothing it changes stays. */
  async function rolledBack<T extends pg.QueryResultRow>(sql: string, values: unknown[]): Promise<T[]> {
    await client.query('BEGIN');
    try {
      return (await client.query<T>(sql, values)).rows;
    } finally {
      await client.query('ROLLBACK');
    }
  }

  /** The rows of `webhook_deliveries` the claim reads at `now`, and the ids it claims (each in a transaction rolled back). */
  async function claimRead(now: number, limit = 16): Promise<{ read: number; ids: string[] }> {
    const values = ['w1', now, now + 60_000, limit];
    const [plan] = await rolledBack<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${CLAIM_SQL}`, values);
    const ids = (await rolledBack<{ id: string }>(CLAIM_SQL, values)).map((r) => r.id);
    return { read: rowsRead(plan!['QUERY PLAN'][0]!.Plan, 'webhook_deliveries'), ids };
  }

  it('answers what the rule answers, ranking all due deliveries or reading per key', async () => {
    await expectClaimsFollowTheRule(
      deliveryCases(150),
      async (rows) => {
        await client.query('DELETE FROM webhook_deliveries');
        if (rows.length > 0)
          await client.query(
            `INSERT INTO webhook_deliveries (id, task_id, owner_key_id, url, status, next_attempt_at, created_at)
             SELECT r.id, r.id, r.owner_key_id, 'https://hooks.example.com/', r.status, r.next_attempt_at, 0
             FROM json_to_recordset($1::json) AS r (id text, owner_key_id text, status text, next_attempt_at bigint)`,
            [JSON.stringify(rows)],
          );
      },
      async (rankAllUpTo, now, limit) =>
        (
          await client.query<{ id: string }>(
            `WITH RECURSIVE ${dueInTurnCtes('postgres', '$1', '$2', rankAllUpTo)} SELECT id FROM cand ORDER BY turn, next_attempt_at, id LIMIT $2`,
            [now, limit],
          )
        ).rows.map((r) => r.id),
      async (now, limit) => (await client.query<{ id: string }>(ruleSql('$1', '$2'), [now, limit])).rows.map((r) => r.id),
    );
  });

  it("beside one key's backlog of 3,000 due deliveries: a few hundred rows read, the other key's delivery in the first turn", async () => {
    // key_a's due at 1..3000, key_b's one at 2500
    await fill(3001, "CASE WHEN g = 3001 THEN 'key_b' ELSE 'key_a' END", 'CASE WHEN g = 3001 THEN 2500 ELSE g END');
    const { read, ids } = await claimRead(10_000, 3);
    expect(ids.sort()).toEqual(['msg_1', 'msg_2', 'msg_3001']);
    expect(read).toBeLessThan(400); // ranking every due delivery read over 9,000
  });

  it('beside 5,000 keys waiting on deliveries not yet due: the few that are due are read, not the keys', async () => {
    // 5,000 keys with one delivery each, due at 20,000; five of them due at 5
    await fill(5000, "'key_' || g", 'CASE WHEN g % 1000 = 0 THEN 5 ELSE 20000 END');
    const { read, ids } = await claimRead(10_000);
    expect(ids.sort()).toEqual(['msg_1000', 'msg_2000', 'msg_3000', 'msg_4000', 'msg_5000']);
    expect(read).toBeLessThan(50);
    // and nothing due: nothing but the due index's first entry
    await client.query('UPDATE webhook_deliveries SET next_attempt_at = 20000');
    const idle = await claimRead(10_000);
    expect(idle.ids).toEqual([]);
    expect(idle.read).toBeLessThan(5);
  });
});
