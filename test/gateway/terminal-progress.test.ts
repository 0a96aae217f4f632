import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelTask, claimNextTask, failLapsedTask, failTask } from '../../src/tasks/states.js';
import type { TaskRecord } from '../../src/store/types.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { body } from '../helpers/json.js';

// A task that ended, whichever way, reports progress 100: nothing more will happen (G117).
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false });
});
afterAll(async () => {
  await h.close();
});

async function createAt40(): Promise<TaskRecord> {
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/motion/videos',
    headers: h.auth(),
    payload: { model: 'motion_2_0', content: [{ type: 'text', text: 'a fox' }] },
  });
  const id = body(res).id as string;
  for (;;) {
    const t = await claimNextTask(h.store.tasks, ['sandbox'], 'w-test', 60_000);
    if (!t) throw new Error(`task ${id} was not claimable`);
    if (t.id === id) {
      expect(await h.store.tasks.setProgress(id, 'w-test', 40)).toBe(true);
      return (await h.store.tasks.get(id))!;
    }
  }
}

const query = async (id: string) => body(await h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth() }));

describe('progress of a task that did not complete', () => {
  it.each([
    ['failed by its worker', (t: TaskRecord) => failTask(h.store.tasks, t, 'w-test', 'boom', null), 'failed'],
    ['failed after its worker stopped answering', (t: TaskRecord) => failLapsedTask(h.store.tasks, t, 'gave up', null, t.leaseExpiresAt! + 1), 'failed'],
    ['cancelled while processing', (t: TaskRecord) => cancelTask(h.store.tasks, t, null), 'cancelled'],
  ])('%s: 100, in the store and in the query reply', async (_what, end, status) => {
    const task = await createAt40();
    expect((await query(task.id)).progress).toBe(40);
    expect(await end(task)).toMatchObject({ status, progress: 100 });
    expect(await query(task.id)).toMatchObject({ status, progress: 100 });
  });

  it('cancelled while queued: 100 too', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/motion/videos',
      headers: h.auth(),
      payload: { model: 'motion_2_0', content: [{ type: 'text', text: 'queued' }] },
    });
    const id = body(res).id as string;
    const cancelled = await h.app.inject({ method: 'POST', url: `/v1/motion/videos/${id}/cancel`, headers: h.auth() });
    expect(body(cancelled)).toMatchObject({ status: 'cancelled', progress: 100 });
  });

  it('a worker reporting progress after the cancel changes nothing', async () => {
    const task = await createAt40();
    await cancelTask(h.store.tasks, task, null);
    expect(await h.store.tasks.setProgress(task.id, 'w-test', 90)).toBe(false);
    expect((await h.store.tasks.get(task.id))!.progress).toBe(100);
  });
});
