/**
 * Store contract, TaskStore part 2: leases and progress, lapsed leases, retention and deletion,
 * counting, the poll read by key hash and change notification.
 */
import { describe, expect, it } from 'vitest';
import type { InsertBounds, InsertRefusal, Store, TaskPatch, TaskRecord } from '../../src/store/types.js';
import { MINUTE, T, idsOf, newTask, useStore, type OpenStore } from './store-contract-helpers.js';
import { countTasksByStatus, insertTask, insertTasks } from '../helpers/task-rows.js';

/** processing -> a finished status by the lease holder, as the engine does it. */
async function finish(store: Store, id: string, workerId: string, patch: TaskPatch): Promise<void> {
  const done = await store.tasks.updateIf(id, { statusIn: ['processing'], leaseOwner: workerId }, { leaseOwner: null, leaseExpiresAt: null, ...patch });
  if (!done) throw new Error(`could not finish ${id}`);
}

const bound = (maxInFlight: number): InsertBounds => ({ maxInFlight, enforceCredits: false });
const inserted = (r: TaskRecord | InsertRefusal): r is TaskRecord => !('refused' in r);

export function taskLeasesContract(open: OpenStore): void {
  describe('tasks: leases and progress (renewLease, setProgress, listLapsedLeases)', () => {
    const s = useStore(open);

    it('renewLease: only the holder of a processing task', async () => {
      const store = s();
      const t = await insertTask(store.tasks, newTask());
      expect(await store.tasks.renewLease(t.id, 'w1', T + MINUTE)).toBe(false); // queued: nobody holds it
      await store.tasks.claimNext(['sandbox'], 'w1', T, T + 100);
      expect(await store.tasks.renewLease(t.id, 'w2', T + MINUTE)).toBe(false);
      expect(await store.tasks.renewLease(t.id, 'w1', T + MINUTE)).toBe(true);
      expect((await store.tasks.get(t.id))?.leaseExpiresAt).toBe(T + MINUTE);
      expect(await store.tasks.renewLease('task_missing', 'w1', T + MINUTE)).toBe(false);
      await finish(store, t.id, 'w1', { status: 'failed', error: 'x', finishedAt: T + 1 });
      expect(await store.tasks.renewLease(t.id, 'w1', T + 2 * MINUTE)).toBe(false);
    });

    it('setProgress: only the holder, and progress never goes down', async () => {
      const store = s();
      const t = await insertTask(store.tasks, newTask());
      expect(await store.tasks.setProgress(t.id, 'w1', 10)).toBe(false); // queued
      await store.tasks.claimNext(['sandbox'], 'w1', T, T + MINUTE);
      expect(await store.tasks.setProgress(t.id, 'w1', 40)).toBe(true);
      expect(await store.tasks.setProgress(t.id, 'w1', 20)).toBe(true); // the lease is held; the lower value is ignored
      expect(await store.tasks.setProgress(t.id, 'w2', 90)).toBe(false);
      expect((await store.tasks.get(t.id))?.progress).toBe(40);
      expect(await store.tasks.setProgress(t.id, 'w1', 55)).toBe(true);
      expect((await store.tasks.get(t.id))?.progress).toBe(55);
      await finish(store, t.id, 'w1', { status: 'completed', progress: 100, result: { files: [] }, finishedAt: T + 1 });
      expect(await store.tasks.setProgress(t.id, 'w1', 99)).toBe(false);
      expect((await store.tasks.get(t.id))?.progress).toBe(100);
    });

    it('listLapsedLeases: processing tasks whose lease ran out before now, at most limit', async () => {
      const store = s();
      const ids: string[] = [];
      for (const lease of [100, 200, 300]) {
        ids.push((await insertTask(store.tasks, newTask({ createdAt: T + lease })))!.id);
        await store.tasks.claimNext(['sandbox'], `w${lease}`, T, T + lease);
      }
      await insertTask(store.tasks, newTask()); // queued: no lease
      expect(await store.tasks.listLapsedLeases(T + 100, 10)).toEqual([]);
      const lapsed = await store.tasks.listLapsedLeases(T + 250, 10);
      expect(idsOf(lapsed)).toEqual([ids[0], ids[1]].sort());
      expect(lapsed.find((t) => t.id === ids[0])).toMatchObject({ status: 'processing', leaseOwner: 'w100', leaseExpiresAt: T + 100 });
      const one = await store.tasks.listLapsedLeases(T + 250, 1);
      expect(one).toHaveLength(1);
      expect([ids[0], ids[1]]).toContain(one[0]!.id);
      expect(idsOf(await store.tasks.listLapsedLeases(T + 1000, 10))).toEqual([...ids].sort());
    });

    it('listQueuedBefore: queued tasks created before the time, oldest first, at most limit; never a started or finished one (G249)', async () => {
      const store = s();
      const old1 = await insertTask(store.tasks, newTask({ createdAt: T - 3 * MINUTE }));
      const old2 = await insertTask(store.tasks, newTask({ createdAt: T - 2 * MINUTE }));
      const fresh = await insertTask(store.tasks, newTask({ createdAt: T + MINUTE }));
      const started = await insertTask(store.tasks, newTask({ createdAt: T - 4 * MINUTE, provider: 'other' }));
      await store.tasks.claimNext(['other'], 'w1', T, T + MINUTE);
      const cancelled = await insertTask(store.tasks, newTask({ createdAt: T - 5 * MINUTE }));
      await store.tasks.updateIf(cancelled.id, { statusIn: ['queued'] }, { status: 'cancelled', progress: 100, finishedAt: T });
      expect((await store.tasks.get(started.id))?.status).toBe('processing');
      expect((await store.tasks.listQueuedBefore(T, 10)).map((t) => t.id)).toEqual([old1.id, old2.id]);
      expect((await store.tasks.listQueuedBefore(T, 1)).map((t) => t.id)).toEqual([old1.id]);
      expect(await store.tasks.listQueuedBefore(T - 3 * MINUTE, 10)).toEqual([]); // created at that time: not before it
      expect((await store.tasks.listQueuedBefore(T + 2 * MINUTE, 10)).map((t) => t.id)).toEqual([old1.id, old2.id, fresh.id]);
    });

    it('a lapsed task is recovered only while still lapsed: a renewal in between wins', async () => {
      const store = s();
      const t = await insertTask(store.tasks, newTask());
      await store.tasks.claimNext(['sandbox'], 'w1', T, T + 100);
      const [lapsed] = await store.tasks.listLapsedLeases(T + 200, 10);
      expect(lapsed?.id).toBe(t.id);
      expect(await store.tasks.renewLease(t.id, 'w1', T + 10 * MINUTE)).toBe(true);
      const guard = { statusIn: ['processing'] as const, leaseOwner: lapsed!.leaseOwner!, leaseExpiredBefore: T + 200 };
      const recover = { status: 'queued', leaseOwner: null, leaseExpiresAt: null, runAfter: T + 200 } as const;
      expect(await store.tasks.updateIf(t.id, guard, recover)).toBeUndefined();
      expect(await store.tasks.listLapsedLeases(T + 200, 10)).toEqual([]);
      expect((await store.tasks.get(t.id))?.status).toBe('processing');
    });
  });

  describe('tasks: retention, deletion, counts (listExpired, clearExpiry, delete, countByStatus, countInFlight)', () => {
    const s = useStore(open);

    it('listExpired: finished tasks whose retention ended before now, at most limit; clearExpiry takes one off the list', async () => {
      const store = s();
      const ids: string[] = [];
      for (const [i, expiresAt] of [T + 100, T + 200, T + 300].entries()) {
        const t = await insertTask(store.tasks, newTask({ createdAt: T + i }));
        ids.push(t.id);
        await store.tasks.claimNext(['sandbox'], 'w1', T, T + MINUTE);
        await finish(store, t.id, 'w1', { status: 'completed', progress: 100, result: { files: [] }, finishedAt: T + 1, expiresAt });
      }
      await insertTask(store.tasks, newTask()); // queued: no expiry yet
      expect(await store.tasks.listExpired(T + 50, 10)).toEqual([]);
      expect(idsOf(await store.tasks.listExpired(T + 250, 10))).toEqual([ids[0], ids[1]].sort());
      // "before now": a task whose retention ends exactly now is not yet listed (as for assets)
      expect(idsOf(await store.tasks.listExpired(T + 200, 10))).toEqual([ids[0]]);
      const one = await store.tasks.listExpired(T + 250, 1);
      expect(one).toHaveLength(1);
      expect([ids[0], ids[1]]).toContain(one[0]!.id);
      await store.tasks.clearExpiry(ids[0]!);
      expect(idsOf(await store.tasks.listExpired(T + 250, 10))).toEqual([ids[1]]);
      expect(await store.tasks.get(ids[0]!)).toMatchObject({ status: 'completed', expiresAt: null });
    });

    it('delete forgets a task: true once, then false', async () => {
      const store = s();
      const t = await insertTask(store.tasks, newTask());
      const kept = await insertTask(store.tasks, newTask());
      expect(await store.tasks.delete(t.id)).toBe(true);
      expect(await store.tasks.get(t.id)).toBeUndefined();
      expect(await store.tasks.getOwned(t.id, t.ownerKeyId)).toBeUndefined();
      expect(await store.tasks.delete(t.id)).toBe(false);
      expect(await store.tasks.delete('task_missing')).toBe(false);
      expect((await store.tasks.get(kept.id))?.id).toBe(kept.id);
    });

    it('countByStatus counts every status, zeros included', async () => {
      const store = s();
      expect(await countTasksByStatus(store.tasks)).toEqual({ queued: 0, processing: 0, completed: 0, failed: 0, cancelled: 0 });
      const ids = (
        await insertTasks(
          store.tasks,
          Array.from({ length: 6 }, (_, i) => newTask({ createdAt: T + i })),
        )
      ).map((t) => t.id);
      for (let i = 0; i < 4; i++) await store.tasks.claimNext(['sandbox'], 'w1', T, T + MINUTE); // ids[0..3] processing
      await finish(store, ids[0]!, 'w1', { status: 'completed', progress: 100, result: { files: [] }, finishedAt: T });
      await finish(store, ids[1]!, 'w1', { status: 'failed', error: 'x', finishedAt: T });
      await store.tasks.updateIf(
        ids[2]!,
        { statusIn: ['queued', 'processing'] },
        { status: 'cancelled', finishedAt: T, leaseOwner: null, leaseExpiresAt: null },
      );
      expect(await countTasksByStatus(store.tasks)).toEqual({ queued: 2, processing: 1, completed: 1, failed: 1, cancelled: 1 });
    });

    it('liveCounts: queued and processing tasks by family, model and status, each group with its oldest createdAt; finished tasks left out', async () => {
      const store = s();
      expect(await store.tasks.liveCounts()).toEqual([]);
      const [a, b] = await insertTasks(store.tasks, [
        newTask({ createdAt: T + 1 }),
        newTask({ createdAt: T + 2 }),
        newTask({ createdAt: T + 3 }),
        newTask({ model: 'pic-2', createdAt: T + 4 }),
        newTask({ family: 'videos', model: 'videos', createdAt: T + 5 }),
      ]);
      // one key's tasks are claimed in the order they were submitted: a, then b
      expect((await store.tasks.claimNext(['sandbox'], 'w1', T + 10, T + MINUTE))?.id).toBe(a!.id);
      expect((await store.tasks.claimNext(['sandbox'], 'w1', T + 10, T + MINUTE))?.id).toBe(b!.id);
      await finish(store, b!.id, 'w1', { status: 'completed', progress: 100, result: { files: [] }, finishedAt: T + 20 });
      const key = (r: { family: string; model: string; status: string }): string => `${r.family}/${r.model}/${r.status}`;
      const rows = (await store.tasks.liveCounts()).sort((x, y) => (key(x) < key(y) ? -1 : 1));
      expect(rows).toEqual([
        { family: 'pic', model: 'pic-2', status: 'queued', count: 1, oldestCreatedAt: T + 4 },
        { family: 'pic', model: 'pic', status: 'processing', count: 1, oldestCreatedAt: T + 1 },
        { family: 'pic', model: 'pic', status: 'queued', count: 1, oldestCreatedAt: T + 3 },
        { family: 'videos', model: 'videos', status: 'queued', count: 1, oldestCreatedAt: T + 5 },
      ]);
    });

    it("countInFlight: a key's queued and processing tasks, at most upTo", async () => {
      const store = s();
      await insertTasks(
        store.tasks,
        [0, 1, 2, 3].map((i) => newTask({ ownerKeyId: 'key_if', createdAt: T + i })),
      );
      await insertTask(store.tasks, newTask({ ownerKeyId: 'key_other', createdAt: T + 10 }));
      expect(await store.tasks.countInFlight('key_if', 100)).toBe(4);
      expect(await store.tasks.countInFlight('key_if', 2)).toBe(2);
      expect(await store.tasks.countInFlight('key_none', 100)).toBe(0);
      const claimed = (await store.tasks.claimNext(['sandbox'], 'w1', T + 20, T + MINUTE))!; // key_if's oldest
      expect(claimed.ownerKeyId).toBe('key_if');
      expect(await store.tasks.countInFlight('key_if', 100)).toBe(4); // processing still counts
      await finish(store, claimed.id, 'w1', { status: 'completed', progress: 100, result: { files: [] }, finishedAt: T + 30 });
      expect(await store.tasks.countInFlight('key_if', 100)).toBe(3);
      expect(await store.tasks.countInFlight('key_other', 100)).toBe(1);
    });

    it("insertWithinBound leaves out the tasks past their key's bound (the call's own counted), inserting the rest", async () => {
      const store = s();
      await insertTasks(store.tasks, [newTask({ ownerKeyId: 'key_wb', createdAt: T }), newTask({ ownerKeyId: 'key_wb', createdAt: T + 1 })]);
      const batch = [
        newTask({ ownerKeyId: 'key_wb', createdAt: T + 2 }),
        newTask({ ownerKeyId: 'key_wc', createdAt: T + 3 }),
        newTask({ ownerKeyId: 'key_wb', createdAt: T + 4 }),
        newTask({ ownerKeyId: 'key_wb', createdAt: T + 5 }),
      ];
      const records = await store.tasks.insertWithinBound(batch, bound(3));
      expect(records.map((r) => ('refused' in r ? r : r.id))).toEqual([batch[0]!.id, batch[1]!.id, { refused: 'in_flight' }, { refused: 'in_flight' }]);
      for (const r of records) if (!('refused' in r)) expect(await store.tasks.get(r.id)).toEqual(r);
      expect(await store.tasks.get(batch[2]!.id)).toBeUndefined();
      expect(await store.tasks.countInFlight('key_wb', 100)).toBe(3);
      // a finished task frees its place; 0 means no bound
      const claimed = (await store.tasks.claimNext(['sandbox'], 'w1', T + 20, T + MINUTE))!;
      await finish(store, claimed.id, 'w1', { status: 'failed', error: 'boom', finishedAt: T + 30 });
      const more = await store.tasks.insertWithinBound(
        [newTask({ ownerKeyId: claimed.ownerKeyId, createdAt: T + 40 }), newTask({ ownerKeyId: claimed.ownerKeyId, createdAt: T + 41 })],
        bound(3),
      );
      expect(more.filter(inserted)).toHaveLength(1);
      expect((await store.tasks.insertWithinBound([newTask({ ownerKeyId: 'key_wb', createdAt: T + 50 })], bound(0))).filter(inserted)).toHaveLength(1);
      expect(await store.tasks.insertWithinBound([], bound(3))).toEqual([]);
    });

    it('concurrent insertWithinBound calls of one key never pass the bound together', async () => {
      const store = s();
      const calls = Array.from({ length: 8 }, (_, i) =>
        store.tasks.insertWithinBound(
          [newTask({ ownerKeyId: 'key_race', createdAt: T + 2 * i }), newTask({ ownerKeyId: 'key_race', createdAt: T + 2 * i + 1 })],
          bound(5),
        ),
      );
      expect((await Promise.all(calls)).flat().filter(inserted)).toHaveLength(5);
      expect(await store.tasks.countInFlight('key_race', 100)).toBe(5);
    });
  });

  describe('tasks: poll reads and change notification (getOwnedByKeyHash, watchChanges, changedElsewhere)', () => {
    const s = useStore(open);
    const key = (id: string, hash: string) => ({ id, name: id, accountId: `acct_${id}`, prefix: `mg_${id}`, createdAt: T, revokedAt: null, hash });

    it('reads a task by the hash of its active owner key only', async () => {
      const store = s();
      await store.keys.insert(key('key_a', 'hash-a'));
      await store.keys.insert(key('key_b', 'hash-b'));
      const t = await insertTask(store.tasks, newTask({ ownerKeyId: 'key_a' }));
      expect(await store.tasks.getOwnedByKeyHash(t.id, 'hash-a')).toEqual(await store.tasks.get(t.id));
      expect(await store.tasks.getOwnedByKeyHash(t.id, 'hash-b')).toBeUndefined();
      expect(await store.tasks.getOwnedByKeyHash(t.id, 'hash-unknown')).toBeUndefined();
      expect(await store.tasks.getOwnedByKeyHash('task_missing', 'hash-a')).toBeUndefined();
      await store.keys.revoke('key_a', T + 1);
      expect(await store.tasks.getOwnedByKeyHash(t.id, 'hash-a')).toBeUndefined();
    });

    it('a poll read sees every change made since the previous one', async () => {
      const store = s();
      await store.keys.insert(key('key_a', 'hash-a'));
      const t = await insertTask(store.tasks, newTask({ ownerKeyId: 'key_a' }));
      const poll = () => store.tasks.getOwnedByKeyHash(t.id, 'hash-a');
      expect((await poll())?.status).toBe('queued');
      await store.tasks.claimNext(['sandbox'], 'w1', T, T + MINUTE);
      expect((await poll())?.status).toBe('processing');
      await store.tasks.setProgress(t.id, 'w1', 40);
      expect((await poll())?.progress).toBe(40);
      await finish(store, t.id, 'w1', { status: 'completed', progress: 100, result: { files: [] }, finishedAt: T + 1, expiresAt: T + 99 });
      expect(await poll()).toMatchObject({ status: 'completed', expiresAt: T + 99 });
      await store.tasks.clearExpiry(t.id);
      expect((await poll())?.expiresAt).toBeNull();
      await store.tasks.delete(t.id);
      expect(await poll()).toBeUndefined();
    });

    it('tells watchers about each task it changes, after the change, and not about refused changes', async () => {
      const store = s();
      const t = await insertTask(store.tasks, newTask());
      const seen: Array<Promise<[string, string | undefined]>> = [];
      const stop = store.tasks.watchChanges((id) => {
        seen.push(store.tasks.get(id).then((r) => [id, r?.status]));
      });
      await store.tasks.claimNext(['sandbox'], 'w1', T, T + MINUTE);
      await finish(store, t.id, 'w1', { status: 'completed', progress: 100, result: { files: [] }, finishedAt: T });
      expect(await store.tasks.updateIf(t.id, { statusIn: ['processing'], leaseOwner: 'w1' }, { status: 'failed' })).toBeUndefined();
      stop();
      // each read finishes before the delete below (on PostgreSQL they run on other pooled connections)
      const statuses = await Promise.all(seen);
      await store.tasks.delete(t.id); // after stop(): no watcher is told
      expect(seen).toHaveLength(2);
      expect(statuses).toEqual([
        [t.id, 'processing'],
        [t.id, 'completed'],
      ]);
      // an optional capability (the embedded store's): where present, nobody else wrote to this database
      if (store.tasks.changedElsewhere) expect(store.tasks.changedElsewhere()).toBe(false);
    });
  });
}
