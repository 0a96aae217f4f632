import type pg from 'pg';
import type { ApiKeyRecord, KeyStore } from '../types.js';

interface KeyRow { id: string; name: string; prefix: string; created_at: number; revoked_at: number | null; submit_rate: number | null; query_rate: number | null }

const COLUMNS = 'id, name, prefix, created_at, revoked_at, submit_rate, query_rate';
const toRecord = (r: KeyRow): ApiKeyRecord => ({
  id: r.id, name: r.name, prefix: r.prefix, createdAt: r.created_at, revokedAt: r.revoked_at,
  submitRate: r.submit_rate, queryRate: r.query_rate,
});

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
    return this.one({ name: 'mg_keys_active', text: `SELECT ${COLUMNS} FROM api_keys WHERE hash = $1 AND revoked_at IS NULL`, values: [hash] });
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    return this.one({ name: 'mg_keys_by_hash', text: `SELECT ${COLUMNS} FROM api_keys WHERE hash = $1`, values: [hash] });
  }

  async list(): Promise<ApiKeyRecord[]> {
    const { rows } = await this.pool.query<KeyRow>(`SELECT ${COLUMNS} FROM api_keys ORDER BY created_at, id COLLATE "C"`);
    return rows.map(toRecord);
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
    return rows[0] && toRecord(rows[0]);
  }
}
