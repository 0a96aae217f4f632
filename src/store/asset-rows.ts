/** The `assets` table's row shape and its mapping to records, shared by the SQLite and PostgreSQL stores (same columns). */
import type { AssetRecord } from './types.js';

export interface AssetRow {
  id: string;
  owner_key_id: string;
  status: AssetRecord['status'];
  reason: string | null;
  kind: AssetRecord['kind'];
  format: string | null;
  width: number | null;
  height: number | null;
  duration: number | null;
  fps: number | null;
  bytes: number;
  file: string | null;
  created_at: number;
  expires_at: number;
}

export const assetOfRow = (r: AssetRow): AssetRecord => ({
  id: r.id,
  ownerKeyId: r.owner_key_id,
  status: r.status,
  reason: r.reason,
  kind: r.kind,
  format: r.format,
  width: r.width,
  height: r.height,
  duration: r.duration,
  fps: r.fps,
  bytes: r.bytes,
  file: r.file,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});
