/**
 * Store contract, AssetStore: the per-key quota (G66-G68: approved, unexpired assets of one
 * key count; a rejected upload is recorded but keeps nothing, so it never counts), tenant-scoped
 * reads, the retention list and deletion.
 */
import { describe, expect, it } from 'vitest';
import { DAY, T, idsOf, newAsset, useStore, type OpenStore } from './store-contract-helpers.js';

const QUOTA = 1000;

export function assetStoreContract(open: OpenStore): void {
  describe('assets: quota (insertWithinQuota)', () => {
    const s = useStore(open);

    it('an asset within the quota is stored whole and read back by its owner only', async () => {
      const store = s();
      const image = newAsset({ bytes: 100 });
      const video = newAsset({ kind: 'video', format: 'mov', width: 1920, height: 1080, duration: 12.5, fps: 23.976, bytes: 200, file: 'asset.mov' });
      expect(await store.assets.insertWithinQuota(image, QUOTA, T)).toBe(true);
      expect(await store.assets.insertWithinQuota(video, QUOTA, T)).toBe(true);
      expect(await store.assets.getOwned(image.id, 'key_a')).toEqual(image);
      expect(await store.assets.getOwned(video.id, 'key_a')).toEqual(video);
      expect(await store.assets.getOwned(image.id, 'key_b')).toBeUndefined();
      expect(await store.assets.getOwned('asset_missing', 'key_a')).toBeUndefined();
    });

    it('the quota may be filled exactly; one byte more is refused and nothing of it is stored', async () => {
      const store = s();
      expect(await store.assets.insertWithinQuota(newAsset({ bytes: 600 }), QUOTA, T)).toBe(true);
      expect(await store.assets.insertWithinQuota(newAsset({ bytes: 400 }), QUOTA, T)).toBe(true); // 1000 of 1000
      const over = newAsset({ bytes: 1 });
      expect(await store.assets.insertWithinQuota(over, QUOTA, T)).toBe(false);
      expect(await store.assets.getOwned(over.id, 'key_a')).toBeUndefined();
    });

    it('an upload larger than the whole quota is refused on an empty account', async () => {
      const store = s();
      const big = newAsset({ bytes: QUOTA + 1 });
      expect(await store.assets.insertWithinQuota(big, QUOTA, T)).toBe(false);
      expect(await store.assets.getOwned(big.id, 'key_a')).toBeUndefined();
      expect(await store.assets.insertWithinQuota(newAsset({ bytes: QUOTA }), QUOTA, T)).toBe(true);
    });

    it('a rejected upload is recorded whatever its size and never counts against the quota', async () => {
      const store = s();
      const rejected = newAsset({ status: 'rejected', reason: 'file: aspect ratio 3.75 is outside (0.4, 2.5)', bytes: 5 * QUOTA, file: null });
      expect(await store.assets.insertWithinQuota(rejected, QUOTA, T)).toBe(true);
      expect(await store.assets.getOwned(rejected.id, 'key_a')).toEqual(rejected);
      expect(await store.assets.insertWithinQuota(newAsset({ bytes: QUOTA }), QUOTA, T)).toBe(true);
    });

    it('expired assets do not count', async () => {
      const store = s();
      const old = newAsset({ bytes: QUOTA, createdAt: T - 2 * DAY, expiresAt: T - 1 });
      expect(await store.assets.insertWithinQuota(old, QUOTA, T - 2 * DAY)).toBe(true);
      expect(await store.assets.insertWithinQuota(newAsset({ bytes: 1 }), QUOTA, T - 2)).toBe(false); // still counted before it expires
      expect(await store.assets.insertWithinQuota(newAsset({ bytes: QUOTA }), QUOTA, T)).toBe(true);
    });

    it("another key's assets do not count", async () => {
      const store = s();
      expect(await store.assets.insertWithinQuota(newAsset({ ownerKeyId: 'key_b', bytes: QUOTA }), QUOTA, T)).toBe(true);
      expect(await store.assets.insertWithinQuota(newAsset({ ownerKeyId: 'key_a', bytes: QUOTA }), QUOTA, T)).toBe(true);
      expect(await store.assets.insertWithinQuota(newAsset({ ownerKeyId: 'key_b', bytes: 1 }), QUOTA, T)).toBe(false);
    });

    it('deleting an asset gives its share back: true once, then false', async () => {
      const store = s();
      const a = newAsset({ bytes: QUOTA });
      expect(await store.assets.insertWithinQuota(a, QUOTA, T)).toBe(true);
      expect(await store.assets.insertWithinQuota(newAsset({ bytes: 1 }), QUOTA, T)).toBe(false);
      expect(await store.assets.delete(a.id)).toBe(true);
      expect(await store.assets.getOwned(a.id, 'key_a')).toBeUndefined();
      expect(await store.assets.delete(a.id)).toBe(false);
      expect(await store.assets.delete('asset_missing')).toBe(false);
      // an id holding NUL (PostgreSQL text cannot) names no asset
      expect(await store.assets.getOwned('asset_\u0000', 'key_a')).toBeUndefined();
      expect(await store.assets.delete('asset_\u0000')).toBe(false);
      expect(await store.assets.insertWithinQuota(newAsset({ bytes: 1 }), QUOTA, T)).toBe(true);
    });
  });

  describe('assets: retention (listExpired)', () => {
    const s = useStore(open);

    it('lists assets whose retention ended before now, rejected ones included, at most limit', async () => {
      const store = s();
      const created = T - 10 * DAY;
      const a = newAsset({ createdAt: created, expiresAt: T - 300 });
      const b = newAsset({ createdAt: created, expiresAt: T - 200, status: 'rejected', reason: 'file: is empty', file: null, ownerKeyId: 'key_b' });
      const c = newAsset({ createdAt: created, expiresAt: T + 100 });
      for (const x of [a, b, c]) expect(await store.assets.insertWithinQuota(x, QUOTA, created)).toBe(true);
      expect(await store.assets.listExpired(T - 1000, 10)).toEqual([]);
      const expired = await store.assets.listExpired(T, 10);
      expect(idsOf(expired)).toEqual([a.id, b.id].sort());
      expect(expired.find((x) => x.id === b.id)).toEqual(b);
      const one = await store.assets.listExpired(T, 1);
      expect(one).toHaveLength(1);
      expect([a.id, b.id]).toContain(one[0]!.id);
      expect(idsOf(await store.assets.listExpired(T + 1000, 10))).toEqual([a.id, b.id, c.id].sort());
      await store.assets.delete(a.id);
      expect(idsOf(await store.assets.listExpired(T, 10))).toEqual([b.id]);
      // "before now": an asset whose retention ends exactly now is not yet listed (as for tasks)
      expect(idsOf(await store.assets.listExpired(T + 100, 10))).toEqual([b.id]);
      expect(idsOf(await store.assets.listExpired(T + 101, 10))).toEqual([b.id, c.id].sort());
    });
  });
}
