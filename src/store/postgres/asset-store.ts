import type pg from 'pg';
import { assetOfRow, type AssetRow } from '../asset-rows.js';
import type { AssetRecord, AssetStore } from '../types.js';
import { inTransaction } from './transaction.js';
import { storable } from './storable.js';

const INSERT_SQL = `INSERT INTO assets (id, owner_key_id, status, reason, kind, format, width, height, duration, fps, bytes, file, created_at, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`;

/**
 * PostgreSQL asset store. The quota check and the insert share one transaction that first takes a
 * transaction-level advisory lock on the owner (G185): two uploads of one key, in any processes,
 * are checked one after the other, so together they cannot exceed the quota.
 */
export class PostgresAssetStore implements AssetStore {
  constructor(private readonly pool: pg.Pool) {}

  async insertWithinQuota(a: AssetRecord, quotaBytes: number, now: number): Promise<boolean> {
    const values = [a.id, a.ownerKeyId, a.status, a.reason, a.kind, a.format, a.width, a.height, a.duration, a.fps, a.bytes, a.file, a.createdAt, a.expiresAt];
    if (a.status !== 'approved') {
      await this.pool.query({ name: 'mg_assets_insert', text: INSERT_SQL, values });
      return true;
    }
    return inTransaction(this.pool, async (client) => {
      await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('mediagate asset quota ' || $1, 0))`, [a.ownerKeyId]);
      const { rows } = await client.query<{ used: number }>({
        name: 'mg_assets_used',
        text: `SELECT COALESCE(SUM(bytes), 0)::bigint AS used FROM assets WHERE owner_key_id = $1 AND status = 'approved' AND expires_at > $2`,
        values: [a.ownerKeyId, now],
      });
      if (rows[0]!.used + a.bytes > quotaBytes) return false;
      await client.query({ name: 'mg_assets_insert', text: INSERT_SQL, values });
      return true;
    });
  }

  async getOwned(id: string, ownerKeyId: string): Promise<AssetRecord | undefined> {
    if (!storable(id)) return undefined;
    const { rows } = await this.pool.query<AssetRow>({
      name: 'mg_assets_get_owned',
      text: 'SELECT * FROM assets WHERE id = $1 AND owner_key_id = $2',
      values: [id, ownerKeyId],
    });
    return rows[0] && assetOfRow(rows[0]);
  }

  async listExpired(now: number, limit: number): Promise<AssetRecord[]> {
    const { rows } = await this.pool.query<AssetRow>({
      name: 'mg_assets_expired',
      text: 'SELECT * FROM assets WHERE expires_at < $1 ORDER BY expires_at LIMIT $2',
      values: [now, limit],
    });
    return rows.map(assetOfRow);
  }

  async delete(id: string): Promise<boolean> {
    if (!storable(id)) return false;
    const { rowCount } = await this.pool.query({ name: 'mg_assets_delete', text: 'DELETE FROM assets WHERE id = $1', values: [id] });
    return rowCount === 1;
  }
}
