import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Store } from '../types.js';
import { SqliteKeyStore } from './key-store.js';
import { migrate } from './migrations.js';
import { SqliteTaskStore } from './task-store.js';
import { SqliteUsageStore } from './usage-store.js';

export interface SqliteOptions {
  /** `full` fsyncs every commit (survives power loss); `normal` (default) survives process crashes. */
  synchronous?: 'normal' | 'full';
}

/** Opens (creating and migrating as needed) the embedded store at `<dataDir>/mediagate.db`; `:memory:` for tests. */
export function openSqliteStore(file: string, options: SqliteOptions = {}): Store {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  migrate(db);
  const ping = db.prepare('SELECT 1');
  return {
    tasks: new SqliteTaskStore(db),
    keys: new SqliteKeyStore(db),
    usage: new SqliteUsageStore(db),
    ping: () => { ping.get(); },
    close: () => { db.close(); },
  };
}
