import type pg from 'pg';
import { KEY_COLUMNS, keyOfRow, type KeyRow } from '../key-rows.js';
import type { ApiKeyRecord, KeyStore, NewAccount } from '../types.js';
import { createAccountQuery } from './credit-store.js';
import { inTransaction } from './transaction.js';
import { TurnBatch } from './turn-batch.js';

/**
 * PostgreSQL API key store; keys are looked up by their SHA-256 hash only. No read cache: a
 * revocation by any process is seen by the next lookup of every process (G182). The active-key
 * lookups of one event-loop turn are read in one query (G193).
 */
export class PostgresKeyStore implements KeyStore {
  private readonly activeByHash = new TurnBatch<string, ApiKeyRecord>((hash) => hash, (hashes) => this.readActive(hashes));

  constructor(private readonly pool: pg.Pool) {}

  async insert(key: ApiKeyRecord & { hash: string }, account?: NewAccount): Promise<void> {
    const insert: pg.QueryConfig = {
      name: 'mg_keys_insert',
      text: `INSERT INTO api_keys (id, name, prefix, hash, created_at, revoked_at, submit_rate, query_rate, account_id, spend_cap_micro)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      values: [key.id, key.name, key.prefix, key.hash, key.createdAt, key.revokedAt, key.submitRate ?? null, key.queryRate ?? null, key.accountId, key.spendCapMicro ?? null],
    };
    if (!account) {
      await this.pool.query(insert);
      return;
    }
    await inTransaction(this.pool, async (client) => {
      await client.query(createAccountQuery(account));
      await client.query(insert);
    });
  }

  findActiveByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    return this.activeByHash.get(hash);
  }

  private async readActive(hashes: string[]): Promise<Map<string, ApiKeyRecord>> {
    const { rows } = await this.pool.query<KeyRow & { hash: string }>(hashes.length === 1
      ? { name: 'mg_keys_active', text: `SELECT hash, ${KEY_COLUMNS} FROM api_keys WHERE hash = $1 AND revoked_at IS NULL`, values: hashes }
      : { name: 'mg_keys_active_many', text: `SELECT hash, ${KEY_COLUMNS} FROM api_keys WHERE hash = ANY($1::text[]) AND revoked_at IS NULL`, values: [hashes] });
    return new Map(rows.map(({ hash, ...row }) => [hash, keyOfRow(row)]));
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    return this.one({ name: 'mg_keys_by_hash', text: `SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = $1`, values: [hash] });
  }

  async list(): Promise<ApiKeyRecord[]> {
    const { rows } = await this.pool.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at, id COLLATE "C"`);
    return rows.map(keyOfRow);
  }

  async setRateLimits(id: string, limits: { submitRate: number | null; queryRate: number | null }): Promise<boolean> {
    const { rowCount } = await this.pool.query('UPDATE api_keys SET submit_rate = $1, query_rate = $2 WHERE id = $3', [limits.submitRate, limits.queryRate, id]);
    return rowCount === 1;
  }

  async setSpendCap(id: string, capMicro: number | null): Promise<boolean> {
    const { rowCount } = await this.pool.query('UPDATE api_keys SET spend_cap_micro = $1 WHERE id = $2', [capMicro, id]);
    return rowCount === 1;
  }

  async setWebhookUrl(id: string, url: string | null): Promise<boolean> {
    const { rowCount } = await this.pool.query('UPDATE api_keys SET webhook_url = $1 WHERE id = $2', [url, id]);
    return rowCount === 1;
  }

  async revoke(id: string, now: number): Promise<boolean> {
    const { rowCount } = await this.pool.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [now, id]);
    return rowCount === 1;
  }

  private async one(query: pg.QueryConfig): Promise<ApiKeyRecord | undefined> {
    const { rows } = await this.pool.query<KeyRow>(query);
    return rows[0] && keyOfRow(rows[0]);
  }
}
