import type Database from 'better-sqlite3';
import type { ChatUsageRecord, UsageStore } from '../types.js';

/** How long recorded rows wait to be written together. */
export const USAGE_FLUSH_MS = 20;
/** Rows kept waiting while writes fail; beyond this the oldest are dropped (and reported). */
export const USAGE_MAX_PENDING = 100_000;

/** A deferred write that failed: what was tried, how many rows it concerned, and whether they were dropped. */
export type UsageWriteError = (err: unknown, info: { rows: number; dropped: boolean }) => void;

/**
 * SQLite usage ledger: one row per chat completion. Rows are written in batches, one transaction
 * per {@link USAGE_FLUSH_MS} (streams that end together cost one commit, not one each, on the path
 * where the next requests wait); a read through this store and a backup write what is pending first,
 * and so does closing. A crash (kill -9) can lose at most the rows of the last {@link USAGE_FLUSH_MS}
 * (G80). A failed batch stays pending and is tried again a second later (at most
 * {@link USAGE_MAX_PENDING} rows wait; every failure and every drop is reported to `onError`).
 */
export class SqliteUsageStore implements UsageStore {
  private readonly insertStmt: Database.Statement;
  private readonly byKeyStmt: Database.Statement;
  private readonly insertAll: (rows: readonly ChatUsageRecord[]) => void;
  private pending: ChatUsageRecord[] = [];
  private scheduled = false;

  constructor(
    private readonly db: Database.Database,
    private readonly onError: UsageWriteError = () => undefined,
  ) {
    this.insertStmt = db.prepare(`INSERT INTO chat_usage (key_id, model, request_id, prompt_tokens, completion_tokens, created_at)
      VALUES (?, ?, ?, ?, ?, ?)`);
    this.byKeyStmt = db.prepare(`SELECT model, COUNT(*) AS requests, SUM(prompt_tokens) AS promptTokens,
      SUM(completion_tokens) AS completionTokens FROM chat_usage WHERE key_id = ? AND created_at >= ? GROUP BY model ORDER BY model`);
    this.insertAll = db.transaction((rows: readonly ChatUsageRecord[]) => {
      for (const u of rows) this.insertStmt.run(u.keyId, u.model, u.requestId, u.promptTokens, u.completionTokens, u.createdAt);
    });
  }

  /** Queues a row; throws once the database is closed (the caller logs it: nothing is dropped silently). */
  async recordChatUsage(u: ChatUsageRecord): Promise<void> {
    if (!this.db.open) throw new Error('the chat usage ledger is closed');
    this.pending.push(u);
    if (this.pending.length > USAGE_MAX_PENDING) {
      const over = this.pending.length - USAGE_MAX_PENDING;
      this.pending.splice(0, over);
      this.onError(new Error(`more than ${USAGE_MAX_PENDING} usage rows are waiting to be written`), { rows: over, dropped: true });
    }
    this.schedule(USAGE_FLUSH_MS);
  }

  private schedule(ms: number): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setTimeout(this.deferredFlush, ms).unref();
  }

  private readonly deferredFlush = (): void => {
    this.scheduled = false;
    if (!this.db.open) return; // closing tried (and reported) the last write
    if (!this.tryFlush()) this.schedule(1000);
  };

  /** {@link flush}, reporting a failure instead of throwing it; false when rows are still pending. */
  tryFlush(): boolean {
    try {
      this.flush();
      return true;
    } catch (err) {
      this.onError(err, { rows: this.pending.length, dropped: false });
      return false;
    }
  }

  /** Writes the rows recorded since the last flush, all or none (on failure they stay pending). */
  flush(): void {
    if (this.pending.length === 0) return;
    this.insertAll(this.pending);
    this.pending = [];
  }

  async chatUsageByKey(keyId: string, since = 0): Promise<Array<{ model: string; requests: number; promptTokens: number; completionTokens: number }>> {
    this.tryFlush(); // a write failure is reported; the rows already written are still answered
    return this.byKeyStmt.all(keyId, since) as Array<{ model: string; requests: number; promptTokens: number; completionTokens: number }>;
  }
}
