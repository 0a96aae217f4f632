import Database from 'better-sqlite3';
import { migrate } from '../../src/store/sqlite/migrations.js';
import { openSqliteStore, type SqliteOptions, type SqliteStore } from '../../src/store/sqlite/open.js';

let image: Buffer | undefined;

/**
 * A new in-memory SQLite store, copied from a schema migrated once per test process (G414)
 * instead of running every migration again: what `openSqliteStore(':memory:')` gives, cheaper.
 */
export function openMemoryStore(options: Omit<SqliteOptions, 'image'> = {}): SqliteStore {
  if (!image) {
    const db = new Database(':memory:');
    migrate(db);
    image = db.serialize();
    db.close();
  }
  return openSqliteStore(':memory:', { ...options, image });
}
