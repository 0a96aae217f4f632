/**
 * Failover at create (G89, G90), gateway to gateway: a relaying mediagate routes every
 * model to relay channel `a`, then `b`, each an upstream mediagate behind a fault proxy. When `a`
 * refuses connections or answers 503 to creates, tasks of every kind complete on `b`: one create
 * there under the task's own Idempotency-Key, nothing accepted at `a`, no check ever sent to `a`,
 * and no attempt used for the refusal. (Circuits stay closed here: they have a file of their own.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskRecord } from '../../../src/store/types.js';
import { startRelayCandidates, type RelayCandidates } from '../../helpers/relay-candidates.js';

let r: RelayCandidates;
beforeAll(async () => {
  // circuits that never open in this file: every create tries `a` first
  r = await startRelayCandidates({ relaying: { breaker: { failuresToOpen: 1_000, openMs: 60_000, maxOpenMs: 60_000 } } });
}, 60_000);
afterAll(async () => {
  await r?.close();
});

/** One task of each kind: an image, a Model Center image, and two video families. */
const TASKS: Array<[string, string, Record<string, unknown>]> = [
  ['pic', '/v1/pic/images', { model: 'pic', prompt: 'a fox in the snow' }],
  ['Model Center image', '/v2/model-center/tasks', { model: 'imagegen-5.0', prompt: 'a cat', size: '640x480' }],
  ['motion', '/v1/motion/videos', { model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: 'a dog runs' }], duration: 1, ratio: '1:1' }], // the smallest video the family accepts (G417)
  ['videos', '/v1/videos/videos', { model: 'videos_fast', prompt: 'a lake', duration: 4, ratio: '9:16' }],
];

/** Submits every kind of task through the relaying gateway (each accepted with 200) and waits for them. */
async function submitAll(): Promise<TaskRecord[]> {
  const ids = await Promise.all(
    TASKS.map(async ([kind, path, body]) => {
      const created = await r.call('POST', path, body);
      expect(created.status, `${kind}: ${created.text}`).toBe(200);
      return (created.json.id ?? created.json.data?.projectId) as string;
    }),
  );
  return Promise.all(ids.map((id) => r.relaying.waitForTask(id, undefined, 45_000)));
}

/** Each task completed on `b` with its first attempt, from one create there under its own key. */
async function expectCompletedOnB(tasks: TaskRecord[]): Promise<void> {
  for (const task of tasks) {
    expect(task, task.error ?? '').toMatchObject({
      status: 'completed',
      provider: 'b',
      attempts: 1,
      serverFaults: 0,
      upstream: { provider: 'b', generation: 0 },
    });
    const creates = r.b.creates().filter((c) => c.idempotencyKey === task.id);
    expect(creates).toHaveLength(1);
    expect(creates[0]!.targetStatus).toBe(200);
    expect(await r.b.upstream.store.tasks.get(task.upstream!.ref!.id)).toMatchObject({ status: 'completed', family: task.family });
    // every check of the generation went to `b`
    expect(r.b.about(task.upstream!.ref!.id).filter((q) => q.method === 'GET').length).toBeGreaterThan(0);
  }
}

describe('the first candidate fails, the second takes the task', () => {
  it('refusing connections: every kind of task completes on the second; the first never got a request', async () => {
    await r.a.proxy.setDown(true);
    try {
      const tasks = await submitAll();
      await expectCompletedOnB(tasks);
      expect(r.a.proxy.requests).toEqual([]);
      expect(await r.a.upstreamTasks()).toBe(0);
    } finally {
      await r.a.proxy.setDown(false);
    }
  });

  it('answering 503 to creates: every kind of task completes on the second; the first accepted none and was never checked', async () => {
    const refuse = r.a.proxy.addRule({ match: { method: 'POST' }, fault: { status: 503 } });
    try {
      const tasks = await submitAll();
      await expectCompletedOnB(tasks);
      // each task was offered to `a` first, under the same key it was then created with at `b`
      for (const task of tasks) {
        const offered = r.a.creates().filter((c) => c.idempotencyKey === task.id);
        expect(offered).toHaveLength(1);
        expect(offered[0]).toMatchObject({ action: 'status', status: 503 });
        expect(offered[0]!.targetStatus).toBeUndefined();
      }
      expect(refuse.applied).toBe(TASKS.length);
      expect(r.a.proxy.requests.filter((q) => q.method !== 'POST')).toEqual([]);
      expect(await r.a.upstreamTasks()).toBe(0);
    } finally {
      refuse.remove();
    }
  });

  it('with the first candidate healthy again, new tasks go to it: failover is per create, not a lasting switch', async () => {
    const created = await r.call('POST', '/v1/pic/images', { model: 'pic', prompt: 'back on a' });
    expect(created.status).toBe(200);
    const task = await r.relaying.waitForTask(created.json.id as string);
    expect(task).toMatchObject({ status: 'completed', provider: 'a', attempts: 1 });
    expect(r.b.creates().filter((c) => c.idempotencyKey === task.id)).toEqual([]);
  });
});
