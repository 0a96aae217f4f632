/**
 * The SQLite claim of due webhook deliveries follows its rule on random tables, on both of its ways
 * (G461, G480; test/cases/webhook-claim-rule.case.ts).
 */
import Database from 'better-sqlite3';
import { describe, it } from 'vitest';
import { dueInTurnCtes } from '../../src/store/delivery-rows.js';
import { migrate } from '../../src/store/sqlite/migrations.js';
import { deliveryCases, expectClaimsFollowTheRule, ruleSql } from '../cases/webhook-claim-rule.case.js';

describe('the SQLite webhook claim (G480)', () => {
  it('answers what the rule answers, ranking all due deliveries or reading per key', async () => {
    const db = new Database(':memory:');
    migrate(db);
    db.pragma('foreign_keys = OFF'); // deliveries without their tasks: only the claim's table matters here
    const insert = db.prepare(`INSERT INTO webhook_deliveries (id, task_id, owner_key_id, url, status, next_attempt_at, created_at)
      VALUES (@id, @id, @owner_key_id, 'https://hooks.example.com/', @status, @next_attempt_at, 0)`);
    const load = db.transaction((rows: Parameters<typeof insert.run>[0][]) => {
      db.exec('DELETE FROM webhook_deliveries');
      for (const r of rows) insert.run(r);
    });
    const claims = new Map<number, Database.Statement>();
    const claimOf = (rankAllUpTo: number): Database.Statement => {
      let statement = claims.get(rankAllUpTo);
      if (!statement) {
        statement = db
          .prepare(
            `WITH RECURSIVE ${dueInTurnCtes('sqlite', '@now', '@limit', rankAllUpTo)} SELECT id FROM cand ORDER BY turn, next_attempt_at, id LIMIT @limit`,
          )
          .pluck();
        claims.set(rankAllUpTo, statement);
      }
      return statement;
    };
    const rule = db.prepare(ruleSql('@now', '@limit')).pluck();
    await expectClaimsFollowTheRule(
      deliveryCases(400),
      async (rows) => load(rows),
      async (rankAllUpTo, now, limit) => claimOf(rankAllUpTo).all({ now, limit }) as string[],
      async (now, limit) => rule.all({ now, limit }) as string[],
    );
    db.close();
  });
});
