/** Uploaded assets and the asset store. Part of the store contract (types.ts). */
/** An uploaded medium that passed (or failed) review, usable as `assetId://{id}` by its owner. */
export interface AssetRecord {
  id: string;
  ownerKeyId: string;
  status: 'approved' | 'rejected';
  /** Why review rejected it, or null. */
  reason: string | null;
  kind: 'image' | 'video' | 'audio' | null;
  /** `png`, `mp4`, `wav`, ... as probed; null when unreadable. */
  format: string | null;
  width: number | null;
  height: number | null;
  /** Seconds (video, audio). */
  duration: number | null;
  fps: number | null;
  bytes: number;
  /** File name in the asset's folder; null for a rejected asset (nothing is kept). */
  file: string | null;
  /** Unix ms. */
  createdAt: number;
  expiresAt: number;
}

export interface AssetStore {
  /**
   * Inserts the asset unless its owner's approved, unexpired assets plus this one would exceed
   * `quotaBytes` (checked and inserted in one transaction); false when over quota.
   */
  insertWithinQuota(asset: AssetRecord, quotaBytes: number, now: number): Promise<boolean>;
  /** The asset only if `ownerKeyId` owns it. */
  getOwned(id: string, ownerKeyId: string): Promise<AssetRecord | undefined>;
  /** Assets whose retention ended before `now`. */
  listExpired(now: number, limit: number): Promise<AssetRecord[]>;
  delete(id: string): Promise<boolean>;
}
