/**
 * Store contract, TaskStore part 3: the task list (`listTasks`, G216): one key's tasks newest
 * first, filters, keyset pages that stay stable while tasks are inserted.
 */
import { describe, expect, it } from 'vitest';
import type { Store, TaskRecord } from '../../src/store/types.js';
import { MINUTE, T, newTask, useStore, type OpenStore } from './store-contract-helpers.js';
import { insertTask, insertTasks } from '../helpers/task-rows.js';

const pos = (t: TaskRecord): { createdAt: number; id: string } => ({ createdAt: t.createdAt, id: t.id });

/** Every task of `owner` read page by page (`limit` each), as the route chains them. */
async function allPages(store: Store, owner: string, limit: number, between?: () => Promise<void>): Promise<TaskRecord[]> {
  const out: TaskRecord[] = [];
  let before: { createdAt: number; id: string } | undefined;
  for (;;) {
    const page = await store.tasks.listTasks({ ownerKeyId: owner, limit, ...(before && { before }) });
    out.push(...page);
    if (page.length < limit) return out;
    before = pos(page[page.length - 1]!);
    await between?.();
  }
}

export function taskListContract(open: OpenStore): void {
  describe('tasks: the list (listTasks)', () => {
    const s = useStore(open);

    it("one key's tasks only, newest first, ties in created_at broken by id (descending)", async () => {
      const store = s();
      const mine = await insertTasks(store.tasks, [
        newTask({ id: 'task_b', createdAt: T + 2 * MINUTE }),
        newTask({ id: 'task_a', createdAt: T + 2 * MINUTE }),
        newTask({ id: 'task_c', createdAt: T + MINUTE }),
        newTask({ id: 'task_d', createdAt: T + 3 * MINUTE }),
      ]);
      await insertTask(store.tasks, newTask({ id: 'task_other', ownerKeyId: 'key_b', createdAt: T + 2 * MINUTE }));
      const listed = await store.tasks.listTasks({ ownerKeyId: 'key_a', limit: 10 });
      expect(listed.map((t) => t.id)).toEqual(['task_d', 'task_b', 'task_a', 'task_c']);
      expect(listed.find((t) => t.id === 'task_b')).toEqual(mine[0]);
      expect((await store.tasks.listTasks({ ownerKeyId: 'key_b', limit: 10 })).map((t) => t.id)).toEqual(['task_other']);
      expect(await store.tasks.listTasks({ ownerKeyId: 'key_none', limit: 10 })).toEqual([]);
    });

    it('pages from a position: the items after it, at most limit', async () => {
      const store = s();
      await insertTasks(
        store.tasks,
        [1, 2, 3, 4, 5].map((i) => newTask({ id: `task_${i}`, createdAt: T + i })),
      );
      const first = await store.tasks.listTasks({ ownerKeyId: 'key_a', limit: 2 });
      expect(first.map((t) => t.id)).toEqual(['task_5', 'task_4']);
      const second = await store.tasks.listTasks({ ownerKeyId: 'key_a', limit: 2, before: pos(first[1]!) });
      expect(second.map((t) => t.id)).toEqual(['task_3', 'task_2']);
      // a position between two ties: only the lower id at that time follows
      await insertTask(store.tasks, newTask({ id: 'task_2b', createdAt: T + 2 }));
      expect((await store.tasks.listTasks({ ownerKeyId: 'key_a', limit: 5, before: { createdAt: T + 2, id: 'task_2b' } })).map((t) => t.id)).toEqual([
        'task_2',
        'task_1',
      ]);
      expect(await store.tasks.listTasks({ ownerKeyId: 'key_a', limit: 5, before: { createdAt: T, id: 'task_0' } })).toEqual([]);
    });

    it('filters: statuses, families, model, created after (exclusive), together', async () => {
      const store = s();
      await insertTasks(store.tasks, [
        newTask({ id: 'task_pic1', createdAt: T + 1 }),
        newTask({ id: 'task_clip', family: 'clip', form: 'A', model: 'clip-a', createdAt: T + 2 }),
        newTask({ id: 'task_pic2', model: 'pic-hd', createdAt: T + 3 }),
        newTask({ id: 'task_mc', family: 'model-center', model: 'sd', createdAt: T + 4 }),
      ]);
      await store.tasks.claimNext(['sandbox'], 'w1', T + 10, T + MINUTE); // task_pic1 (the oldest) is processing now
      await store.tasks.updateIf('task_mc', { statusIn: ['queued'] }, { status: 'cancelled', finishedAt: T + 11 });
      const ids = async (q: Parameters<Store['tasks']['listTasks']>[0]): Promise<string[]> => (await store.tasks.listTasks(q)).map((t) => t.id);
      const q = { ownerKeyId: 'key_a', limit: 10 };
      expect(await ids({ ...q, statuses: ['queued'] })).toEqual(['task_pic2', 'task_clip']);
      expect(await ids({ ...q, statuses: ['processing', 'cancelled'] })).toEqual(['task_mc', 'task_pic1']);
      expect(await ids({ ...q, statuses: ['completed'] })).toEqual([]);
      expect(await ids({ ...q, families: ['pic'] })).toEqual(['task_pic2', 'task_pic1']);
      expect(await ids({ ...q, families: ['clip', 'model-center'] })).toEqual(['task_mc', 'task_clip']);
      expect(await ids({ ...q, model: 'pic-hd' })).toEqual(['task_pic2']);
      expect(await ids({ ...q, createdAfter: T + 2 })).toEqual(['task_mc', 'task_pic2']);
      expect(await ids({ ...q, families: ['pic'], statuses: ['queued', 'processing'], createdAfter: T + 1 })).toEqual(['task_pic2']);
      expect(await ids({ ...q, families: ['pic'], limit: 1, before: { createdAt: T + 3, id: 'task_pic2' } })).toEqual(['task_pic1']);
      expect(await ids({ ...q, statuses: ['queued'], ownerKeyId: 'key_b' })).toEqual([]);
    });

    it('pages chained while tasks are inserted: every task that existed before is listed exactly once, in order', async () => {
      const store = s();
      const before = await insertTasks(
        store.tasks,
        Array.from({ length: 45 }, (_, i) => newTask({ id: `task_old_${String(i).padStart(2, '0')}`, createdAt: T + Math.floor(i / 3) })),
      );
      await insertTask(store.tasks, newTask({ id: 'task_theirs', ownerKeyId: 'key_b', createdAt: T + 5 }));
      let n = 0;
      // between pages: newer tasks of the same key, and one at the very time of the position already passed
      const listed = await allPages(store, 'key_a', 7, async () => {
        n++;
        await insertTasks(store.tasks, [
          newTask({ id: `task_new_${n}`, createdAt: T + MINUTE + n }),
          newTask({ id: `task_new_${n}b`, createdAt: T + MINUTE + n }),
        ]);
      });
      const old = listed.filter((t) => t.id.startsWith('task_old_'));
      expect(old.map((t) => t.id)).toEqual(before.map((t) => t.id).sort((a, b) => (a < b ? 1 : -1)));
      expect(new Set(listed.map((t) => t.id)).size).toBe(listed.length);
      expect(listed.every((t) => t.ownerKeyId === 'key_a')).toBe(true);
      for (let i = 1; i < listed.length; i++) {
        const [a, b] = [listed[i - 1]!, listed[i]!];
        expect(a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id)).toBe(true);
      }
    });
  });
}
