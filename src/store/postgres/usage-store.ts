import type pg from 'pg';
import type { ChatUsageRecord, UsageStore } from '../types.js';

/**
 * PostgreSQL usage ledger: one row per chat completion, written when recorded (the call resolves
 * once it is committed; SQLite batches its rows instead, G80). Concurrent completions of many
 * processes write in parallel through the pool.
 */
export class PostgresUsageStore implements UsageStore {
  constructor(private readonly pool: pg.Pool) {}

  async recordChatUsage(u: ChatUsageRecord): Promise<void> {
    await this.pool.query({
      name: 'mg_usage_insert',
      text: `INSERT INTO chat_usage (key_id, model, request_id, prompt_tokens, completion_tokens, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      values: [u.keyId, u.model, u.requestId, u.promptTokens, u.completionTokens, u.createdAt],
    });
  }

  async chatUsageByKey(keyId: string, since = 0): Promise<Array<{ model: string; requests: number; promptTokens: number; completionTokens: number }>> {
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
