import type Database from 'better-sqlite3';
import { assetOfRow, type AssetRow } from '../asset-rows.js';
import type { AssetRecord, AssetStore } from '../types.js';

/** SQLite asset store: the quota check and the insert share one IMMEDIATE transaction. */
export class SqliteAssetStore implements AssetStore {
  private readonly insertStmt: Database.Statement;
  private readonly usedStmt: Database.Statement;
  private readonly getOwnedStmt: Database.Statement;
  private readonly expiredStmt: Database.Statement;
  private readonly deleteStmt: Database.Statement;
  private readonly insertChecked: Database.Transaction<(asset: AssetRecord, quotaBytes: number, now: number) => boolean>;

  constructor(db: Database.Database) {
    this.insertStmt = db.prepare(`INSERT INTO assets (id, owner_key_id, status, reason, kind, format, width, height, duration, fps,
      bytes, file, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.usedStmt = db
      .prepare(`SELECT COALESCE(SUM(bytes), 0) AS used FROM assets
      WHERE owner_key_id = ? AND status = 'approved' AND expires_at > ?`)
      .pluck();
    this.getOwnedStmt = db.prepare('SELECT * FROM assets WHERE id = ? AND owner_key_id = ?');
    this.expiredStmt = db.prepare('SELECT * FROM assets WHERE expires_at < ? ORDER BY expires_at LIMIT ?');
    this.deleteStmt = db.prepare('DELETE FROM assets WHERE id = ?');
    this.insertChecked = db.transaction((a: AssetRecord, quotaBytes: number, now: number): boolean => {
      if (a.status === 'approved' && (this.usedStmt.get(a.ownerKeyId, now) as number) + a.bytes > quotaBytes) return false;
      this.insertStmt.run(
        a.id,
        a.ownerKeyId,
        a.status,
        a.reason,
        a.kind,
        a.format,
        a.width,
        a.height,
        a.duration,
        a.fps,
        a.bytes,
        a.file,
        a.createdAt,
        a.expiresAt,
      );
      return true;
    });
  }

  async insertWithinQuota(asset: AssetRecord, quotaBytes: number, now: number): Promise<boolean> {
    return this.insertChecked.immediate(asset, quotaBytes, now);
  }

  async getOwned(id: string, ownerKeyId: string): Promise<AssetRecord | undefined> {
    const row = this.getOwnedStmt.get(id, ownerKeyId) as AssetRow | undefined;
    return row && assetOfRow(row);
  }

  async listExpired(now: number, limit: number): Promise<AssetRecord[]> {
    return (this.expiredStmt.all(now, limit) as AssetRow[]).map(assetOfRow);
  }

  async delete(id: string): Promise<boolean> {
    return this.deleteStmt.run(id).changes === 1;
  }
}
