/**
 * Store contract, TaskStore part 1: records, claiming (`claimNext`, `nextRunAfter`) and the
 * conditional update every state change is made of (`updateIf`).
 */
import { describe, expect, it } from 'vitest';
import type { TaskResult } from '../../src/store/types.js';
import { MINUTE, T, newTask, useStore, type OpenStore } from './store-contract-helpers.js';
import { countTasksByStatus, insertTask, insertTasks } from '../helpers/task-rows.js';

export function taskRecordsContract(open: OpenStore): void {
  describe('tasks: records (insert, insertMany, get, getOwned)', () => {
    const s = useStore(open);

    it('insert answers the task as stored: queued, no progress, no lease, not finished', async () => {
      const store = s();
      const input = newTask({ ownerKeyId: 'key_a', family: 'clip', form: 'B', model: 'clip_3_1_pro', amount: 20, createdAt: T });
      const t = await insertTask(store.tasks, input);
      expect(t).toMatchObject({
        id: input.id,
        ownerKeyId: 'key_a',
        family: 'clip',
        form: 'B',
        model: 'clip_3_1_pro',
        provider: 'sandbox',
        amount: 20,
        createdAt: T,
        status: 'queued',
        progress: 0,
        result: null,
        error: null,
        attempts: 0,
        serverFaults: 0,
        startedAt: null,
        finishedAt: null,
        leaseOwner: null,
        leaseExpiresAt: null,
        expiresAt: null,
      });
      expect(t.request).toEqual(input.request);
      expect(t.runAfter).toBeLessThanOrEqual(T); // claimable at once
      expect(await store.tasks.get(t.id)).toEqual(t);
    });

    it('keeps the request exactly as given (nested JSON, unicode, null, booleans)', async () => {
      const store = s();
      const request = {
        params: { prompt: '狐 in the snow "quoted" \\ back\nslash 😀', seed: -1, tools: [{ a: null, b: [1, 2.5] }], audio: true },
        output: { kind: 'video' as const, width: 64, height: 36, durationSec: 2, fps: 24, audio: true },
        media: { images: [], videos: [], audios: [] },
      };
      const t = await insertTask(store.tasks, newTask({ request }));
      expect((await store.tasks.get(t.id))?.request).toEqual(request);
    });

    it('get and getOwned: an unknown id reads nothing, another owner reads nothing', async () => {
      const store = s();
      const t = await insertTask(store.tasks, newTask({ ownerKeyId: 'key_a' }));
      expect((await store.tasks.getOwned(t.id, 'key_a'))?.id).toBe(t.id);
      expect(await store.tasks.getOwned(t.id, 'key_b')).toBeUndefined();
      expect(await store.tasks.get('task_missing')).toBeUndefined();
      expect(await store.tasks.getOwned('task_missing', 'key_a')).toBeUndefined();
    });

    it('a second task with an existing id is refused and the first is unchanged', async () => {
      const store = s();
      const t = await insertTask(store.tasks, newTask({ amount: 1 }));
      await expect(insertTask(store.tasks, { ...newTask({ amount: 99 }), id: t.id })).rejects.toThrow(); // a rejection, never a synchronous throw
      expect((await store.tasks.get(t.id))?.amount).toBe(1);
    });

    it('insertMany inserts all in order, or none when one cannot be inserted', async () => {
      const store = s();
      const batch = [newTask(), newTask(), newTask()];
      const records = await insertTasks(store.tasks, batch);
      expect(records.map((r) => r.id)).toEqual(batch.map((t) => t.id));
      for (const r of records) expect(await store.tasks.get(r.id)).toEqual(r);
      const fresh = newTask();
      await expect(insertTasks(store.tasks, [fresh, { ...batch[0]! }])).rejects.toThrow();
      expect(await store.tasks.get(fresh.id)).toBeUndefined();
      expect(await insertTasks(store.tasks, [])).toEqual([]);
    });

    it('concurrent insertMany calls: each answers its own records and stays all or none, whatever the others do (G194)', async () => {
      const store = s();
      const taken = await insertTask(store.tasks, newTask());
      const batches = [
        [newTask(), newTask({ ownerKeyId: 'key_b' })],
        [newTask(), { ...newTask(), id: taken.id }], // cannot be inserted: nothing of it may be
        [newTask({ ownerKeyId: 'key_b' })],
        Array.from({ length: 1500 }, () => newTask()), // more than one statement takes
        [newTask()],
      ];
      const settled = await Promise.allSettled(batches.map((b) => insertTasks(store.tasks, b)));
      expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
      settled.forEach((r, i) => {
        if (r.status === 'fulfilled') expect(r.value.map((t) => t.id)).toEqual(batches[i]!.map((t) => t.id));
      });
      expect(await store.tasks.get(batches[1]![0]!.id)).toBeUndefined();
      for (const i of [0, 2, 3, 4]) for (const t of [batches[i]![0]!, batches[i]!.at(-1)!]) expect((await store.tasks.get(t.id))?.status).toBe('queued');
      expect((await countTasksByStatus(store.tasks)).queued).toBe(1 + 2 + 1 + 1500 + 1);
    });
  });

  describe('tasks: claiming (claimNext, nextRunAfter)', () => {
    const s = useStore(open);

    it('claims the oldest queued task of the given providers: processing, leased, one attempt', async () => {
      const store = s();
      const a = await insertTask(store.tasks, newTask({ createdAt: T + 1 }));
      const b = await insertTask(store.tasks, newTask({ createdAt: T + 2 }));
      const other = await insertTask(store.tasks, newTask({ createdAt: T, provider: 'other' }));
      const claimed = await store.tasks.claimNext(['sandbox'], 'w1', T + 10, T + 10 + MINUTE);
      expect(claimed).toMatchObject({ id: a.id, status: 'processing', leaseOwner: 'w1', leaseExpiresAt: T + 10 + MINUTE, attempts: 1, startedAt: T + 10 });
      expect(await store.tasks.get(a.id)).toEqual(claimed);
      expect((await store.tasks.claimNext(['sandbox'], 'w2', T + 10, T + 10 + MINUTE))?.id).toBe(b.id);
      expect(await store.tasks.claimNext(['sandbox'], 'w3', T + 10, T + 10 + MINUTE)).toBeUndefined();
      expect((await store.tasks.claimNext(['nobody', 'other'], 'w3', T + 10, T + 10 + MINUTE))?.id).toBe(other.id);
      expect(await store.tasks.claimNext([], 'w3', T + 10, T + 10 + MINUTE)).toBeUndefined();
    });

    it('never hands one task to two workers', async () => {
      const store = s();
      const ids = (
        await insertTasks(
          store.tasks,
          Array.from({ length: 5 }, (_, i) => newTask({ createdAt: T + i })),
        )
      ).map((t) => t.id);
      const claims = [];
      for (let i = 0; i < 8; i++) claims.push(await store.tasks.claimNext(['sandbox'], `w${i}`, T + 10, T + MINUTE));
      expect(claims.slice(0, 5).map((c) => c?.id)).toEqual(ids);
      expect(claims.slice(5)).toEqual([undefined, undefined, undefined]);
    });

    it("claims are fair between keys: a key that joins behind another key's backlog is served at the next claim (G85)", async () => {
      const store = s();
      const backlog = (
        await insertTasks(
          store.tasks,
          Array.from({ length: 50 }, (_, i) => newTask({ ownerKeyId: 'key_busy', createdAt: T + i })),
        )
      ).map((t) => t.id);
      const claim = async () => (await store.tasks.claimNext(['sandbox'], 'w', T + 1000, T + MINUTE))!;
      expect((await claim()).id).toBe(backlog[0]);
      expect((await claim()).id).toBe(backlog[1]);
      const late = await insertTask(store.tasks, newTask({ ownerKeyId: 'key_late', createdAt: T + 500 }));
      expect((await claim()).id).toBe(late.id); // the next claim, ahead of the 48 still waiting
      // the backlog then continues in its own order
      const rest: string[] = [];
      for (
        let c = await store.tasks.claimNext(['sandbox'], 'w', T + 1000, T + MINUTE);
        c;
        c = await store.tasks.claimNext(['sandbox'], 'w', T + 1000, T + MINUTE)
      )
        rest.push(c.id);
      expect(rest).toEqual(backlog.slice(2));
    });

    it("keys with backlogs take turns; each key's tasks keep their order", async () => {
      const store = s();
      // submitted one key after the other: first come, first served would run all of a, then b, then c
      const mk = (key: string, n: number, from: number) => Array.from({ length: n }, (_, i) => newTask({ ownerKeyId: key, createdAt: T + from + i }));
      const a = (await insertTasks(store.tasks, mk('key_a', 4, 0))).map((t) => t.id);
      const b = (await insertTasks(store.tasks, mk('key_b', 4, 10))).map((t) => t.id);
      const c = (await insertTasks(store.tasks, mk('key_c', 2, 20))).map((t) => t.id);
      const order: string[] = [];
      for (
        let x = await store.tasks.claimNext(['sandbox'], 'w', T + 100, T + MINUTE);
        x;
        x = await store.tasks.claimNext(['sandbox'], 'w', T + 100, T + MINUTE)
      )
        order.push(x.id);
      expect(order).toEqual([a[0], b[0], c[0], a[1], b[1], c[1], a[2], b[2], a[3], b[3]]);
    });

    it('a task back in the queue (retry) keeps its turn: it goes before tasks submitted after it', async () => {
      const store = s();
      const first = await insertTask(store.tasks, newTask({ createdAt: T }));
      await store.tasks.claimNext(['sandbox'], 'w1', T + 10, T + MINUTE);
      const later = await insertTask(store.tasks, newTask({ createdAt: T + 20 }));
      await store.tasks.updateIf(
        first.id,
        { statusIn: ['processing'], leaseOwner: 'w1' },
        { status: 'queued', leaseOwner: null, leaseExpiresAt: null, runAfter: T + 30 },
      );
      expect((await store.tasks.claimNext(['sandbox'], 'w2', T + 40, T + MINUTE))?.id).toBe(first.id);
      expect((await store.tasks.claimNext(['sandbox'], 'w2', T + 40, T + MINUTE))?.id).toBe(later.id);
    });

    it('a task requeued with a runAfter is claimable from that time on; nextRunAfter names the earliest', async () => {
      const store = s();
      const a = await insertTask(store.tasks, newTask({ createdAt: T + 1 }));
      const b = await insertTask(store.tasks, newTask({ createdAt: T + 2 }));
      expect(await store.tasks.nextRunAfter(['other'])).toBeUndefined();
      for (const w of ['w1', 'w2']) await store.tasks.claimNext(['sandbox'], w, T + 10, T + MINUTE);
      expect(await store.tasks.nextRunAfter(['sandbox'])).toBeUndefined(); // nothing queued
      const requeue = { status: 'queued', leaseOwner: null, leaseExpiresAt: null } as const;
      await store.tasks.updateIf(a.id, { statusIn: ['processing'], leaseOwner: 'w1' }, { ...requeue, runAfter: T + 5000 });
      await store.tasks.updateIf(b.id, { statusIn: ['processing'], leaseOwner: 'w2' }, { ...requeue, runAfter: T + 3000 });
      expect(await store.tasks.nextRunAfter(['sandbox'])).toBe(T + 3000);
      expect(await store.tasks.nextRunAfter(['other'])).toBeUndefined();
      expect(await store.tasks.claimNext(['sandbox'], 'w3', T + 2999, T + MINUTE)).toBeUndefined();
      const again = await store.tasks.claimNext(['sandbox'], 'w3', T + 3000, T + 3000 + MINUTE);
      expect(again).toMatchObject({ id: b.id, attempts: 2, startedAt: T + 10, leaseOwner: 'w3' }); // startedAt: the first claim
      expect(await store.tasks.nextRunAfter(['sandbox'])).toBe(T + 5000);
      expect(await store.tasks.claimNext(['sandbox'], 'w3', T + 4999, T + MINUTE)).toBeUndefined();
      expect((await store.tasks.claimNext(['sandbox'], 'w3', T + 5000, T + MINUTE))?.id).toBe(a.id);
    });

    it('nextRunAfter: the earliest over several providers, of queued tasks and of waiting checks alike', async () => {
      const store = s();
      const queued = await insertTask(store.tasks, newTask({ provider: 'p1' }));
      await store.tasks.updateIf(queued.id, { statusIn: ['queued'] }, { runAfter: T + 7000 });
      const check = await insertTask(store.tasks, newTask({ provider: 'p2' }));
      await store.tasks.claimNext(['p2'], 'w1', T, T + MINUTE);
      // a generation at an upstream, its check due at T + 4000: processing, unleased
      await store.tasks.updateIf(check.id, { statusIn: ['processing'], leaseOwner: 'w1' }, { leaseOwner: null, leaseExpiresAt: null, runAfter: T + 4000 });
      expect(await store.tasks.nextRunAfter(['p1'])).toBe(T + 7000);
      expect(await store.tasks.nextRunAfter(['p2'])).toBe(T + 4000);
      expect(await store.tasks.nextRunAfter(['p1', 'p2'])).toBe(T + 4000);
      expect(await store.tasks.nextRunAfter(['p3', 'p1'])).toBe(T + 7000);
      expect(await store.tasks.nextRunAfter(['p3'])).toBeUndefined();
    });
  });

  describe('tasks: conditional updates (updateIf)', () => {
    const s = useStore(open);
    const result: TaskResult = {
      files: [{ name: 'video.1a2b3c4d.mp4', contentType: 'video/mp4', bytes: 12345, width: 1280, height: 720, duration: 8 }],
      actualDuration: 8,
      sourceUrls: ['https://upstream.example/v.mp4'],
    };

    it('applies the patch only while the status is one of statusIn, and answers the updated task', async () => {
      const store = s();
      const t = await insertTask(store.tasks, newTask());
      expect(await store.tasks.updateIf(t.id, { statusIn: ['processing'] }, { status: 'cancelled' })).toBeUndefined();
      expect((await store.tasks.get(t.id))?.status).toBe('queued');
      const cancelled = await store.tasks.updateIf(
        t.id,
        { statusIn: ['queued', 'processing'] },
        { status: 'cancelled', finishedAt: T + 1, expiresAt: T + 99, error: null },
      );
      expect(cancelled).toMatchObject({ id: t.id, status: 'cancelled', finishedAt: T + 1, expiresAt: T + 99, error: null });
      expect(await store.tasks.get(t.id)).toEqual(cancelled);
      expect(await store.tasks.updateIf(t.id, { statusIn: ['queued', 'processing'] }, { status: 'cancelled' })).toBeUndefined();
      expect(await store.tasks.updateIf('task_missing', { statusIn: ['queued'] }, { status: 'cancelled' })).toBeUndefined();
    });

    it('with leaseOwner: only the worker holding the lease; a result is stored whole', async () => {
      const store = s();
      const t = await insertTask(store.tasks, newTask());
      await store.tasks.claimNext(['sandbox'], 'w1', T, T + MINUTE);
      const done = {
        status: 'completed',
        progress: 100,
        result,
        error: null,
        finishedAt: T + 5,
        leaseOwner: null,
        leaseExpiresAt: null,
        expiresAt: T + 100,
      } as const;
      expect(await store.tasks.updateIf(t.id, { statusIn: ['processing'], leaseOwner: 'w2' }, done)).toBeUndefined();
      expect(await store.tasks.get(t.id)).toMatchObject({ status: 'processing', leaseOwner: 'w1', result: null });
      const completed = await store.tasks.updateIf(t.id, { statusIn: ['processing'], leaseOwner: 'w1' }, done);
      expect(completed).toMatchObject({ ...done, attempts: 1 });
      expect((await store.tasks.get(t.id))?.result).toEqual(result);
      expect(await store.tasks.updateIf(t.id, { statusIn: ['processing'], leaseOwner: 'w1' }, { status: 'failed', error: 'late' })).toBeUndefined();
      expect(await store.tasks.get(t.id)).toMatchObject({ status: 'completed', error: null });
    });

    it('with leaseExpiredBefore: only while the lease ran out before that time', async () => {
      const store = s();
      const t = await insertTask(store.tasks, newTask());
      await store.tasks.claimNext(['sandbox'], 'w1', T, T + 100);
      const recover = { status: 'queued', leaseOwner: null, leaseExpiresAt: null, runAfter: T + 100 } as const;
      expect(await store.tasks.updateIf(t.id, { statusIn: ['processing'], leaseOwner: 'w1', leaseExpiredBefore: T + 100 }, recover)).toBeUndefined();
      expect(await store.tasks.updateIf(t.id, { statusIn: ['processing'], leaseOwner: 'w2', leaseExpiredBefore: T + 101 }, recover)).toBeUndefined();
      expect(await store.tasks.updateIf(t.id, { statusIn: ['processing'], leaseOwner: 'w1', leaseExpiredBefore: T + 101 }, recover)).toMatchObject({
        status: 'queued',
        leaseOwner: null,
        leaseExpiresAt: null,
        runAfter: T + 100,
        attempts: 1,
      });
    });

    it('with unleased and upstreamId: only while no worker holds it and its generation at the upstream is that one', async () => {
      const store = s();
      const t = await insertTask(store.tasks, newTask());
      await store.tasks.claimNext(['sandbox'], 'w1', T, T + MINUTE);
      const soon = { runAfter: T + 1 } as const;
      const guard = { statusIn: ['processing'] as const, unleased: true, upstreamId: 'pred_1' };
      // leased (a start or a check in progress), and no generation yet
      expect(await store.tasks.updateIf(t.id, guard, soon)).toBeUndefined();
      const upstream = { generation: 0, provider: 'sandbox', ref: { id: 'pred_1', data: { kind: 'image' } }, startedAt: T, checkFailures: 0 };
      await store.tasks.updateIf(
        t.id,
        { statusIn: ['processing'], leaseOwner: 'w1' },
        { upstream, leaseOwner: null, leaseExpiresAt: null, runAfter: T + 3_600_000 },
      );
      expect(await store.tasks.updateIf(t.id, { ...guard, upstreamId: 'pred_other' }, soon)).toBeUndefined();
      expect(await store.tasks.updateIf(t.id, guard, soon)).toMatchObject({ status: 'processing', runAfter: T + 1, leaseOwner: null, upstream });
      // claimed for that check: leased again
      await store.tasks.claimNext(['sandbox'], 'w2', T + 1, T + MINUTE);
      expect(await store.tasks.updateIf(t.id, guard, { runAfter: T + 2 })).toBeUndefined();
      expect((await store.tasks.get(t.id))?.runAfter).toBe(T + 1);
    });

    it('sets attempts as given (a graceful shutdown gives the attempt back)', async () => {
      const store = s();
      const t = await insertTask(store.tasks, newTask());
      await store.tasks.claimNext(['sandbox'], 'w1', T, T + MINUTE);
      expect(
        await store.tasks.updateIf(
          t.id,
          { statusIn: ['processing'], leaseOwner: 'w1' },
          { status: 'queued', leaseOwner: null, leaseExpiresAt: null, attempts: 0, runAfter: T },
        ),
      ).toMatchObject({ status: 'queued', attempts: 0 });
      expect(await store.tasks.claimNext(['sandbox'], 'w2', T + 1, T + MINUTE)).toMatchObject({ id: t.id, attempts: 1 });
    });
  });
}
