import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';
import { body } from '../helpers/json.js';
import { sortableTime } from '../../src/ids.js';
import { countTasksByStatus } from '../helpers/task-rows.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false });
});
afterAll(async () => {
  await h.close();
});

const submit = (prompt: string) => h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: h.auth(), payload: { model: 'pic', prompt } });

describe('group commit of concurrent submits', () => {
  it('commits a burst in few transactions, and every answered task is stored', async () => {
    const spy = vi.spyOn(h.store.tasks, 'insertWithinBound');
    const replies = await Promise.all(Array.from({ length: 60 }, (_, i) => submit(`burst ${i}`)));
    expect(replies.every((r) => r.statusCode === 200)).toBe(true);
    const ids = replies.map((r) => body(r).id as string);
    expect(new Set(ids).size).toBe(60);
    for (const [i, id] of ids.entries()) expect((await h.store.tasks.get(id))?.request).toMatchObject({ params: { prompt: `burst ${i}` } });
    expect(spy.mock.calls.length).toBeLessThan(60);
    // each id carries the millisecond of its task's created_at (one clock read per submit)
    for (const id of ids) expect(id.slice(5, 13)).toBe(sortableTime((await h.store.tasks.get(id))!.createdAt));
    spy.mockRestore();
  });

  it('a failed commit answers every request of the batch with a 500 and stores none of them', async () => {
    const countTasks = async () => Object.values(await countTasksByStatus(h.store.tasks)).reduce((a, b) => a + b, 0);
    const before = await countTasks();
    // The commit fails inside the real transaction, after some of the batch's rows are written:
    // the batch is written again with its first task once more at the end, so the last row breaks
    // the primary key. One transaction means none of the rows stays.
    const insert = h.store.tasks.insertWithinBound.bind(h.store.tasks);
    const spy = vi.spyOn(h.store.tasks, 'insertWithinBound').mockImplementationOnce((tasks, bound) => insert([...tasks, tasks[0]!], bound));
    const replies = await Promise.all([submit('a'), submit('b')]);
    expect(replies.map((r) => r.statusCode)).toEqual([500, 500]);
    expect(body(replies[0]!).error.code).toBe('internal_error');
    expect(body(replies[0]!).error.message).not.toMatch(/constraint/i); // the cause is logged, not shown
    // Both submits were one batch: one insert call (one transaction) with both tasks.
    expect(spy.mock.calls).toHaveLength(1);
    const batch = spy.mock.calls[0]![0];
    expect(batch.map((t) => (t.request.params as { prompt?: string }).prompt)).toEqual(['a', 'b']);
    // And none of them was stored.
    for (const t of batch) expect(await h.store.tasks.get(t.id)).toBeUndefined();
    expect(await countTasks()).toBe(before);
    spy.mockRestore();
    const after = await submit('c');
    expect(after.statusCode).toBe(200);
    expect((await h.store.tasks.get(body(after).id as string))?.request).toMatchObject({ params: { prompt: 'c' } });
    expect(await countTasks()).toBe(before + 1);
  });
});
