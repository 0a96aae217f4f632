/**
 * `mediagate credits reconcile` finds what the store's own rules would never write (G205), on
 * SQLite and on PostgreSQL: a finished task whose hold was never settled, a hold settled twice and
 * a settlement of no hold, written into the database behind the store's back (the second
 * settlement only once the unique index that forbids it is dropped). It exits 1 naming each; a
 * clean database reconciles with exit 0.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaRefs } from '../../src/contract/media-refs.js';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { openSqliteStore } from '../../src/store/sqlite/open.js';
import type { NewTask, Store } from '../../src/store/types.js';
import { cancelTask } from '../../src/tasks/states.js';
import { tempDir } from '../helpers/temp-root.js';
import { postgresDatabase, postgresUnavailable } from '../helpers/postgres.js';
import { ensureBuilt, runCliAsync } from '../helpers/process.js';

const C = 1_000_000;
const unavailable = await postgresUnavailable();
beforeAll(() => {
  ensureBuilt();
}, 200_000);

interface Backend {
  /** A fresh store, the CLI's environment for its database, and raw SQL on it (`?` placeholders). */
  open(): Promise<{ store: Store; env: Record<string, string>; sql(text: string, values?: unknown[]): Promise<void>; close(): Promise<void> }>;
}

const sqlite: Backend = {
  async open() {
    const dir = tempDir('mediagate-reconcile-');
    const file = path.join(dir, 'mediagate.db');
    const store = openSqliteStore(file);
    return {
      store,
      env: { MEDIAGATE_DATA_DIR: dir },
      async sql(text, values = []) {
        const db = new Database(file);
        try {
          db.prepare(text).run(...values);
        } finally {
          db.close();
        }
      },
      async close() {
        await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const database = unavailable === undefined ? postgresDatabase() : undefined;
const postgres: Backend = {
  async open() {
    const url = await database!.empty();
    const store = await openPostgresStore({ url });
    return {
      store,
      env: { MEDIAGATE_DATABASE_URL: url, MEDIAGATE_DATA_DIR: tempDir('mediagate-reconcile-pg-') },
      async sql(text, values = []) {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        let n = 0;
        try {
          await client.query(
            text.replace(/\?/g, () => `$${++n}`),
            values,
          );
        } finally {
          await client.end();
        }
      },
      close: () => store.close(),
    };
  },
};

const task = (id: string): NewTask => ({
  id,
  ownerKeyId: 'key_r',
  family: 'pic',
  form: null,
  model: 'pic',
  provider: 'sandbox',
  request: { params: { prompt: 'x' }, output: { kind: 'image', width: 8, height: 8, format: 'png' }, media: mediaRefs() },
  amount: 1,
  createdAt: Date.now(),
  charge: { accountId: 'acct_r', holdMicro: 2 * C, perSecondMicro: null },
});

const suites: Array<[string, Backend, string | undefined]> = [
  ['SQLite', sqlite, undefined],
  ['PostgreSQL', postgres, unavailable],
];

for (const [name, backend, skipped] of suites) {
  describe.skipIf(skipped !== undefined)(`credits reconcile on ${name}${skipped ? ` (skipped: ${skipped})` : ''}`, () => {
    let db: Awaited<ReturnType<Backend['open']>>;
    beforeAll(async () => {
      db = await backend.open();
    });
    afterAll(async () => {
      await db?.close();
    });

    it('exits 0 on a clean ledger, then 1 naming an unsettled task, a doubled settlement and a settlement of no hold', async () => {
      const { store } = db;
      await store.credits.createAccount({ id: 'acct_r', name: 'reconcile', createdAt: Date.now(), startingMicro: 10 * C });
      const inserted = await store.tasks.insertWithinBound([task('task_r_unsettled'), task('task_r_doubled')], { maxInFlight: 0, enforceCredits: true });
      const doubled = inserted[1]!;
      if ('refused' in doubled) throw new Error('the task was refused');
      expect(await cancelTask(store.tasks, doubled, null)).toBeDefined();
      const clean = await runCliAsync(['credits', 'reconcile'], db.env);
      expect(clean.status, clean.stderr).toBe(0);
      expect(clean.stdout).toMatch(/^reconciled: .* 1 holds open, 0 balance mismatches, 0 unsettled, 0 doubled$/m);

      // behind the store's back: a task finished without its settlement; a second release of a settled
      // hold (the unique index that refuses it dropped first); a capture of a task that held nothing
      await db.sql("UPDATE tasks SET status = 'failed', progress = 100 WHERE id = ?", ['task_r_unsettled']);
      await db.sql('DROP INDEX ledger_task_settled');
      const settle = "INSERT INTO ledger (account_id, kind, amount_micro, settled_micro, task_id, created_at) VALUES ('acct_r', ?, ?, ?, ?, ?)";
      await db.sql(settle, ['release', 0, 2 * C, 'task_r_doubled', Date.now()]);
      await db.sql(settle, ['capture', 1 * C, 1 * C, 'task_r_ghost', Date.now()]);

      const report = await store.credits.reconcile();
      expect(report.unsettled).toEqual(['task_r_unsettled']);
      expect([...new Set(report.doubled)].sort()).toEqual(['task_r_doubled', 'task_r_ghost']);
      const r = await runCliAsync(['credits', 'reconcile'], db.env);
      expect(r.status, r.stdout).toBe(1);
      expect(r.stderr).toContain('UNSETTLED task task_r_unsettled finished but its hold was never captured or released');
      expect(r.stderr).toContain('DOUBLED task_r_doubled: settled twice, or settled without a matching hold');
      expect(r.stderr).toContain('DOUBLED task_r_ghost: settled twice, or settled without a matching hold');
      expect(r.stdout).toMatch(/^NOT reconciled: /m);
    }, 120_000);
  });
}
