import type pg from 'pg';
import { KEY_COLUMNS, keyOfRow, type KeyRow } from '../key-rows.js';
import type { ApiKeyRecord, KeyStore } from '../types.js';

/**
 * PostgreSQL API key store; keys are looked up by their SHA-256 hash only. No read cache: a
 * revocation by any process is seen by the next lookup of every process (G182).
 */
export class PostgresKeyStore implements KeyStore {
  constructor(private readonly pool: pg.Pool) {}

  async insert(key: ApiKeyRecord & { hash: string }): Promise<void> {
    await this.pool.query({
      name: 'mg_keys_insert',
      text: 'INSERT INTO api_keys (id, name, prefix, hash, created_at, revoked_at, submit_rate, query_rate) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      values: [key.id, key.name, key.prefix, key.hash, key.createdAt, key.revokedAt, key.submitRate ?? null, key.queryRate ?? null],
    });
  }

  async findActiveByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    return this.one({ name: 'mg_keys_active', text: `SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = $1 AND revoked_at IS NULL`, values: [hash] });
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

  async revoke(id: string, now: number): Promise<boolean> {
    const { rowCount } = await this.pool.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [now, id]);
    return rowCount === 1;
  }

  private async one(query: pg.QueryConfig): Promise<ApiKeyRecord | undefined> {
    const { rows } = await this.pool.query<KeyRow>(query);
    return rows[0] && keyOfRow(rows[0]);
  }
}
