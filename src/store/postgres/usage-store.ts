import type pg from 'pg';
import type { ChatUsageRecord, UsageStore } from '../types.js';

/**
 * PostgreSQL usage ledger: one row per chat completion, written when recorded (the call resolves
 * once it is committed; SQLite batches its rows instead, G80). Concurrent completions of many
 * processes write in parallel through the pool. The gateway does not wait for the write (a reply
 * never does), so a read first waits for the writes this instance has under way: a row recorded
 * through this store is seen by its next read, as the contract says, although the two queries run
 * on different pooled connections.
 */
export class PostgresUsageStore implements UsageStore {
  private readonly writing = new Set<Promise<unknown>>();

  constructor(private readonly pool: pg.Pool) {}

  async recordChatUsage(u: ChatUsageRecord): Promise<void> {
    const write = this.pool.query({
      name: 'mg_usage_insert',
      text: `INSERT INTO chat_usage (key_id, model, request_id, prompt_tokens, completion_tokens, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      values: [u.keyId, u.model, u.requestId, u.promptTokens, u.completionTokens, u.createdAt],
    });
    this.writing.add(write);
    try {
      await write;
    } finally {
      this.writing.delete(write);
    }
  }

  async chatUsageByKey(keyId: string, since = 0): Promise<Array<{ model: string; requests: number; promptTokens: number; completionTokens: number }>> {
    if (this.writing.size > 0) await Promise.allSettled([...this.writing]);
    // COUNT and SUM of integers are bigint: read as numbers (connect.ts); models in byte order, as SQLite sorts them
    const { rows } = await this.pool.query<{ model: string; requests: number; promptTokens: number; completionTokens: number }>({
      name: 'mg_usage_by_key',
      text: `SELECT model, COUNT(*) AS "requests", SUM(prompt_tokens) AS "promptTokens", SUM(completion_tokens) AS "completionTokens"
        FROM chat_usage WHERE key_id = $1 AND created_at >= $2 GROUP BY model ORDER BY model COLLATE "C"`,
      values: [keyId, since],
    });
    return rows;
  }
}
