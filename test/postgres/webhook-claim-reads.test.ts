/**
 * G480: the PostgreSQL claim of due webhook deliveries reads a few rows per key, not every due
 * delivery. With one key's backlog of 3,000 due deliveries and another key's one, the claim's plan
 * as executed (`EXPLAIN ANALYZE`, rows counted, no timing) reads a few hundred rows of
 * `webhook_deliveries` at most, and the claim takes the other key's delivery in its first turn.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { CLAIM_SQL } from '../../src/store/postgres/webhook-store.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/index.js';
import { postgresDatabase, postgresUnavailable, withClient } from '../helpers/postgres.js';
import { newTask } from '../cases/store-contract-helpers.js';
import { insertTask } from '../helpers/task-rows.js';

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

describe.skipIf(unavailable)('PostgreSQL webhook claims read per key (G480)', () => {
  let store: PostgresStore | undefined;
  afterAll(async () => store?.close());

  it("a claim beside a backlog of 3,000 due deliveries reads a few hundred rows and takes the other key's delivery first", async () => {
    const url = await database.migrated();
    store = await openPostgresStore({ url });
    const task = newTask({ callbackUrl: 'https://hooks.example.com/' });
    await insertTask(store.tasks, task);
    await withClient(url, async (client) => {
      // copies of one task, each with a pending delivery: key_a's backlog due at 1..3000, key_b's one at 2500
      await client.query(
        `INSERT INTO tasks SELECT (jsonb_populate_record(NULL::tasks, to_jsonb(t) || jsonb_build_object('id', 'task_' || g))).*
        FROM tasks t, generate_series(1, 3001) g WHERE t.id = $1`,
        [task.id],
      );
      await client.query(`INSERT INTO webhook_deliveries (id, task_id, owner_key_id, url, status, next_attempt_at, created_at)
        SELECT 'msg_task_' || g, 'task_' || g, CASE WHEN g = 3001 THEN 'key_b' ELSE 'key_a' END, 'https://hooks.example.com/', 'pending',
          CASE WHEN g = 3001 THEN 2500 ELSE g END, 0 FROM generate_series(1, 3001) g`);
      await client.query('ANALYZE webhook_deliveries');
      await client.query('BEGIN');
      try {
        const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${CLAIM_SQL}`, [
          'w1',
          10_000,
          20_000,
          16,
        ]);
        const read = rowsRead(rows[0]!['QUERY PLAN'][0]!.Plan, 'webhook_deliveries');
        expect(read).toBeGreaterThan(0);
        expect(read).toBeLessThan(300); // the claim as it was (every due delivery ranked): over 3,000
      } finally {
        await client.query('ROLLBACK');
      }
    });
    const claimed = await store.webhooks.claimDue('w1', 10_000, 20_000, 3);
    expect(claimed.map((d) => d.taskId).sort()).toEqual(['task_1', 'task_2', 'task_3001']);
  });
});
