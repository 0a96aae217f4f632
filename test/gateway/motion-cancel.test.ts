import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimNextTask, completeTask, failTask } from '../../src/tasks/states.js';
import { hashApiKey } from '../../src/auth/keys.js';
import { mediaRefs } from '../../src/contract/media-refs.js';
import type { TaskRecord, TaskStore } from '../../src/store/types.js';
import { TaskService } from '../../src/tasks/service.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { body } from '../helpers/json.js';
import { insertTask } from '../helpers/task-rows.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false });
});
afterAll(async () => {
  await h.close();
});

const json = { 'content-type': 'application/json' };
const RESULT_SPEC = { kind: 'video', width: 1280, height: 720, durationSec: 5, fps: 24, audio: false } as const;
const RESULT = { files: [{ name: 'video.mp4', contentType: 'video/mp4', bytes: 1 }], actualDuration: 5 };

async function createMotion(key = h.key): Promise<string> {
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/motion/videos',
    headers: { ...h.auth(key), ...json },
    payload: JSON.stringify({ model: 'motion_2_0', content: [{ type: 'text', text: 'a fox' }] }),
  });
  expect(res.statusCode).toBe(200);
  return body(res).id as string;
}

const cancel = (id: string, key = h.key, extra: { headers?: Record<string, string>; payload?: string } = {}) =>
  h.app.inject({
    method: 'POST',
    url: `/v1/motion/videos/${id}/cancel`,
    headers: { ...h.auth(key), ...extra.headers },
    ...(extra.payload !== undefined && { payload: extra.payload }),
  });

/** Claims tasks until `id` is the one claimed (the store hands out the oldest first). */
async function claim(id: string): Promise<TaskRecord> {
  for (;;) {
    const t = await claimNextTask(h.store.tasks, ['sandbox'], 'w-test', 60_000);
    if (!t) throw new Error(`task ${id} was not claimable`);
    if (t.id === id) return t;
  }
}

function expectCancelledReply(res: Awaited<ReturnType<typeof cancel>>, id: string) {
  expect(res.statusCode).toBe(200);
  expect(body(res)).toEqual({
    id,
    object: 'video',
    created: expect.any(Number),
    model: 'motion_2_0',
    status: 'cancelled',
    progress: expect.any(Number),
    video_url: null,
    actualDuration: null,
    error: null,
    queue_reason: null,
  });
}

describe('motion cancel (D23)', () => {
  it('queued -> cancelled, and the query then says cancelled', async () => {
    const id = await createMotion();
    expectCancelledReply(await cancel(id), id);
    const q = await h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth() });
    expect(body(q)).toMatchObject({ id, status: 'cancelled', video_url: null, error: null });
    expect((await h.store.tasks.get(id))!.status).toBe('cancelled');
  });

  it('processing -> cancelled; a late completeTask is refused', async () => {
    const id = await createMotion();
    const claimed = await claim(id);
    expect(claimed.status).toBe('processing');
    expectCancelledReply(await cancel(id), id);
    expect(await completeTask(h.store.tasks, claimed, 'w-test', RESULT, Date.now() + 1000)).toBeUndefined();
    expect((await h.store.tasks.get(id))!.status).toBe('cancelled');
  });

  const finish: Record<string, (t: TaskRecord) => Promise<unknown>> = {
    completed: (t) => completeTask(h.store.tasks, t, 'w-test', RESULT, Date.now() + 1000),
    failed: (t) => failTask(h.store.tasks, t, 'w-test', 'boom', Date.now() + 1000),
  };
  it.each(['completed', 'failed'])('%s -> 409 invalid_task_state', async (state) => {
    const id = await createMotion();
    await finish[state]!(await claim(id));
    const res = await cancel(id);
    expect(res.statusCode).toBe(409);
    expect(body(res).error).toEqual({
      message: expect.stringMatching(new RegExp(`is ${state}; only queued or processing`)),
      type: 'conflict_error',
      param: 'id',
      code: 'invalid_task_state',
    });
    expect((await h.store.tasks.get(id))!.status).toBe(state);
  });

  it('cancelled -> 200 with the same task on a second cancel (idempotent, G113); nothing changes', async () => {
    const id = await createMotion();
    const first = await cancel(id);
    expectCancelledReply(first, id);
    const stored = (await h.store.tasks.get(id))!;
    const again = await cancel(id);
    expectCancelledReply(again, id);
    expect(again.body).toBe(first.body);
    expect(await h.store.tasks.get(id)).toEqual(stored);
    const both = await Promise.all([cancel(id), cancel(id)]);
    expect(both.map((r) => r.statusCode)).toEqual([200, 200]);
  });

  it('a cancel that loses the race to another cancel answers the cancelled task, not a 409', async () => {
    const id = 'task_race_of_two_cancels_0000000000';
    const owner = (await h.store.keys.findActiveByHash(hashApiKey(h.key)))!;
    await insertTask(h.store.tasks, {
      id,
      ownerKeyId: owner.id,
      family: 'motion',
      form: null,
      model: 'motion_2_0',
      provider: 'sandbox',
      request: { params: {}, output: RESULT_SPEC, media: mediaRefs() },
      amount: 1,
      createdAt: Date.now(),
    });
    const snapshot = (await h.store.tasks.get(id))!; // what the losing cancel read: still queued
    // the other cancel commits between that read and this one's conditional update
    const store: TaskStore = Object.create(h.store.tasks, { getOwned: { value: async () => snapshot } });
    const winner = new TaskService({ store: h.store.tasks, keys: h.store.keys, providers: undefined as never, videosResultTtlHours: 24 });
    const loser = new TaskService({ store, keys: h.store.keys, providers: undefined as never, videosResultTtlHours: 24 });
    const won = await winner.cancelOwnedTask(owner, id, 'motion');
    expect(won.status).toBe('cancelled');
    expect(await loser.cancelOwnedTask(owner, id, 'motion')).toEqual(won);
  });

  it("another key's task is a 404 and stays queued", async () => {
    const id = await createMotion(h.otherKey);
    const res = await cancel(id);
    expect(res.statusCode).toBe(404);
    expect(body(res).error).toMatchObject({ code: 'task_not_found', type: 'not_found_error' });
    expect((await h.store.tasks.get(id))!.status).toBe('queued');
  });

  it('an unknown id is a 404', async () => {
    const res = await cancel('task_doesnotexist000000000');
    expect(res.statusCode).toBe(404);
    expect(body(res).error.code).toBe('task_not_found');
  });

  it('a task of another family is a 409 and stays queued', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/pic/images',
      headers: { ...h.auth(), ...json },
      payload: JSON.stringify({ model: 'pic', prompt: 'x' }),
    });
    const id = body(res).id as string;
    const c = await cancel(id);
    expect(c.statusCode).toBe(409);
    expect(body(c).error).toMatchObject({ code: 'invalid_task_state', message: expect.stringMatching(/is a pic task; only motion tasks can be cancelled/) });
    expect((await h.store.tasks.get(id))!.status).toBe('queued');
  });

  it('needs the bearer key', async () => {
    const id = await createMotion();
    const res = await h.app.inject({ method: 'POST', url: `/v1/motion/videos/${id}/cancel` });
    expect(res.statusCode).toBe(401);
    expect((await h.store.tasks.get(id))!.status).toBe('queued');
  });

  it.each([
    ['no body, no content type', {}],
    ['empty body sent as application/json', { headers: json, payload: '' }],
    ['an empty JSON object', { headers: json, payload: '{}' }],
  ])('accepts %s', async (_name, extra) => {
    const id = await createMotion();
    expectCancelledReply(await cancel(id, h.key, extra), id);
  });

  it.each([
    ['an array', '[]', 'an array'],
    ['a string', '"x"', 'a string'],
    ['a number', '1', 'a number'],
    ['null', 'null', 'null'],
    ['true', 'true', 'a boolean'],
  ])('a JSON body that is %s is a 400 invalid_json, and the task stays queued', async (_name, payload, got) => {
    const id = await createMotion();
    const res = await cancel(id, h.key, { headers: json, payload });
    expect(res.statusCode).toBe(400);
    expect(body(res).error).toEqual({
      message: `The request body must be a JSON object (got ${got}); the cancel call needs no body, or {}`,
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_json',
    });
    expect((await h.store.tasks.get(id))!.status).toBe('queued');
  });

  it('a JSON object with fields is accepted; the fields are ignored', async () => {
    const id = await createMotion();
    expectCancelledReply(await cancel(id, h.key, { headers: json, payload: '{"reason":"changed my mind","force":true}' }), id);
  });

  it('a body that is not JSON is a 400', async () => {
    const id = await createMotion();
    const res = await cancel(id, h.key, { headers: json, payload: '{oops' });
    expect(res.statusCode).toBe(400);
    expect(body(res).error.code).toBe('invalid_json');
  });
});
