/**
 * Store contract, KeyStore (lookups by hash, listing, revocation, per-key rate limits; the hash is
 * never handed out) and UsageStore (chat token totals per key and model; rows recorded through a
 * store are seen by its next read, however the backend batches its writes).
 */
import { describe, expect, it } from 'vitest';
import type { ApiKeyRecord, ChatUsageRecord } from '../../src/store/types.js';
import { T, useStore, type OpenStore } from './store-contract-helpers.js';

const key = (id: string, createdAt = T): ApiKeyRecord & { hash: string } => ({
  id,
  name: `name of ${id}`,
  accountId: `acct_${id}`,
  prefix: `mg_${id.slice(-5)}`,
  createdAt,
  revokedAt: null,
  hash: `hash-${id}`,
});

/** The record as the store answers it: without the hash; rate limits and spending cap null until set. */
const answered = ({ hash: _hash, ...record }: ApiKeyRecord & { hash: string }, over: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  ...record,
  submitRate: null,
  queryRate: null,
  spendCapMicro: null,
  webhookUrl: null,
  role: 'caller',
  models: null,
  expiresAt: null,
  maxInFlight: null,
  ...over,
});

/** Optional rate fields may be absent or null before they are set: compare them as null. */
const normalised = (k: ApiKeyRecord | undefined) => k && { ...k, submitRate: k.submitRate ?? null, queryRate: k.queryRate ?? null };

export function keyStoreContract(open: OpenStore): void {
  describe('keys: lookups, listing, revocation, rate limits', () => {
    const s = useStore(open);

    it('finds a key by its hash, without handing out the hash', async () => {
      const store = s();
      const k = key('key_00001');
      await store.keys.insert(k);
      const found = await store.keys.findActiveByHash(k.hash);
      expect(found).not.toHaveProperty('hash');
      expect(normalised(found)).toEqual(answered(k));
      expect(normalised(await store.keys.findByHash(k.hash))).toEqual(answered(k));
      expect(await store.keys.findActiveByHash('hash-unknown')).toBeUndefined();
      expect(await store.keys.findByHash('hash-unknown')).toBeUndefined();
    });

    it("insert keeps a key's own rate limits and spending cap when given", async () => {
      const store = s();
      const k = { ...key('key_00009'), submitRate: 7, queryRate: 70, spendCapMicro: 5_000_000 };
      await store.keys.insert(k);
      expect(await store.keys.findActiveByHash(k.hash)).toMatchObject({ submitRate: 7, queryRate: 70, spendCapMicro: 5_000_000 });
    });

    it('lists every key, revoked ones included, oldest first, without hashes', async () => {
      const store = s();
      expect(await store.keys.list()).toEqual([]);
      const [late, early, middle] = [key('key_00300', T + 300), key('key_00100', T + 100), key('key_00200', T + 200)];
      for (const k of [late!, early!, middle!]) await store.keys.insert(k);
      await store.keys.revoke(middle!.id, T + 400);
      const list = await store.keys.list();
      for (const k of list) expect(k).not.toHaveProperty('hash');
      expect(list.map(normalised)).toEqual([answered(early!), answered(middle!, { revokedAt: T + 400 }), answered(late!)]);
    });

    it('revoke by id: true once; the key is no longer active (also after it was looked up) but still found and listed', async () => {
      const store = s();
      const [a, b] = [key('key_0000a'), key('key_0000b')];
      await store.keys.insert(a);
      await store.keys.insert(b);
      expect((await store.keys.findActiveByHash(a.hash))?.id).toBe(a.id); // a backend may cache this lookup
      expect(await store.keys.revoke(a.id, T + 5)).toBe(true);
      expect(await store.keys.revoke(a.id, T + 6)).toBe(false);
      expect(await store.keys.revoke('key_missing', T + 6)).toBe(false);
      expect(await store.keys.findActiveByHash(a.hash)).toBeUndefined();
      expect((await store.keys.findByHash(a.hash))?.revokedAt).toBe(T + 5);
      expect((await store.keys.list()).find((k) => k.id === a.id)?.revokedAt).toBe(T + 5);
      expect((await store.keys.findActiveByHash(b.hash))?.revokedAt).toBeNull();
    });

    it("setRateLimits sets and clears (null) a key's own limits, seen by the next lookup; an unknown id is false", async () => {
      const store = s();
      const k = key('key_00rate');
      await store.keys.insert(k);
      await store.keys.insert(key('key_other'));
      expect(normalised(await store.keys.findActiveByHash(k.hash))).toMatchObject({ submitRate: null, queryRate: null });
      expect(await store.keys.setRateLimits(k.id, { submitRate: 5, queryRate: 50 })).toBe(true);
      expect(await store.keys.findActiveByHash(k.hash)).toMatchObject({ submitRate: 5, queryRate: 50 });
      expect((await store.keys.list()).find((x) => x.id === k.id)).toMatchObject({ submitRate: 5, queryRate: 50 });
      expect(normalised(await store.keys.findActiveByHash('hash-key_other'))).toMatchObject({ submitRate: null, queryRate: null });
      expect(await store.keys.setRateLimits(k.id, { submitRate: 7, queryRate: null })).toBe(true);
      expect(normalised(await store.keys.findActiveByHash(k.hash))).toMatchObject({ submitRate: 7, queryRate: null });
      expect(await store.keys.setRateLimits(k.id, { submitRate: null, queryRate: null })).toBe(true);
      expect(normalised(await store.keys.findByHash(k.hash))).toMatchObject({ submitRate: null, queryRate: null });
      expect(await store.keys.setRateLimits('key_missing', { submitRate: 1, queryRate: 1 })).toBe(false);
    });

    it('setRateLimits works on a revoked key too (the key exists)', async () => {
      const store = s();
      const k = key('key_0revo');
      await store.keys.insert(k);
      await store.keys.revoke(k.id, T + 1);
      expect(await store.keys.setRateLimits(k.id, { submitRate: 3, queryRate: 4 })).toBe(true);
      expect(await store.keys.findByHash(k.hash)).toMatchObject({ submitRate: 3, queryRate: 4, revokedAt: T + 1 });
    });
  });
}

const usage = (over: Partial<ChatUsageRecord> = {}): ChatUsageRecord => ({
  keyId: 'key_u',
  model: 'chat-2.5-flash',
  requestId: 'chatcmpl-1',
  promptTokens: 10,
  completionTokens: 5,
  createdAt: T,
  ...over,
});

type Totals = { model: string; requests: number; promptTokens: number; completionTokens: number };
const byModel = (rows: Totals[]): Totals[] => [...rows].sort((a, b) => a.model.localeCompare(b.model));

export function usageStoreContract(open: OpenStore): void {
  describe('usage: chat token totals (recordChatUsage, chatUsageByKey)', () => {
    const s = useStore(open);

    it("sums a key's rows per model; other keys are not counted", async () => {
      const store = s();
      await store.usage.recordChatUsage(usage({ requestId: 'r1', promptTokens: 10, completionTokens: 5 }));
      await store.usage.recordChatUsage(usage({ requestId: 'r2', promptTokens: 1, completionTokens: 2, createdAt: T + 1000 }));
      await store.usage.recordChatUsage(usage({ requestId: 'r3', model: 'chat-2.5-pro', promptTokens: 100, completionTokens: 0 }));
      await store.usage.recordChatUsage(usage({ requestId: 'r4', keyId: 'key_other', promptTokens: 1000, completionTokens: 1000 }));
      expect(byModel(await store.usage.chatUsageByKey('key_u'))).toEqual([
        { model: 'chat-2.5-flash', requests: 2, promptTokens: 11, completionTokens: 7 },
        { model: 'chat-2.5-pro', requests: 1, promptTokens: 100, completionTokens: 0 },
      ]);
      expect(await store.usage.chatUsageByKey('key_other')).toEqual([{ model: 'chat-2.5-flash', requests: 1, promptTokens: 1000, completionTokens: 1000 }]);
      expect(await store.usage.chatUsageByKey('key_none')).toEqual([]);
    });

    it('since: only rows created at or after that time', async () => {
      const store = s();
      for (const [i, createdAt] of [T, T + 1000, T + 2000].entries()) {
        await store.usage.recordChatUsage(usage({ requestId: `r${i}`, promptTokens: 1, completionTokens: 10 ** i, createdAt }));
      }
      expect(await store.usage.chatUsageByKey('key_u', T + 1000)).toEqual([{ model: 'chat-2.5-flash', requests: 2, promptTokens: 2, completionTokens: 110 }]);
      expect(await store.usage.chatUsageByKey('key_u', T + 1001)).toEqual([{ model: 'chat-2.5-flash', requests: 1, promptTokens: 1, completionTokens: 100 }]);
      expect(await store.usage.chatUsageByKey('key_u', T + 2001)).toEqual([]);
      expect(await store.usage.chatUsageByKey('key_u')).toEqual([{ model: 'chat-2.5-flash', requests: 3, promptTokens: 3, completionTokens: 111 }]);
    });

    it('a read sees every row recorded through the same store before it, at once (however writes are batched)', async () => {
      const store = s();
      for (let i = 0; i < 250; i++) await store.usage.recordChatUsage(usage({ requestId: `r${i}`, promptTokens: 2, completionTokens: 3 }));
      expect(await store.usage.chatUsageByKey('key_u')).toEqual([{ model: 'chat-2.5-flash', requests: 250, promptTokens: 500, completionTokens: 750 }]);
      await store.usage.recordChatUsage(usage({ requestId: 'r250', promptTokens: 1, completionTokens: 1 }));
      expect(await store.usage.chatUsageByKey('key_u')).toEqual([{ model: 'chat-2.5-flash', requests: 251, promptTokens: 501, completionTokens: 751 }]);
    });
  });
}
