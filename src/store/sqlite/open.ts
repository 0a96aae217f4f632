import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Logger } from 'pino';
import type { Store } from '../types.js';
import { SqliteAdminStore } from './admin-store.js';
import { SqliteAssetStore } from './asset-store.js';
import { SqliteAuditStore } from './audit-store.js';
import { SqliteWorkerStore } from './worker-store.js';
import { SqliteSessionStore } from './session-store.js';
import { SqliteCreditStore } from './credit-store.js';
import { SqliteIdempotencyStore } from './idempotency-store.js';
import { startBackgroundCheckpointer, type BackgroundCheckpointer } from './checkpointer.js';
import { SqliteKeyStore } from './key-store.js';
import { migrate } from './migrations.js';
import { SqliteReadCache } from './read-cache.js';
import { SqliteTaskStore, type OwnedTaskEntry } from './task-store.js';
import { SqliteUsageStore } from './usage-store.js';
import { SqliteWebhookStore } from './webhook-store.js';

export interface SqliteOptions {
  /** `full` fsyncs every commit (survives power loss); `normal` (default) survives process crashes. */
  synchronous?: 'normal' | 'full';
  /**
   * Run WAL checkpoints on a worker thread instead of inside commits (see checkpointer.ts); for
   * the long-running server. Short-lived users (the CLI, tests) keep SQLite's automatic checkpoint.
   */
  backgroundCheckpoint?: { intervalMs: number; logger?: Logger };
  /** Where failures of deferred writes (the usage ledger's end-of-turn batch) are logged. */
  logger?: Logger;
  /**
   * With `:memory:`, start from this database (`Database#serialize()`) instead of an empty one:
   * tests open hundreds of stores from one schema migrated once (G414); the migrations it lacks
   * still run.
   */
  image?: Buffer;
}

const AUTO_CHECKPOINT_PAGES = 1000; // SQLite's default
/** How long opening waits for other processes switching the same new file to WAL (G119). */
const WAL_SWITCH_WAIT_MS = 10_000;

/**
 * `journal_mode = WAL`, retried while another process holds the lock it needs: the switch can
 * answer SQLITE_BUSY at once, without the busy handler (two processes opening a new file together).
 */
function switchToWal(db: Database.Database): void {
  const deadline = Date.now() + WAL_SWITCH_WAIT_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (!code?.startsWith('SQLITE_BUSY') || Date.now() >= deadline) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.min(5 * attempt, 50)); // opening is synchronous
    }
  }
}

/** The embedded store: the whole contract, with its optional capabilities present. */
export type SqliteStore = Store & { tasks: SqliteTaskStore; backup(file: string): Promise<void> };

/** Opens (creating and migrating as needed) the embedded store at `<dataDir>/mediagate.db`; `:memory:` for tests. */
export function openSqliteStore(file: string, options: SqliteOptions = {}): SqliteStore {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  if (options.image && file !== ':memory:') throw new Error('an image opens only as :memory:');
  const db = new Database(options.image ?? file);
  db.pragma('busy_timeout = 5000'); // first: every step below may meet another process opening the file
  switchToWal(db);
  db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  db.pragma('foreign_keys = ON');
  migrate(db);
  let checkpointer: BackgroundCheckpointer | undefined;
  if (options.backgroundCheckpoint && file !== ':memory:') {
    db.pragma('wal_autocheckpoint = 0');
    checkpointer = startBackgroundCheckpointer(
      file,
      options.backgroundCheckpoint.intervalMs,
      () => {
        if (db.open) db.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
      },
      options.backgroundCheckpoint.logger,
    );
  }
  const ping = db.prepare('SELECT 1');
  const polls = new SqliteReadCache<OwnedTaskEntry>(db);
  const usage = new SqliteUsageStore(db, (err, { rows, dropped }) =>
    options.logger?.error(
      { err, rows },
      dropped ? 'dropped chat usage rows: too many were waiting to be written' : 'could not write chat usage rows; they stay pending',
    ),
  );
  return {
    tasks: new SqliteTaskStore(db, polls),
    keys: new SqliteKeyStore(db, new SqliteReadCache(db), () => polls.clear()),
    usage,
    assets: new SqliteAssetStore(db),
    credits: new SqliteCreditStore(db),
    idempotency: new SqliteIdempotencyStore(db),
    webhooks: new SqliteWebhookStore(db),
    audit: new SqliteAuditStore(db),
    workers: new SqliteWorkerStore(db),
    admin: new SqliteAdminStore(db),
    sessions: new SqliteSessionStore(db),
    ping: async () => {
      ping.get();
    },
    backup: async (target) => {
      usage.tryFlush();
      await db.backup(target);
    },
    close: async () => {
      usage.tryFlush(); // a failure is reported: those rows are lost with the process
      checkpointer?.stop();
      db.close();
    },
  };
}
