/**
 * What `migrate-store` refuses and what a failed copy leaves (G187, G188): a row PostgreSQL cannot
 * hold, in a table copied after others, rolls back everything (the target stays empty and a new
 * run can go ahead); a source with a table the migration does not know is refused before anything
 * is written; a gateway still writing the SQLite file cannot commit while the copy holds its lock.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/auth/keys.js';
import { migrateSqliteToPostgres } from '../../src/store/migrate/copy-to-postgres.js';
import { MigrationError } from '../../src/store/migrate/sqlite-source.js';
import { openSqliteStore } from '../../src/store/sqlite/open.js';
import { tempDir } from '../helpers/temp-root.js';
import { postgresDatabase, postgresUnavailable } from '../helpers/postgres.js';

const unavailable = await postgresUnavailable();

async function sqliteWithKey(): Promise<string> {
  const file = path.join(tempDir(), 'mediagate.db');
  const store = openSqliteStore(file);
  await createApiKey(store.keys, 'alice');
  await store.close();
  return file;
}

async function targetCounts(url: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ keys: string; usage: string }>(
      'SELECT (SELECT COUNT(*) FROM api_keys) AS keys, (SELECT COUNT(*) FROM chat_usage) AS usage',
    );
    return { keys: Number(rows[0]!.keys), usage: Number(rows[0]!.usage) };
  } finally {
    await client.end();
  }
}

describe.skipIf(unavailable !== undefined)(`migrate-store failures${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  const database = postgresDatabase();

  it('a row PostgreSQL refuses (a NUL character) in the last table rolls back the tables copied before it', async () => {
    const url = await database.empty();
    const file = await sqliteWithKey();
    const db = new Database(file);
    db.prepare('INSERT INTO chat_usage (key_id, model, request_id, prompt_tokens, completion_tokens, created_at) VALUES (?, ?, ?, 1, 1, 0)').run(
      'k',
      'bad\u0000model',
      'r',
    );
    db.close();
    const progress: string[] = [];
    const failure = await migrateSqliteToPostgres({ sqliteFile: file, postgresUrl: url, onProgress: (p) => progress.push(p.table) }).catch(
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(MigrationError);
    expect((failure as Error).message).toMatch(/^chat_usage: PostgreSQL refused rows 1-1 \(.*\); nothing was copied$/);
    expect(progress).toContain('api_keys'); // copied, then rolled back
    expect(await targetCounts(url)).toEqual({ keys: 0, usage: 0 });

    // fixed at the source, a new run goes ahead on the same (still empty) target
    const fix = new Database(file);
    fix.prepare(`UPDATE chat_usage SET model = 'model'`).run();
    // the usage aggregates the row went into (G321) too
    for (const table of ['usage_hourly', 'usage_daily']) fix.prepare(`UPDATE ${table} SET model = 'model' WHERE model <> 'model'`).run();
    fix.close();
    const copied = await migrateSqliteToPostgres({ sqliteFile: file, postgresUrl: url });
    expect(copied.find((c) => c.table === 'api_keys')?.rows).toBe(1);
    expect(await targetCounts(url)).toEqual({ keys: 1, usage: 1 });
  }, 60_000);

  it('refuses a source with a table it does not copy, before writing anything', async () => {
    const url = await database.empty();
    const file = await sqliteWithKey();
    const db = new Database(file);
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY)');
    db.close();
    await expect(migrateSqliteToPostgres({ sqliteFile: file, postgresUrl: url })).rejects.toThrow(
      `${file} has tables this migration does not copy (notes); nothing was copied`,
    );
  });

  it('holds the SQLite write lock while copying: a writer waits until the copy ends', async () => {
    const url = await database.empty();
    const file = await sqliteWithKey();
    let writeDuringCopy: unknown;
    await migrateSqliteToPostgres({
      sqliteFile: file,
      postgresUrl: url,
      beforeCopy: async () => {
        const writer = new Database(file);
        writer.pragma('busy_timeout = 0');
        try {
          writer.prepare(`INSERT INTO fair_keys (key_id, last_vtime) VALUES ('late', 1)`).run();
        } catch (err) {
          writeDuringCopy = err;
        } finally {
          writer.close();
        }
      },
    });
    expect((writeDuringCopy as { code?: string }).code).toBe('SQLITE_BUSY');
    const after = new Database(file);
    expect(after.prepare(`INSERT INTO fair_keys (key_id, last_vtime) VALUES ('late', 1)`).run().changes).toBe(1); // released
    after.close();
  });
});
