import type Database from 'better-sqlite3';
import type { ChatUsageRecord, UsageStore } from '../types.js';

/** How long recorded rows wait to be written together. */
export const USAGE_FLUSH_MS = 20;

/**
 * SQLite usage ledger: one row per chat completion. Rows are written in batches, one transaction
 * per {@link USAGE_FLUSH_MS} (streams that end together cost one commit, not one each, on the path
 * where the next requests wait); a read through this store writes what is pending first, and
 * `flush()` runs before the database closes. A crash (kill -9) can lose at most the rows of the
 * last {@link USAGE_FLUSH_MS} (G80).
 */
export class SqliteUsageStore implements UsageStore {
  private readonly insertStmt: Database.Statement;
  private readonly byKeyStmt: Database.Statement;
  private readonly insertAll: (rows: readonly ChatUsageRecord[]) => void;
  private pending: ChatUsageRecord[] = [];
  private scheduled = false;

  /** `onError`: a deferred write failed; its rows stay pending and are tried again a second later. */
  constructor(private readonly db: Database.Database, private readonly onError: (err: unknown, rows: number) => void = () => undefined) {
    this.insertStmt = db.prepare(`INSERT INTO chat_usage (key_id, model, request_id, prompt_tokens, completion_tokens, created_at)
      VALUES (?, ?, ?, ?, ?, ?)`);
    this.byKeyStmt = db.prepare(`SELECT model, COUNT(*) AS requests, SUM(prompt_tokens) AS promptTokens,
      SUM(completion_tokens) AS completionTokens FROM chat_usage WHERE key_id = ? AND created_at >= ? GROUP BY model ORDER BY model`);
    this.insertAll = db.transaction((rows: readonly ChatUsageRecord[]) => {
      for (const u of rows) this.insertStmt.run(u.keyId, u.model, u.requestId, u.promptTokens, u.completionTokens, u.createdAt);
    });
  }

  recordChatUsage(u: ChatUsageRecord): void {
    this.pending.push(u);
    if (!this.scheduled) {
      this.scheduled = true;
      setTimeout(this.deferredFlush, USAGE_FLUSH_MS).unref();
    }
  }

  private readonly deferredFlush = (): void => {
    this.scheduled = false;
    try {
      this.flush();
    } catch (err) {
      this.onError(err, this.pending.length);
      this.scheduled = true;
      setTimeout(this.deferredFlush, 1000).unref();
    }
  };

  /** Writes the rows recorded since the last flush (no-op when none, or once the database closed). */
  flush(): void {
    if (this.pending.length === 0 || !this.db.open) return;
    this.insertAll(this.pending); // all or none: on failure the rows stay pending
    this.pending = [];
  }

  chatUsageByKey(keyId: string, since = 0): Array<{ model: string; requests: number; promptTokens: number; completionTokens: number }> {
    this.flush();
    return this.byKeyStmt.all(keyId, since) as Array<{ model: string; requests: number; promptTokens: number; completionTokens: number }>;
  }
}
