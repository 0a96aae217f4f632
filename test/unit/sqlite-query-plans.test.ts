/**
 * The SQLite queue statements stay index walks without statistics (G255): the gateway never runs
 * ANALYZE, and without it SQLite once sorted every queued task for each claim and read them all
 * for each `nextRunAfter`. Checked by the plans SQLite chooses on a freshly migrated database
 * holding queued tasks (no timing): no sort into a temporary B-tree, no OR over indexes, no scan
 * of the table, and the claim reads the fair-order index. The claim of due webhook deliveries
 * (G480) reads a bounded run of the due index, then seeks each key's earliest in the key index,
 * instead of sorting every due delivery.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/sqlite/migrations.js';
import { taskMinutesSql } from '../../src/store/admin-rows.js';
import { CLAIM_SQL, nextRunSql } from '../../src/store/sqlite/task-store.js';
import { DUE_SQL } from '../../src/store/sqlite/webhook-store.js';

function planOf(db: Database.Database, sql: string, params: unknown[]): string[] {
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail);
}

describe('SQLite queue statements without statistics', () => {
  const db = new Database(':memory:');
  migrate(db);
  const insert =
    db.prepare(`INSERT INTO tasks (id, owner_key_id, family, form, model, provider, request, status, amount, created_at, updated_at, run_after, vtime)
    VALUES (?, 'key', 'pic', NULL, 'pic', ?, '{}', ?, 1, ?, ?, 0, ?)`);
  db.transaction(() => {
    for (let i = 0; i < 2000; i++) insert.run(`task_${i}`, i % 2 ? 'sandbox' : 'relay', i % 10 ? 'queued' : 'completed', i, i, i);
  })();
  const walks = (plan: string[]): void => {
    const text = plan.join(' | ');
    expect(text).not.toMatch(/TEMP B-TREE/);
    expect(text).not.toMatch(/MULTI-INDEX OR/);
    expect(text).not.toMatch(/SCAN tasks\b/);
  };

  it('the claim of the next queued task reads the fair-order index, in order', () => {
    const plan = planOf(db, CLAIM_SQL.start(1), ['w', 1, 1, 1, 'sandbox', 1]);
    expect(plan.join(' | ')).toMatch(/USING (COVERING )?INDEX tasks_fair_queue/);
    walks(plan);
  });

  it('the claim of a due check reads the checks index', () => {
    const plan = planOf(db, CLAIM_SQL.check(1), ['w', 1, 1, 'sandbox', 1]);
    expect(plan.join(' | ')).toMatch(/INDEX tasks_checks/);
    walks(plan);
  });

  it.each([1, 2, 3])('nextRunAfter over %i provider(s) is one index lookup per provider and kind', (n) => {
    const providers = ['sandbox', 'relay', 'other'].slice(0, n);
    walks(
      planOf(
        db,
        nextRunSql(n),
        providers.flatMap((p) => [p, p]),
      ),
    );
  });

  it('tasks per minute (G370) reads the events and the submits of the window from covering indexes, never a table', () => {
    const { text, values } = taskMinutesSql({ from: 100, to: 200 }, 'sqlite');
    const plan = planOf(db, text, values).join(' | ');
    expect(plan).toMatch(/SEARCH task_events USING COVERING INDEX task_events_at \(at>\? AND at<\?\)/);
    expect(plan).toMatch(/SEARCH tasks USING COVERING INDEX tasks_admin_created \(created_at>\? AND created_at<\?\)/);
    expect(plan).not.toMatch(/SCAN (tasks|task_events)\b/);
  });

  it('the claim of due webhook deliveries reads a bounded run of the due index, then seeks per key (G480): never every due delivery sorted', () => {
    const deliver = db.prepare(`INSERT INTO webhook_deliveries (id, task_id, owner_key_id, url, status, next_attempt_at, created_at)
      VALUES (?, ?, ?, 'https://hooks.example.com/', ?, ?, 0)`);
    db.transaction(() => {
      for (let i = 0; i < 2000; i++) deliver.run(`msg_${i}`, `task_${i}`, i % 50 ? 'key_a' : `key_${i}`, i % 7 ? 'pending' : 'delivered', i);
    })();
    const plan = planOf(db, DUE_SQL, [{ now: 5000, limit: 16 }]);
    const reads = plan.filter((line) => /^(SCAN|SEARCH) (webhook_deliveries|f|x|c|y)\b/.test(line));
    expect(reads.length).toBeGreaterThan(0);
    // the first due deliveries by time, at most RANK_ALL_DUE_UP_TO + 1 of them (a LIMIT, which plans do not show)
    const early = reads.filter((line) => /INDEX webhook_deliveries_due\b/.test(line));
    expect(early).toEqual(['SEARCH webhook_deliveries USING INDEX webhook_deliveries_due (next_attempt_at<?)']);
    for (const line of reads.filter((l) => !early.includes(l)))
      expect(line).toMatch(
        /^SEARCH \w+ USING (COVERING INDEX webhook_deliveries_key_due( \(owner_key_id[=>]\?( AND next_attempt_at<\?)?\))?|INDEX sqlite_autoindex_webhook_deliveries_1 \(id=\?\))$/,
      );
  });
});
