import type Database from 'better-sqlite3';
import type { ChatUsageRecord, UsageStore } from '../types.js';

/** SQLite usage ledger: one row per chat completion. */
export class SqliteUsageStore implements UsageStore {
  private readonly insertStmt: Database.Statement;
  private readonly byKeyStmt: Database.Statement;

  constructor(db: Database.Database) {
    this.insertStmt = db.prepare(`INSERT INTO chat_usage (key_id, model, request_id, prompt_tokens, completion_tokens, created_at)
      VALUES (?, ?, ?, ?, ?, ?)`);
    this.byKeyStmt = db.prepare(`SELECT model, COUNT(*) AS requests, SUM(prompt_tokens) AS promptTokens,
      SUM(completion_tokens) AS completionTokens FROM chat_usage WHERE key_id = ? AND created_at >= ? GROUP BY model ORDER BY model`);
  }

  recordChatUsage(u: ChatUsageRecord): void {
    this.insertStmt.run(u.keyId, u.model, u.requestId, u.promptTokens, u.completionTokens, u.createdAt);
  }

  chatUsageByKey(keyId: string, since = 0): Array<{ model: string; requests: number; promptTokens: number; completionTokens: number }> {
    return this.byKeyStmt.all(keyId, since) as Array<{ model: string; requests: number; promptTokens: number; completionTokens: number }>;
  }
}
