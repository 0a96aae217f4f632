/**
 * Keys of an installation from before credits each get an account of their own when the store
 * migrates (G200), on SQLite and on PostgreSQL; tasks stored before credits have no hold.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { migrate as migratePostgres } from '../../src/store/postgres/migrations.js';
import { migrate as migrateSqlite } from '../../src/store/sqlite/migrations.js';

/** The schema versions that added accounts and the ledger (issue 16); later migrations come after them. */
const SQLITE_CREDITS_VERSION = 9;
const POSTGRES_CREDITS_VERSION = 4;
import { openSqliteStore } from '../../src/store/sqlite/open.js';
import type { Store } from '../../src/store/types.js';
import { tempDir } from '../helpers/temp-root.js';
import { postgresDatabase, postgresUnavailable } from '../helpers/postgres.js';

const KEYS = [
  ['key_0123456789ab', 'alice', 'hash-a'],
  ['key_ba9876543210', 'bob', 'hash-b'],
] as const;
const TASK = `INSERT INTO tasks (id, owner_key_id, family, model, provider, request, status, amount, created_at, updated_at)
  VALUES ('task_old', 'key_0123456789ab', 'pic', 'pic', 'sandbox', '{"params":{},"output":{"kind":"image","width":8,"height":8,"format":"png"}}', 'queued', 1, 1, 1)`;

async function expectAccountsPerKey(store: Store): Promise<void> {
  const keys = await store.keys.list();
  expect(keys.map((k) => [k.id, k.accountId])).toEqual([
    ['key_0123456789ab', 'acct_0123456789ab'],
    ['key_ba9876543210', 'acct_ba9876543210'],
  ]);
  expect((await store.credits.listAccounts()).map((a) => [a.id, a.name, a.availableMicro])).toEqual([
    ['acct_0123456789ab', 'alice', 0],
    ['acct_ba9876543210', 'bob', 0],
  ]);
  expect((await store.tasks.get('task_old'))?.charge).toBeNull();
  expect(await store.credits.reconcile()).toMatchObject({ mismatched: [], unsettled: [], doubled: [], open: 0, accounts: 2 });
}

const unavailable = await postgresUnavailable();

describe('credits migration', () => {
  it('SQLite: every existing key gets an account', async () => {
    const file = path.join(tempDir(), 'mediagate.db');
    const db = new Database(file);
    migrateSqlite(db, SQLITE_CREDITS_VERSION - 1);
    for (const [id, name, hash] of KEYS)
      db.prepare('INSERT INTO api_keys (id, name, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?)').run(id, name, 'mg_xxxxx', hash, 1);
    db.exec(TASK);
    db.close();
    const store = openSqliteStore(file);
    try {
      await expectAccountsPerKey(store);
    } finally {
      await store.close();
    }
  });

  const database = postgresDatabase();
  it.skipIf(unavailable !== undefined)(`PostgreSQL: every existing key gets an account${unavailable ? ` (skipped: ${unavailable})` : ''}`, async () => {
    const url = await database.empty();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      await migratePostgres(pool, POSTGRES_CREDITS_VERSION - 1);
      for (const [id, name, hash] of KEYS)
        await pool.query('INSERT INTO api_keys (id, name, prefix, hash, created_at) VALUES ($1, $2, $3, $4, $5)', [id, name, 'mg_xxxxx', hash, 1]);
      await pool.query(TASK);
    } finally {
      await pool.end();
    }
    const store = await openPostgresStore({ url });
    try {
      await expectAccountsPerKey(store);
    } finally {
      await store.close();
    }
  });
});
