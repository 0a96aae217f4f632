import { describe, expect, it } from 'vitest';
import { mediaRefs } from '../src/contract/media-refs.js';
import type { NewTask, Store } from '../src/store/types.js';
import { cancelTask, claimNextTask, completeTask, failTask, recoverLapsedTask, requeueTask } from '../src/tasks/states.js';

let seq = 0;
export function newTask(over: Partial<NewTask> = {}): NewTask {
  seq++;
  return {
    id: `task_contract_${seq}_${Math.random().toString(36).slice(2)}`, ownerKeyId: 'key_a', family: 'pic', form: null,
    model: 'pic', provider: 'sandbox', request: { params: { prompt: 'x' }, output: { kind: 'image', width: 8, height: 8, format: 'png' }, media: mediaRefs() },
    amount: 1, createdAt: Date.now() + seq, ...over,
  };
}

/** The behaviour every Store implementation must have; run it from each implementation's test file. */
export function runStoreContract(name: string, open: () => Promise<Store> | Store): void {
  describe(`store contract: ${name}`, () => {
    it('inserts and reads back a task, scoped to its owner', async () => {
      const store = await open();
      const t = store.tasks.insert(newTask());
      expect(t.status).toBe('queued');
      expect(store.tasks.get(t.id)?.request).toEqual(newTaskShape());
      expect(store.tasks.getOwned(t.id, 'key_a')?.id).toBe(t.id);
      expect(store.tasks.getOwned(t.id, 'key_b')).toBeUndefined();
      store.close();
    });

    it('claims oldest first, only queued, only the given providers, only when due', async () => {
      const store = await open();
      const a = store.tasks.insert(newTask({ createdAt: 1000 }));
      const b = store.tasks.insert(newTask({ createdAt: 2000 }));
      store.tasks.insert(newTask({ createdAt: 500, provider: 'other' }));
      expect(claimNextTask(store.tasks, ['sandbox'], 'w1', 1000)?.id).toBe(a.id);
      expect(claimNextTask(store.tasks, ['sandbox'], 'w2', 1000)?.id).toBe(b.id);
      expect(claimNextTask(store.tasks, ['sandbox'], 'w3', 1000)).toBeUndefined();
      const claimedB = store.tasks.get(b.id)!;
      expect(claimedB).toMatchObject({ status: 'processing', leaseOwner: 'w2', attempts: 1 });
      requeueTask(store.tasks, claimedB, 'w2', Date.now() + 60_000);
      expect(claimNextTask(store.tasks, ['sandbox'], 'w3', 1000)).toBeUndefined();
      expect(store.tasks.nextRunAfter(['sandbox'])).toBeGreaterThan(Date.now());
      store.close();
    });

    it('finishes a task once: the second completion and a non-holder are refused', async () => {
      const store = await open();
      store.tasks.insert(newTask());
      const claimed = claimNextTask(store.tasks, ['sandbox'], 'w1', 1000)!;
      expect(completeTask(store.tasks, claimed, 'w2', { files: [] }, 1)).toBeUndefined();
      expect(completeTask(store.tasks, claimed, 'w1', { files: [] }, 1)?.status).toBe('completed');
      expect(completeTask(store.tasks, claimed, 'w1', { files: [] }, 1)).toBeUndefined();
      expect(failTask(store.tasks, claimed, 'w1', 'late', null)).toBeUndefined();
      expect(store.tasks.get(claimed.id)?.status).toBe('completed');
      store.close();
    });

    it('a cancel wins over a late completion', async () => {
      const store = await open();
      store.tasks.insert(newTask());
      const claimed = claimNextTask(store.tasks, ['sandbox'], 'w1', 1000)!;
      expect(cancelTask(store.tasks, claimed, null)?.status).toBe('cancelled');
      expect(completeTask(store.tasks, claimed, 'w1', { files: [] }, 1)).toBeUndefined();
      expect(cancelTask(store.tasks, claimed, null)).toBeUndefined();
      store.close();
    });

    it('lapsed leases are listed and recovered only while still lapsed', async () => {
      const store = await open();
      store.tasks.insert(newTask());
      const claimed = claimNextTask(store.tasks, ['sandbox'], 'w1', 10, Date.now() - 1000)!;
      const lapsed = store.tasks.listLapsedLeases(Date.now(), 10);
      expect(lapsed.map((t) => t.id)).toContain(claimed.id);
      expect(store.tasks.renewLease(claimed.id, 'w1', Date.now() + 60_000)).toBe(true);
      expect(recoverLapsedTask(store.tasks, lapsed.find((t) => t.id === claimed.id)!)).toBeUndefined();
      expect(store.tasks.renewLease(claimed.id, 'w1', Date.now() - 1)).toBe(true);
      expect(recoverLapsedTask(store.tasks, store.tasks.get(claimed.id)!)?.status).toBe('queued');
      expect(store.tasks.renewLease(claimed.id, 'w1', Date.now() + 1000)).toBe(false);
      store.close();
    });

    it('progress only rises and only for the lease holder', async () => {
      const store = await open();
      store.tasks.insert(newTask());
      const c = claimNextTask(store.tasks, ['sandbox'], 'w1', 1000)!;
      expect(store.tasks.setProgress(c.id, 'w1', 40)).toBe(true);
      store.tasks.setProgress(c.id, 'w1', 20);
      expect(store.tasks.setProgress(c.id, 'w2', 90)).toBe(false);
      expect(store.tasks.get(c.id)?.progress).toBe(40);
      store.close();
    });

    it('lists expired tasks, clears expiry, deletes', async () => {
      const store = await open();
      store.tasks.insert(newTask());
      const c = claimNextTask(store.tasks, ['sandbox'], 'w1', 1000)!;
      completeTask(store.tasks, c, 'w1', { files: [] }, Date.now() - 1);
      expect(store.tasks.listExpired(Date.now(), 10).map((t) => t.id)).toContain(c.id);
      store.tasks.clearExpiry(c.id);
      expect(store.tasks.listExpired(Date.now(), 10).map((t) => t.id)).not.toContain(c.id);
      expect(store.tasks.delete(c.id)).toBe(true);
      expect(store.tasks.get(c.id)).toBeUndefined();
      store.close();
    });

    it('inserts many tasks in one transaction: all or none', async () => {
      const store = await open();
      const batch = [newTask(), newTask(), newTask()];
      const records = store.tasks.insertMany(batch);
      expect(records.map((r) => r.id)).toEqual(batch.map((t) => t.id));
      for (const r of records) expect(store.tasks.get(r.id)).toEqual(r);
      const dup = newTask();
      expect(() => store.tasks.insertMany([dup, { ...batch[0]! }])).toThrow();
      expect(store.tasks.get(dup.id)).toBeUndefined();
      store.close();
    });

    it('reads a task by the hash of its active owner key only', async () => {
      const store = await open();
      store.keys.insert({ id: 'key_a', name: 'a', prefix: 'mg_aaaaa', createdAt: 1, revokedAt: null, hash: 'hash-a' });
      store.keys.insert({ id: 'key_b', name: 'b', prefix: 'mg_bbbbb', createdAt: 1, revokedAt: null, hash: 'hash-b' });
      const t = store.tasks.insert(newTask({ ownerKeyId: 'key_a' }));
      expect(store.tasks.getOwnedByKeyHash(t.id, 'hash-a')?.id).toBe(t.id);
      expect(store.tasks.getOwnedByKeyHash(t.id, 'hash-b')).toBeUndefined();
      expect(store.tasks.getOwnedByKeyHash('task_missing', 'hash-a')).toBeUndefined();
      store.keys.revoke('key_a', 2);
      expect(store.tasks.getOwnedByKeyHash(t.id, 'hash-a')).toBeUndefined();
      store.close();
    });

    it('a poll read sees every state change made since the previous one', async () => {
      const store = await open();
      store.keys.insert({ id: 'key_a', name: 'a', prefix: 'mg_aaaaa', createdAt: 1, revokedAt: null, hash: 'hash-a' });
      const t = store.tasks.insert(newTask({ ownerKeyId: 'key_a' }));
      const poll = () => store.tasks.getOwnedByKeyHash(t.id, 'hash-a');
      expect(poll()?.status).toBe('queued');
      const claimed = claimNextTask(store.tasks, ['sandbox'], 'w1', 1000)!;
      expect(poll()?.status).toBe('processing');
      store.tasks.setProgress(t.id, 'w1', 40);
      expect(poll()?.progress).toBe(40);
      completeTask(store.tasks, claimed, 'w1', { files: [] }, 99);
      expect(poll()).toMatchObject({ status: 'completed', expiresAt: 99 });
      store.tasks.clearExpiry(t.id);
      expect(poll()?.expiresAt).toBeNull();
      store.tasks.delete(t.id);
      expect(poll()).toBeUndefined();
      store.close();
    });

    it('tells watchers about every task it changes, after the change', async () => {
      const store = await open();
      const t = store.tasks.insert(newTask());
      const seen: Array<[string, string | undefined]> = [];
      const stop = store.tasks.watchChanges((id) => seen.push([id, store.tasks.get(id)?.status]));
      const claimed = claimNextTask(store.tasks, ['sandbox'], 'w1', 1000)!;
      completeTask(store.tasks, claimed, 'w1', { files: [] }, 1);
      expect(completeTask(store.tasks, claimed, 'w1', { files: [] }, 1)).toBeUndefined(); // refused: no change, no call
      stop();
      store.tasks.delete(t.id);
      expect(seen).toEqual([[t.id, 'processing'], [t.id, 'completed']]);
      expect(store.tasks.changedElsewhere()).toBe(false);
      store.close();
    });

    it('counts a key\'s queued and processing tasks, up to a bound', async () => {
      const store = await open();
      for (let i = 0; i < 4; i++) store.tasks.insert(newTask({ ownerKeyId: 'key_if' }));
      store.tasks.insert(newTask({ ownerKeyId: 'key_other' }));
      expect(store.tasks.countInFlight('key_if', 100)).toBe(4);
      expect(store.tasks.countInFlight('key_if', 2)).toBe(2);
      const claimed = claimNextTask(store.tasks, ['sandbox'], 'w1', 1000)!;
      completeTask(store.tasks, claimed, 'w1', { files: [] }, 1);
      expect(store.tasks.countInFlight(claimed.ownerKeyId, 100)).toBe(claimed.ownerKeyId === 'key_if' ? 3 : 0);
      store.close();
    });

    it('records chat usage and sums it per key and model', async () => {
      const store = await open();
      const row = { keyId: 'key_u', model: 'chat-2.5-flash', requestId: 'r1', promptTokens: 10, completionTokens: 5, createdAt: 1000 };
      store.usage.recordChatUsage(row);
      store.usage.recordChatUsage({ ...row, requestId: 'r2', promptTokens: 1, completionTokens: 2, createdAt: 2000 });
      store.usage.recordChatUsage({ ...row, keyId: 'key_other' });
      expect(store.usage.chatUsageByKey('key_u')).toEqual([{ model: 'chat-2.5-flash', requests: 2, promptTokens: 11, completionTokens: 7 }]);
      expect(store.usage.chatUsageByKey('key_u', 1500)).toEqual([{ model: 'chat-2.5-flash', requests: 1, promptTokens: 1, completionTokens: 2 }]);
      store.close();
    });

    it('keys: active lookup by hash, revoke', async () => {
      const store = await open();
      store.keys.insert({ id: 'key_1', name: 'n', prefix: 'mg_abcde', createdAt: 1, revokedAt: null, hash: 'h1' });
      expect(store.keys.findActiveByHash('h1')?.id).toBe('key_1');
      expect(store.keys.findActiveByHash('h1')?.id).toBe('key_1');
      expect(store.keys.revoke('key_1', 2)).toBe(true);
      expect(store.keys.revoke('key_1', 3)).toBe(false);
      expect(store.keys.findActiveByHash('h1')).toBeUndefined();
      expect(store.keys.findByHash('h1')?.revokedAt).toBe(2);
      store.close();
    });
  });
}

function newTaskShape() {
  return { params: { prompt: 'x' }, output: { kind: 'image', width: 8, height: 8, format: 'png' }, media: mediaRefs() };
}
